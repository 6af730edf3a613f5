//===- runtime/Sampler.h - Per-thread CPU-time sampling --------------------===//
//
// Each thread samples itself: a perf_event task-clock counter that signals
// the owning thread at every overflow (O_ASYNC, F_SETSIG, F_SETOWN_EX
// F_OWNER_TID; no ring buffer is mapped: the handler takes the sample from
// the interrupted registers), or, when perf_event is denied or the descriptor reserve
// is used up, a CLOCK_THREAD_CPUTIME_ID POSIX timer that signals the thread
// every period. With the auto sampler, a perf-sampled thread whose context
// switches cost it more than CAUSAL_PERF_SWITCH_COST_MAX_PERCENT % of its CPU
// time (a perf event's timer is stopped and started at every switch; the cost
// is measured at start-up) moves to the timer in its sample handler, and back to
// perf once its switches would cost perf little (two fifths of that limit). The signal
// is the runtime's own: a real-time signal the program left at its default when
// the runtime started (sampleSignal()), never SIGPROF, so a program's own
// profiling timer and handler work as natively. A perf event stops itself after
// CAUSAL_PERF_SIGNALS_QUEUED samples not yet handled (event limit; the handler
// re-arms it on the signal that says so, POLL_HUP), so a thread that blocks the
// signal queues no more than that. Each thread's first period is a random share
// of the period, so that threads shorter than a period get samples in
// proportion to their CPU time.
// Measured on Linux 6.18: with O_ASYNC the kernel signals every sample
// (wakeup_events only governs poll wake-ups), so batches of
// CAUSAL_SAMPLE_BATCH samples are counted in the handler. perf samples are
// taken in user mode only (exclude_kernel), so their signal never
// interrupts a system call.
// The signal comes as the overflow's interrupt returns to the thread, so
// the interrupted registers are where the sample was taken. The handler
// runs in the sampled thread and charges each sample (see Attribution.h);
// a perf signal that finds the thread inside the runtime's own work counts
// as a sample of the profiler's overhead. It is async-signal-safe: no malloc, no locks, no stdio.
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
  /// What a context switch costs a perf-sampled thread (ns); -1: measured
  /// when the first thread starts perf (auto only: threads that switch
  /// often move to the timer).
  int64_t perf_switch_cost_ns = -1;
  /// What a perf sample's delivery costs its thread (ns); -1: measured by
  /// calibrateSampleCost; 0: samples' costs are not taken out.
  int64_t sample_cost_ns = -1;
  /// The selected line's finer period (ns); -1: period / k (linePeriodDivisor);
  /// 0: never finer.
  int64_t line_sample_period_ns = -1;
  uint32_t batch = 0;                ///< samples per batch (batch count, drains)
  bool verbose = false;              ///< time the handler (two more system calls)
  bool experiments = false;          ///< hand samples to the experiments
  ModuleRegistry *modules = nullptr; ///< resolves addresses, counts samples per line
  SampleLog *sample_log = nullptr;   ///< every sampled address (when enabled)
  /// The periodic flush (signal-safe), offered after each signal's samples.
  void (*write_profile_if_due)() = nullptr;
};
void setupSampler(const SamplerSetup &setup);

/// Samples by outcome, for the verbose summary at exit.
struct SampleCounters {
  std::atomic<uint64_t> attributed{0};     ///< charged to an instrumented line
  std::atomic<uint64_t> outside{0};        ///< no instrumented frame
  std::atomic<uint64_t> timer_samples{0};  ///< of all samples, those a CPU-time timer took
  std::atomic<uint64_t> overhead{0};       ///< taken in the runtime itself: dropped
  std::atomic<uint64_t> near_stack_end{0}; ///< taken with the stack nearly full: dropped
  std::atomic<uint64_t> signals{0};        ///< handler invocations
  std::atomic<uint64_t> handler_ns{0};     ///< time spent in them (verbose only)
  /// CPU time the samplers of ended threads covered (ns; perf: user time,
  /// timer: user + system; pauses with sampling suspended left out).
  std::atomic<uint64_t> covered_cpu_ns{0};
  /// CPU time of ended perf threads whose user/system split the kernel
  /// could not tell (no tick found them; cpuSplitUnknown), pauses left out:
  /// counted at the process's user share at exit.
  std::atomic<uint64_t> unsplit_cpu_ns{0};
  /// Over the other ended perf threads, user x system / total time (ns):
  /// times the kernel's tick, the variance of their user time as its
  /// tick-based split estimates it (the spread of the samples expected).
  std::atomic<uint64_t> user_split_variance_ns{0};
  std::atomic<uint64_t> timer_threads{0};  ///< threads that used the timer (perf or fd reserve)
  std::atomic<uint64_t> moved_to_timer{0}; ///< of them, moved from perf (they switched often)
  std::atomic<uint64_t> moved_back{0};     ///< moves back to perf (they stopped switching often)
};
const SampleCounters &sampleCounters();
/// Fork child: the child's counts start from zero.
void resetSampleCounters();

/// The real-time signal the runtime samples with (0 before
/// installSampleHandler chose it).
int sampleSignal();

/// Samples the sampled threads' CPU time should have given (CPU time /
/// period) and those that arrived (charged to a line, outside, overhead),
/// over ended threads and the live ones of |threads|.
struct SampleAccount {
  uint64_t expected = 0;
  /// One standard error of |expected|: the kernel estimates user time from
  /// its ticks (docs/runtime.md, "Samples expected and arrived").
  uint64_t spread = 0;
  uint64_t arrived = 0;
  /// True if fewer than CAUSAL_THIN_PROFILE_PERCENT % of enough expected
  /// samples, less CAUSAL_THIN_PROFILE_SPREADS spreads, arrived
  /// (causal_thin_profile).
  bool thin() const;
};
SampleAccount accountSamples(const ThreadRegistry &threads);
/// Says once, with the figures, that samples were lost (when |account| is
/// thin), and what could explain it.
void sayIfSamplesWereLost(const SampleAccount &account);

/// The calling thread's state (null if it is not sampled).
extern __thread ThreadState *tls_thread CAUSAL_RT_TLS;

/// Runs |open_descriptors|, which opens |count| descriptors the runtime
/// keeps (libunwind's pipe), with every free number below the descriptor
/// reserve's floor held meanwhile, so that they land above it; they count
/// in the reserve. False (and nothing run) if the reserve has no room for
/// them. Start-up only (one thread).
bool openAboveDescriptorFloor(uint32_t count, void (*open_descriptors)(void *), void *arg);

/// Chooses the sample signal (a real-time signal at its default
/// disposition, from SIGRTMAX down) and installs its handler (SA_SIGINFO |
/// SA_RESTART). Returns 0 or an errno value (EBUSY: no free signal).
int installSampleHandler();

/// Starts sampling the calling thread into |state| (tid and stack are
/// filled in here). The first call decides between perf and the timer
/// (saying once why perf is not used). Returns the sampler used (None if
/// neither works; said once).
SamplerKind startThreadSampling(ThreadState *state, bool is_main_thread);

/// Stops sampling the calling thread (its descriptor or timer is released).
/// The signal is blocked meanwhile.
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

/// Fork child: drops what the child inherited (perf fd; the timer does not
/// survive fork) without processing anything.
void forgetInheritedSampler(ThreadState *state);

/// What a context switch costs a thread that perf samples, in ns (the
/// setting, or measured at start-up; 0: unknown, or no thread moves).
uint64_t perfSwitchCostNs();
/// Whether its switch windows may still move |state| between perf and the
/// timer (the auto sampler, a switch cost known, moves left). Signal-safe.
bool switchWindowsMayMove(const ThreadState *state);
/// The calling thread's context switches so far, voluntary and not (one
/// getrusage; 0 if it fails). Signal-safe.
uint64_t threadContextSwitches();

/// Measures what a perf sample's delivery costs a thread, on the calling
/// thread (the profiler thread's, after the first experiment: about 45 ms of
/// its CPU time, once per process tree), unless CAUSAL_SAMPLE_COST_NS set it
/// or the process does not sample with perf; then sets the selected line's
/// finer period (docs/runtime.md, "What the samples cost"). Between its
/// rounds |should_stop| may end it, leaving the cost unknown.
void calibrateSampleCost(bool (*should_stop)());
/// That cost in ns (0: not known, or not taken out).
uint64_t sampleCostNs();

/// Name of the sampler chosen for the process ("perf_event task-clock",
/// "timer (CLOCK_THREAD_CPUTIME_ID)", "none").
const char *processSamplerName();

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_SAMPLER_H
