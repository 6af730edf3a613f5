//===- runtime/Runtime.h - Process-wide state of libcausal_rt --------------===//
//
// The state the runtime's rooms share: start-up and registration
// (Runtime.cpp), thread lifecycle (Threads.cpp), fork (Fork.cpp), process
// end and signals (ProcessEnd.cpp), the Coz entry points (CozApi.cpp). The
// sampler and the experiments do not reach in here: they are given what
// they need at start-up (SamplerSetup, ExperimentSetup).
//
// Everything is constant-initialized (no static constructors, no
// destructors): image constructors may register modules before the
// runtime's own constructor runs, and signal handlers may still run while
// the process exits.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_RUNTIME_H
#define CAUSAL_RUNTIME_RUNTIME_H

#include "ModuleRegistry.h"
#include "SampleLog.h"
#include "Settings.h"
#include "Support.h"
#include "ThreadState.h"

#include <atomic>
#include <stdint.h>

namespace causal::rt {

/// 0 = not initialized yet, 1 = profiling, 2 = disabled/failed (inert).
enum RuntimeStatus : uint32_t { kUninitialized = 0, kActive = 1, kInert = 2 };

extern std::atomic<uint32_t> g_status;
extern RuntimeConfig g_config;
extern ModuleRegistry g_modules;
extern ThreadRegistry g_threads;
extern SampleLog g_sample_log;

/// Says once per process that a grace period (waitForReaders) was given up:
/// |what| goes on without waiting ("the image is unloaded", ...).
void sayGracePeriodGivenUp(const char *what);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_RUNTIME_H
