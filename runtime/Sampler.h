//===- runtime/Sampler.h - Per-thread CPU-time sampling --------------------===//
//
// Each thread samples itself: a perf_event task-clock counter whose ring
// buffer signals the owning thread (O_ASYNC, F_SETSIG CAUSAL_SAMPLE_SIGNAL,
// F_SETOWN_EX F_OWNER_TID), or, when perf_event is denied, a
// CLOCK_THREAD_CPUTIME_ID POSIX timer that signals the thread every period.
// Measured on Linux 6.18: with O_ASYNC the kernel signals every sample
// (wakeup_events only governs poll wake-ups), so batches of
// CAUSAL_SAMPLE_BATCH samples are counted in the handler. perf samples are
// taken in user mode only (exclude_kernel), so their signal never
// interrupts a system call.
// The handler runs in the sampled thread and charges each sample (see
// Attribution.h). It is async-signal-safe: no malloc, no locks, no stdio.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_SAMPLER_H
#define CAUSAL_RUNTIME_SAMPLER_H

#include "Support.h"
#include "ThreadState.h"

#include <atomic>
#include <stdint.h>

namespace causal::rt {

class ModuleRegistry;
class SampleLog;

/// What the sampler needs from the rest of the runtime, given once at
/// start-up before any thread samples (Runtime.cpp).
struct SamplerSetup {
  SamplerKind requested = SamplerKind::None; ///< None = auto (perf, else the timer)
  uint64_t period_ns = 0;                    ///< CPU time between samples
  uint32_t batch = 0;                        ///< samples per batch (ring size, batch count)
  uint32_t stack_copy_bytes = 0;             ///< user stack copied with perf samples
  bool verbose = false;                      ///< time the handler (two more system calls)
  bool experiments = false;                  ///< hand samples to the experiments
  ModuleRegistry *modules = nullptr;         ///< resolves addresses, counts samples per line
  SampleLog *sample_log = nullptr;           ///< every sampled address (when enabled)
  /// The periodic flush (signal-safe), offered after each signal's samples.
  void (*write_profile_if_due)() = nullptr;
};
void setupSampler(const SamplerSetup &setup);

/// Samples by outcome, for the verbose summary at exit.
struct SampleCounters {
  std::atomic<uint64_t> attributed{0}; ///< charged to an instrumented line
  std::atomic<uint64_t> outside{0};    ///< no instrumented frame
  std::atomic<uint64_t> overhead{0};   ///< taken in the runtime itself: dropped
  std::atomic<uint64_t> lost{0};       ///< dropped by the kernel (ring full)
  std::atomic<uint64_t> signals{0};    ///< handler invocations
  std::atomic<uint64_t> handler_ns{0}; ///< time spent in them (verbose only)
};
const SampleCounters &sampleCounters();
/// Fork child: the child's counts start from zero.
void resetSampleCounters();

/// The calling thread's state (null if it is not sampled).
extern __thread ThreadState *tls_thread CAUSAL_RT_TLS;

/// Installs the handler of CAUSAL_SAMPLE_SIGNAL (SA_SIGINFO | SA_RESTART).
/// Returns 0 or an errno value.
int installSampleHandler();

/// Starts sampling the calling thread into |state| (tid and stack are
/// filled in here). The first call decides between perf and the timer
/// (saying once why perf is not used). Returns the sampler used (None if
/// neither works; said once).
SamplerKind startThreadSampling(ThreadState *state, bool is_main_thread);

/// Stops sampling the calling thread and processes the samples still in
/// its ring. The signal is blocked meanwhile.
void stopThreadSampling(ThreadState *state);

/// Stops / restarts counting the calling thread's CPU time for samples, for
/// CPU time that is not the program's (a pause spent spinning). Signal-safe.
void suspendThreadSampling(ThreadState *state);
void resumeThreadSampling(ThreadState *state);

/// Bounded profiling (--duration, the stop file): no thread samples from
/// now on. Each thread turns its sampler off at its next sample signal (a
/// thread that does not run gets none and costs nothing); new threads start
/// unsampled. Signal-safe; cannot be undone.
void endSampling();
/// True once endSampling() was called.
bool samplingEnded();

/// Fork child: drops what the child inherited (perf fd; the ring and the
/// timer do not survive fork) without processing anything.
void forgetInheritedSampler(ThreadState *state);

/// Name of the sampler chosen for the process ("perf_event task-clock",
/// "timer (CLOCK_THREAD_CPUTIME_ID)", "none").
const char *processSamplerName();

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_SAMPLER_H
