//===- runtime/Runtime.h - Process-wide state of libcausal_rt --------------===//
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
#include "Support.h"
#include "ThreadState.h"

#include <atomic>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>

namespace causal::rt {

struct RuntimeConfig {
  bool verbose = false;
  SamplerKind requested = SamplerKind::None; ///< None = auto
  uint64_t period_ns = 0;
  uint32_t batch = 0;
  uint32_t stack_copy_bytes = 0;
  char output_path[PATH_MAX] = {};
  char sample_log_path[PATH_MAX] = {};
};

struct RuntimeCounters {
  std::atomic<uint64_t> attributed{0}; ///< charged to an instrumented line
  std::atomic<uint64_t> outside{0};    ///< no instrumented frame
  std::atomic<uint64_t> overhead{0};   ///< taken in the runtime itself: dropped
  std::atomic<uint64_t> lost{0};       ///< dropped by the kernel (ring full)
  std::atomic<uint64_t> signals{0};    ///< handler invocations
  std::atomic<uint64_t> handler_ns{0}; ///< time spent in them
};

/// 0 = not initialized yet, 1 = profiling, 2 = disabled/failed (inert).
enum RuntimeStatus : uint32_t { kUninitialized = 0, kActive = 1, kInert = 2 };

extern std::atomic<uint32_t> g_status;
extern RuntimeConfig g_config;
extern RuntimeCounters g_counters;
extern ModuleRegistry g_modules;
extern ThreadRegistry g_threads;
extern SampleLog g_sample_log;

/// Writes the pending profile block before the process image is replaced or
/// the process ends without exit (the exec, _exit, _Exit and quick_exit hooks).
void flushProfileBeforeExec();

using PthreadCreateFn = int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
/// pthread_create for the program (its hook): the new thread is sampled from
/// its first instruction of user code and inherits its creator's delay
/// count; |real| creates it.
int createProgramThread(PthreadCreateFn real, pthread_t *thread, const pthread_attr_t *attr,
                        void *(*start)(void *), void *arg);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_RUNTIME_H
