//===- runtime/ThreadState.h - What the runtime keeps per thread -----------===//
//
// One ThreadState per sampled thread, reached from the signal handler via
// an initial-exec TLS pointer (tls_thread, Sampler.h). States live in
// anonymous mappings that are never unmapped: an exited thread's state is
// marked free and reused by the next new thread, so code that enumerates
// threads (the experiments' drain and scheduler watch) never reads freed
// memory.
//
// The sample path calls Sampler.cpp's recordSample() for every sample,
// which hands a sample of an instrumented line to the experiments
// (onSampledLine: the selected-line check); after every signal the thread
// settles its delays (settleDelays). Batches of CAUSAL_SAMPLE_BATCH samples
// are only counted (samples_in_batch, batches).
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_THREADSTATE_H
#define CAUSAL_RUNTIME_THREADSTATE_H

#include "Support.h"

#include "causal/tunables.h"

#include <atomic>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

namespace causal::rt {

enum class SamplerKind : uint8_t { None, Perf, Timer };

struct WaitBuffer; // Waits.h
struct PathThread; // Paths.h

struct ThreadState {
  // ---- Ownership ------------------------------------------------------------
  std::atomic<uint32_t> in_use; // 1 while a live thread owns this state
  pid_t tid;                    // the profiler thread reads it: threadId(), setThreadId()

  // ---- Sampler --------------------------------------------------------------
  std::atomic<SamplerKind> kind; // the profiler thread reads it (experiments, the sample account)
  int perf_fd;                   // -1 if none
  uint64_t perf_fd_dev, perf_fd_ino; // identity of perf_fd, to never close
                                     // a descriptor the program reused
  timer_t timer;
  bool timer_armed;
  bool first_period; // the first period is a random phase (short threads get their share)
  // The selected line's finer period (Sampler.cpp, adjustLinePeriod): while
  // |line_period_divisor| > 1 the event samples every period / it, and every
  // |line_period_divisor|-th signal is an ordinary sample; |line_period_start|
  // is the experiment's start (ExperimentGlobals::start_ns) it began in.
  uint32_t line_period_divisor, line_period_signals;
  uint64_t line_period_start;
  std::atomic<sig_atomic_t> in_handler; // in the sample handler or the runtime's own work;
                                        // the profiler thread reads it

  // ---- Samples expected (Sampler.cpp: CPU time the sampler covers) -------
  uint64_t cpu_base_user_ns, cpu_base_total_ns; // the thread's CPU time when its sampler began
                                                // (changed by a move to the timer: atomically)
  uint64_t unsampled_ns;      // CPU time with sampling suspended (pauses); stored atomically (the
                              // profiler thread reads it: watchThread)
  uint64_t unsampled_base_ns; // unsampled_ns when its sampler began (a move to the timer)
  uint64_t suspended_at_ns;   // thread CPU time at the last suspend
  bool suspended_by_period;   // perf: suspended by its period, the signal blocked (Sampler.cpp)
  // The last window of CAUSAL_LOSS_WINDOW_SAMPLES samples (Sampler.cpp,
  // closeSampleWindows): where it began, and the delay scale it gave.
  uint64_t loss_window_samples, loss_window_user_ns, loss_window_total_ns, loss_window_unsampled_ns;
  // The last window of CAUSAL_PERF_SWITCH_WINDOW_SAMPLES samples (Sampler.cpp,
  // closeSampleWindows): where it began, its CPU time less spins, its context switches.
  uint64_t switch_window_samples, switch_window_cpu_ns, switch_window_switches;
  // Context switches inside its pauses that slept or yielded (Experiment.cpp,
  // pause): the profiler's, left out of the windows above.
  uint64_t pause_switches;
  uint32_t sampler_moves; // moves between perf and the timer so far (moveToTimer, moveBackToPerf)
  uint32_t delay_scale_x1024; // selected samples' delays x this / 1024 (1024: none lost)

  // ---- Unwinding ------------------------------------------------------------
  AddressRange stack; // this thread's stack, to refuse stale reads
  // The sample handler drops a sample taken with its frame on this stack
  // below this address (CAUSAL_SAMPLE_STACK_RESERVE_BYTES above its end).
  uintptr_t sample_stack_floor;

  // ---- Statistics (written only by the owning thread) -----------------------
  uint64_t samples;          // samples processed (the profiler thread reads it)
  uint64_t choice_random;    // the line choice's random state (onSampledLine)
  uint64_t samples_in_batch; // samples since the last completed batch
  uint64_t batches;          // completed batches

  // ---- Causal experiments (Experiment.h) ------------------------------------
  std::atomic<uint64_t> local_delay_ns; // delays this thread has taken/owes
  std::atomic<uint32_t> blocking_calls; // >0 while in a blocking call (a wake-up credits it)
  uint32_t path_depth;         // --paths: entries of chosen functions active (Paths.h); while
                               // nonzero the blocking hooks add their calls' time to:
  uint64_t path_blocked_ns;    // --paths: time in blocking hooks with a path entry active
  uint64_t path_block_since;   // --paths: when the blocking call under way began (waits clock;
                               // 0: none), for a write while it lasts (Paths.cpp)
  uint64_t path_paused_ns;     // --paths: time paused to pay delays with a path entry active,
  uint64_t path_paused_cpu_ns; // and the CPU time spun in those pauses (Experiment.cpp pause)
  uint32_t path_context;       // the calling context of the innermost entry (Paths.h,
                               // "Calling contexts"; 0: none): what a sample's line is in
  uint64_t wait_credit_to_ns;  // the local count the last selected wait brings it to (0: none),
                               // applied after the blocking call's own credit (applyWaitCredit,
                               // WaitTargets.h); next to the count every hook reads already
  uint64_t excess_delay_ns;    // pause overshoot, subtracted from the next pause
  uint64_t line_hits;          // this signal's samples in the selected line (onSampledLine,
                               // onFinerSample), turned into delay by chargeSignal
  uint64_t line_hit_parts;     // finer signals in the line not yet a whole selected sample
  uint64_t cost_delay_ns;      // this signal's cost, not yet counted (chargeSignal)
  uint64_t selected_delay_ns;  // delay of this signal's selected samples, not yet
                               // counted (settleDelays adds it to the local count,
                               // or to the shared-CPU delay if the thread competes)
  SchedStat sched;             // the last schedstat reading (sched_read: taken)
  bool sched_read;
  bool competing;                         // what that reading said (Experiment.cpp)
  uint64_t sched_next_samples;            // read again once |samples| reaches this
  uint64_t recent_cpu_ns, recent_wait_ns; // decayed sums of CPU and run-queue time: does
                                          // the thread compete for a CPU (then it pauses
                                          // by staying runnable, not by sleeping)?
  uint64_t watch_epoch;                   // experiment whose start the two below were read at
  SchedStat watch_stat;                   // schedstat then (profiler thread)
  uint64_t watch_unsampled_ns;            // unsampled_ns then
  uint64_t window_runnable_ns;            // on a CPU or waiting, last experiment (profiler)
  uint32_t cpu_share_scale_x1024;         // 1 / its CPU share then, x1024 (profiler;
                                          // cpuShareScaleX1024, ExperimentPolicy.h)
  uint64_t sync_calls;                    // synchronization calls seen (tests: no double counting)
  uint64_t paused_ns;                     // time this thread paused to pay delays (tests)
  uint64_t coz_pre_block_global_ns;       // global count at _coz_pre_block
  WaitBuffer *waits; // --waits: this thread's episodes (null: not recorded); kept on reuse
  PathThread *paths; // --paths: this thread's paths (null: no entry yet); kept on reuse

  // ---- Waits as experiment targets (WaitTargets.h) --------------------------
  std::atomic<uint64_t>
      target_wait_since_ns; // waits clock: began a wait at the target's line (0: none)
  std::atomic<uint64_t> target_wait_base_ns;   // its local delay count then (the floor applied)
  std::atomic<uint64_t> target_wait_raised_ns; // what the profiler thread raised the global count
                                               // to for that wait so far (0: nothing)
  uint64_t wait_call_pc; // the last call site looked up, and its line (a cache)
  uint64_t wait_call_line;
};

/// The id of |state|'s thread (0: none yet). Written when the thread starts
/// sampling, read by the profiler thread: atomic, relaxed (an aligned load).
inline pid_t threadId(const ThreadState *state) {
  return __atomic_load_n(&state->tid, __ATOMIC_RELAXED);
}
inline void setThreadId(ThreadState *state, pid_t tid) {
  __atomic_store_n(&state->tid, tid, __ATOMIC_RELAXED);
}

/// Thread states of the process. Lock-free: slots hold pointers that, once
/// set, never change; ownership is taken with a CAS on ThreadState::in_use.
class ThreadRegistry {
public:
  static constexpr uint32_t kCapacity = CAUSAL_MAX_THREADS;

  /// A zeroed (or reused) state owned by the caller, or null if out of
  /// memory. Not signal-safe.
  ThreadState *acquire();
  /// Gives the state back for reuse.
  void release(ThreadState *state);
  /// Fork child: every state except |survivor| belonged to threads that do
  /// not exist in the child.
  void releaseAllBut(ThreadState *survivor);

  uint32_t slotsUsed() const { return used_.load(std::memory_order_acquire); }
  ThreadState *slot(uint32_t i) const { return slots_[i].load(std::memory_order_acquire); }
  bool overflowed() const { return overflowed_.load(std::memory_order_relaxed); }

private:
  static constexpr uint32_t kStatesPerChunk = 64;
  struct StateChunk {
    std::atomic<uint32_t> next; // the next state to hand out
    ThreadState states[kStatesPerChunk];
  };
  /// A new zero-filled state from the current chunk, or a new chunk.
  ThreadState *carve();

  std::atomic<StateChunk *> chunk_{nullptr};
  std::atomic<ThreadState *> slots_[kCapacity] = {};
  std::atomic<uint32_t> used_{0};
  /// States given back and not yet reused (a hint: acquire scans the slots
  /// for one only when it is not 0, so that starting the N-th of N live
  /// threads does not read N slots).
  std::atomic<uint32_t> free_{0};
  std::atomic<bool> overflowed_{false};
};

/// The thread is in the sample handler or in the runtime's own work (a
/// pause, libunwind): its calls into hooks are not the program's.
inline bool inRuntimeWork(const ThreadState *state) {
  return state->in_handler.load(std::memory_order_relaxed) != 0;
}

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_THREADSTATE_H
