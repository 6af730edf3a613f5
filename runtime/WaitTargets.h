//===- runtime/WaitTargets.h - Causal experiments on waits ----------------===//
//
// `causal run --wait-experiments` (CAUSAL_WAIT_EXPERIMENTS): an experiment
// may select, instead of a line's code, the waits made at a line that a
// pseudo-thread ends: the timer (sleeps, timeouts), a disk (file I/O), the
// network (a socket with no program thread at the other end) or nothing
// known (other). "What if this wait were s shorter?" (docs/runtime.md,
// "Experiments on waits").
//
//   * Candidates: a recorded wait ended by a pseudo-thread adds its blocked
//     time, in sample periods (randomly rounded), to the next experiment's
//     reservoir under its target (line, kind): waits and samples are drawn
//     in proportion to the time they take. A program that never waits for
//     a pseudo-thread adds nothing: its choices are as before.
//   * Virtual speedup, parallel to a selected sample's: a selected wait of
//     b ns inside the experiment adds s x b to its thread's local delay
//     count, and the global count is raised to it; every other thread
//     pays. So that the others pay while the wait lasts, as they would while
//     a selected line runs, the profiler thread raises the global count
//     every poll step for each thread blocked in a wait at the target's line
//     (base + s x time blocked so far); the thread's own count catches up
//     when the wait ends.
//   * The credit is applied after the blocking call's own rules
//     (hooks/HookCore.h): a wait woken by another thread is credited with
//     the delays inserted meanwhile, its own included, so the thread's count
//     becomes the larger of the two, never their sum; a sleep that ran its
//     length pays what the others inserted after the credit.
//   * Waits on program threads (locks, conditions, joins, pipes they write)
//     are never targets: they shorten when the other thread's code does,
//     which the line experiments measure.
//
// The waits come from the --waits recording (the io class is recorded when
// wait experiments are on), so only recorded waits count, and the hooks'
// cost with --wait-experiments is that of --waits=io.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_WAITTARGETS_H
#define CAUSAL_RUNTIME_WAITTARGETS_H

#include "Experiment.h"
#include "ThreadState.h"

#include <stdint.h>

namespace causal::rt {

/// On when CAUSAL_WAIT_EXPERIMENTS or CAUSAL_FIXED_WAIT is set; written at
/// start-up.
extern bool g_wait_targets;

/// The target of a wait of wf::WaitKind |kind| that ended how |end| says
/// (wf::WaitEnd), ended by |waker| (a tid or a wf::PseudoThread); |wrote|:
/// the call was a write. None if a program thread ended it, it failed, or
/// nothing known ended a wait on program threads (a lock, a condition) or a
/// write (to a pipe: its reader's side).
WaitTarget waitTargetOfEpisode(uint8_t kind, uint8_t end, uint32_t waker, bool wrote);

/// Start-up: whether waits are targets, the sampling period (a wait's weight
/// as a candidate is its blocked time in periods) and the fixed wait.
void setupWaitTargets(const ExperimentConfig &config, uint64_t period_ns);

/// A recorded wait at |caller| (a return address) begins at |start_ns| on
/// the waits clock: marks the thread if it waits at the selected target's
/// line (true), so that the profiler thread raises the global count while
/// it lasts. onWaitEnded or endWaitInTarget takes the mark off.
bool beginWaitInTarget(ThreadState *state, uint64_t caller, uint64_t start_ns);
void endWaitInTarget(ThreadState *state);

/// The mark of a hook's recorded wait, for the wait's scope: one relaxed
/// load and a branch when no experiment on a wait target runs.
struct TargetWaitMark {
  ThreadState *marked = nullptr;
  void begin(ThreadState *state, uint64_t caller, uint64_t start_ns) {
    if (__builtin_expect(g_experiment.wait_target_active.load(std::memory_order_relaxed), 0) &&
        beginWaitInTarget(state, caller, start_ns))
      marked = state;
  }
  /// Takes the mark off (once; the destructor does it otherwise).
  void end() {
    if (__builtin_expect(marked != nullptr, 0))
      endWaitInTarget(marked);
    marked = nullptr;
  }
  ~TargetWaitMark() { end(); }
};

/// A recorded wait ended (Waits.cpp, appendEpisode): a candidate for the
/// next experiment, and the selected target's credit (applied at once
/// outside a blocking call's scope, else by the scope: applyWaitCredit).
void onWaitEnded(ThreadState *state, uint64_t caller, uint8_t kind, uint8_t end, uint32_t waker,
                 bool wrote, uint64_t start_ns, uint64_t end_ns);

/// Brings the thread's local delay count to the credit of its last selected
/// wait, and the global count with it.
void settleWaitCredit(ThreadState *state);
inline void applyWaitCredit(ThreadState *state) {
  if (__builtin_expect(state->wait_credit_to_ns != 0, 0))
    settleWaitCredit(state);
}

/// Every poll step of an experiment on a wait target (the profiler thread),
/// and before each round of a payment before blocking (the paying thread):
/// raises the global count for the threads blocked at its line, up to now.
void accrueWaitsInTarget(const ThreadRegistry &threads);
/// Profiler thread, before an experiment begins: forgets marks left by
/// waits that began in an earlier one.
void forgetWaitsInTarget(const ThreadRegistry &threads);

/// The fixed wait's target once known: its line (CAUSAL_FIXED_WAIT) with
/// the kind given or, if none was, the first seen there; kNoLine before.
uint64_t fixedWaitTarget(uint64_t fixed_line);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_WAITTARGETS_H
