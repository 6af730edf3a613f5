//===- runtime/Experiment.h - Causal experiments and virtual speedup ------===//
//
// A profiler thread (started by the runtime, never sampled, all signals
// blocked) runs experiments back to back: it picks the line of the next
// in-scope sample (so lines are chosen in proportion to their samples), a
// speedup (Coz's rule, ExperimentPolicy.h), lets the experiment run, and
// formats its records (experiment + one record per progress point) into a
// pending buffer that the exit, exec and fatal-signal paths write out.
//
// Virtual speedup (Coz paper, section 3.3): while an experiment runs, a
// sample charged to the selected line adds speedup x period to the sampling
// thread's local delay count; after processing its samples a thread whose
// local count is ahead raises the global count to it ("minimize delays"),
// and a thread whose local count is behind pauses for the difference
// (nanosleep overshoot carried into the next pause). Counts are in ns.
//
// Threads pay only after a batch of samples, so when an experiment's time
// is up, running threads still owe part of the delays the global count
// holds: subtracting the whole count from the elapsed time would make a
// line look better than it is (Figure 1's b line: +5 to +12 % where the
// truth is 0). So an experiment ends with a drain: the selected line no
// longer adds delays, and the experiment's clock and progress counts stop
// only when every running thread (not in a blocking call) has paid up to
// the global count, or after CAUSAL_DRAIN_BATCHES batches' time.
// Sync hooks (runtime/hooks/) pay owed delays before anything that can wake a
// thread, and credit a woken thread with the delays inserted while it slept.
// The runtime gives this part what it needs once (ExperimentSetup); the
// sampler calls onSampledLine and settleDelays.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_EXPERIMENT_H
#define CAUSAL_RUNTIME_EXPERIMENT_H

#include "ExperimentPolicy.h"
#include "ModuleRegistry.h"
#include "Progress.h"
#include "ThreadState.h"
#include "causal/tunables.h"

#include <atomic>
#include <limits.h>
#include <stdint.h>

namespace causal::rt {

class TextBuffer;

struct ExperimentConfig {
  bool enabled = true;
  bool end_to_end = false;
  bool shared_cpus = true; ///< CAUSAL_SHARED_CPUS: tell threads that compete for CPUs apart
  bool has_fixed_line = false;
  bool wait_targets = false;  ///< CAUSAL_WAIT_EXPERIMENTS: waits are targets too (WaitTargets.h)
  bool fixed_is_wait = false; ///< the fixed target is the waits at fixed_file:fixed_line
  WaitTarget fixed_wait_kind = WaitTarget::None; ///< None: the first kind seen there
  int fixed_speedup_percent = -1;                ///< -1: drawn per experiment
  int ab_speedup_percent = -1;                   ///< CAUSAL_AB_SPEEDUP; -1: no A/B alternation
  uint32_t fixed_line = 0;
  uint64_t seed = 0;
  uint64_t min_length_ns = 0;
  uint64_t cooloff_ns = 0;
  /// CAUSAL_PATH_EXPERIMENTS: free runs select lines of chosen functions per
  /// caller too (Paths.h, "Calling contexts").
  bool path_experiments = false;
  char fixed_file[PATH_MAX] = {};
  /// CAUSAL_FIXED_PATH: the fixed line counts only under this caller (a glob).
  char fixed_path[CAUSAL_PATHS_CONTEXT_NAME_BYTES] = {};
  char scope[4096] = {};        ///< empty: default source scope
  char binary_scope[4096] = {}; ///< empty: every image
};

/// Shared by the profiler thread, the sample handlers and the sync hooks.
struct ExperimentGlobals {
  std::atomic<uint32_t> active{0};
  std::atomic<uint64_t> selected{kNoLine};
  std::atomic<uint64_t> delay_per_sample_ns{0};
  std::atomic<uint64_t> global_delay_ns{0};
  /// 1 while an experiment on a wait target selects it (not in its drain);
  /// next to the global count, which every hook reads already.
  std::atomic<uint32_t> wait_target_active{0};
  std::atomic<uint64_t> start_global_ns{0}; ///< older debts are forgiven
  std::atomic<uint64_t> start_ns{0};        ///< monotonic time the experiment began
  std::atomic<uint64_t> selected_samples{0};
  /// Delay of selected samples taken by threads that competed for a CPU
  /// (speedup x CPU time): the shared-CPU part of the experiment's delay.
  std::atomic<uint64_t> shared_cpu_delay_ns{0};
  /// The next experiment's line: a reservoir of one over the samples taken
  /// since the last choice (onSampledLine), and their total weight.
  std::atomic<uint64_t> candidate{kNoLine};
  std::atomic<uint64_t> candidate_weight{0};
  // ---- A wait target (WaitTargets.h) ----
  std::atomic<uint32_t> speedup_percent{0};
  /// The experiment's start on the waits clock (FastClock.h).
  std::atomic<uint64_t> start_wait_clock_ns{0};
  /// Blocked time of the selected waits in the experiment.
  std::atomic<uint64_t> selected_wait_ns{0};
};

/// What the experiments need from the rest of the runtime, given once at
/// start-up (Runtime.cpp); until then no profiler thread starts.
struct ExperimentSetup {
  ExperimentConfig config;                  ///< the CAUSAL_* settings (Settings.h)
  const ModuleRegistry *modules = nullptr;  ///< line tables: lines to select, their files
  const ThreadRegistry *threads = nullptr;  ///< the sampled threads (drain, scheduler watch)
  uint64_t period_ns = 0;                   ///< sampling period: a selected sample's delay
  uint32_t batch = 0;                       ///< samples per batch: the drain's length
  bool verbose = false;                     ///< say when a fixed line is missing
  void (*write_profile_if_due)() = nullptr; ///< the periodic flush, between experiments
  /// Bounded profiling (--duration, the stop file): the profiler thread
  /// runs even without experiments to watch for the end, asks
  /// profiling_should_end() at every poll step and, when it says so, ends
  /// the running experiment (recorded) and calls end_profiling().
  bool bounded = false;
  bool (*profiling_should_end)() = nullptr;
  void (*end_profiling)() = nullptr;
};
void setupExperiments(const ExperimentSetup &setup);

/// Raises the global delay count to |value| if it is lower.
void raiseGlobalDelay(uint64_t value);
/// During an experiment on a wait target: raises the global count for the
/// selected waits under way, up to now (WaitTargets.h), so that a thread
/// about to check what it owes sees what they added since the last poll step.
void accrueSelectedWaits();

extern ExperimentGlobals g_experiment;
extern ProgressRegistry g_progress;
extern std::atomic<uint64_t> g_paused_ns;   ///< time all threads spent pausing (verbose)
extern std::atomic<uint64_t> g_drain_ns;    ///< time spent in end-of-experiment drains (verbose)
extern std::atomic<uint64_t> g_spun_ns;     ///< part of g_paused_ns spent runnable (verbose)
extern std::atomic<uint64_t> g_spun_cpu_ns; ///< CPU time those runnable pauses burnt
/// How pauses were taken (verbose; runtime/Experiment.cpp, pause): all of
/// them, those that spun while competing for a CPU, those that began
/// spinning on a CPU that would otherwise idle, and those that slept (from
/// the start or after spinning) because the last experiment's threads, or
/// the saturation probe's, waited for CPUs other processes held.
struct PauseCounts {
  std::atomic<uint64_t> all{0}, competing{0}, on_idle_cpu{0}, beside_other_processes{0};
};
extern PauseCounts g_pause_counts;
/// Context switches inside pauses that slept or yielded, counted where a
/// thread's switch window may look at them (verbose).
extern std::atomic<uint64_t> g_pause_switches;
/// Latency points' experiment windows whose in-flight area came from the
/// visits' virtual times, and those that fell back to the count sampled
/// every poll (visits that did not go through the runtime) (verbose).
extern std::atomic<uint64_t> g_latency_windows_timed, g_latency_windows_sampled;

/// Signal-safe: a sample of |weight| charged to |where| (outcome Line).
void onSampledLine(ThreadState *state, const ResolvedAddress &where, uint64_t weight);

/// Signal-safe: after a thread processed samples: publish or pay delays.
void settleDelays(ThreadState *state);
/// A signal at the selected line's finer period (Sampler.cpp): counts for
/// the line if |where| is in it, and for nothing else.
void onFinerSample(ThreadState *state, const ResolvedAddress &where);
/// After a signal's samples: turns its samples in the selected line into
/// delay, each standing for period / |divisor| of CPU time less |cost_ns|,
/// counts whole selected samples, and adds |cost_ns|, what the signal cost
/// the thread (0: not taken out), to what settleDelays adds to its count.
void chargeSignal(ThreadState *state, uint32_t divisor, uint64_t cost_ns);
/// True while an experiment runs (not its drain) whose delays are accounted
/// per thread, not from shared CPUs: then samples' costs are taken out and
/// the selected line's thread may sample at the finer period.
bool experimentTakesSampleCosts();

/// Pays the delays |state| owes now (before waking another thread). Safe
/// in the sample handler's absence only: does nothing inside it.
void payOwedDelays(ThreadState *state);
/// payOwedDelays before a blocking call, with the program's signals held
/// back meanwhile: true if one came (its handler has run when this returns).
/// Without the profiler the thread would have been inside the call, and a
/// sleep or an I/O wait would have returned EINTR (hooks/HookCore.h). Held
/// back rather than caught in the act: a pause that spins (a thread that
/// competes for a CPU, the end of every pause) cannot see a handler run.
bool payOwedDelaysBeforeBlocking(ThreadState *state);

/// Fast check: does the calling thread owe delays?
inline bool owesDelays(const ThreadState *state) {
  return g_experiment.global_delay_ns.load(std::memory_order_relaxed) >
         state->local_delay_ns.load(std::memory_order_relaxed);
}

/// After a blocking call that began when the global count was
/// |global_before|: if the thread was woken by another thread, it skips
/// the delays inserted meanwhile, up to the global count (creditedLocal). A
/// compare-and-swap: the thread's own sample handler may change the count
/// between the read and the write.
inline void creditWakeUp(ThreadState *state, uint64_t global_before) {
  uint64_t now = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  if (now <= global_before)
    return;
  uint64_t local = state->local_delay_ns.load(std::memory_order_relaxed);
  while (!state->local_delay_ns.compare_exchange_weak(
      local, creditedLocal(local, global_before, now), std::memory_order_relaxed))
    ;
}

/// A blocking call begins / ends (nested calls count). While a thread is in
/// one it cannot pay delays, and need not: a wake-up by another thread
/// credits it. The end-of-experiment drain does not wait for it.
inline void enterBlockingCall(ThreadState *state) {
  state->blocking_calls.store(state->blocking_calls.load(std::memory_order_relaxed) + 1,
                              std::memory_order_relaxed);
}
inline void leaveBlockingCall(ThreadState *state) {
  uint32_t depth = state->blocking_calls.load(std::memory_order_relaxed);
  if (depth)
    state->blocking_calls.store(depth - 1, std::memory_order_relaxed);
}

/// A sampled thread ends (after its last samples were handled): keeps what
/// the scheduler did with it for the running experiment's record.
void threadEnds(ThreadState *state);

/// Starts the profiler thread (if experiments are enabled). Not signal-safe.
void startExperiments();
/// Ends the running experiment (recording it) and stops the profiler
/// thread; waits at most ~2 s. Idempotent.
void stopExperiments();
/// Fork child: the profiler thread does not exist here; forget the
/// parent's experiment and pending records, start a fresh thread.
void experimentsForkChild();
/// Appends the pending (not yet written) experiment records to |out| and
/// forgets them.
void takePendingRecords(TextBuffer *out);
/// Signal-safe: the pending records without taking them (null if busy).
const char *peekPendingRecords(size_t *size);
/// Signal-safe, for the periodic flush: takes the pending records (*records
/// may be null: none so far) for the caller to write and returns true, or
/// false, holding nothing, if another thread holds them. After true,
/// returnPendingRecords(written) forgets them if they were written and lets
/// them go.
bool borrowPendingRecords(const char **records, size_t *size);
void returnPendingRecords(bool written);
/// True if the calling thread is the profiler thread.
bool isProfilerThread();
/// True while the profiler thread runs.
bool profilerThreadRunning();

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_EXPERIMENT_H
