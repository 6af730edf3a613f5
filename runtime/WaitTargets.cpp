//===- runtime/WaitTargets.cpp - Causal experiments on waits --------------===//
//
// Candidates, credits and the profiler thread's accrual of WaitTargets.h.
//
//===----------------------------------------------------------------------===//

#include "WaitTargets.h"

#include "ExperimentPolicy.h"
#include "FastClock.h"
#include "Runtime.h"
#include "Waits.h"

namespace causal::rt {

bool g_wait_targets = false;

namespace {

namespace wf = causal::waits_format;

uint64_t g_period_ns = CAUSAL_DEFAULT_SAMPLE_PERIOD_NS;
WaitTarget g_fixed_kind = WaitTarget::None; // the kind CAUSAL_FIXED_WAIT names
bool g_fixed_wait = false;
std::atomic<uint64_t> g_fixed_line{kNoLine}; // its line, once found (chooseLine)
std::atomic<uint32_t> g_fixed_seen_kind{0};  // the first kind seen there (WaitTarget)

// The line of the call that returns to |caller|: its line-table entry,
// packed; kNoLine outside instrumented code. A one-entry cache per thread:
// a loop waits at the same call again and again.
uint64_t lineOfCall(ThreadState *state, uint64_t caller) {
  if (caller == 0)
    return kNoLine;
  if (state->wait_call_pc == caller)
    return state->wait_call_line;
  ResolvedAddress where;
  bool found;
  {
    ModuleTablesRead reading(g_modules);
    found = g_modules.resolve(uintptr_t(caller - 1), &where); // the call instruction
  }
  uint64_t line =
      found && where.line <= kLineIndexMask ? packLine(where.module, where.line) : kNoLine;
  state->wait_call_pc = caller;
  state->wait_call_line = line;
  return line;
}

// The thread's local count with the experiment's floor applied: older debts
// are forgiven (settleDelayCounts).
uint64_t localCountWithFloor(const ThreadState *state) {
  uint64_t local = state->local_delay_ns.load(std::memory_order_relaxed);
  uint64_t floor = g_experiment.start_global_ns.load(std::memory_order_relaxed);
  return local > floor ? local : floor;
}

uint64_t scaledBySpeedup(uint64_t ns) {
  return ns * g_experiment.speedup_percent.load(std::memory_order_relaxed) / 100;
}

// Adds |blocked_ns| of waiting at |target| to the next experiment's
// reservoir, in sample periods: whole periods, and one more with the
// probability of the remainder (no wait is too short to count on average).
void addCandidate(ThreadState *state, uint64_t target, uint64_t blocked_ns) {
  uint64_t weight = blocked_ns / g_period_ns;
  if (nextRandomBelow(state->choice_random, g_period_ns) < blocked_ns % g_period_ns)
    ++weight;
  if (weight == 0)
    return;
  uint64_t total =
      g_experiment.candidate_weight.fetch_add(weight, std::memory_order_relaxed) + weight;
  if (reservoirTakes(state->choice_random, weight, total))
    g_experiment.candidate.store(target, std::memory_order_release);
}

} // namespace

void setupWaitTargets(const ExperimentConfig &config, uint64_t period_ns) {
  g_wait_targets = config.wait_targets || config.fixed_is_wait;
  g_period_ns = period_ns ? period_ns : CAUSAL_DEFAULT_SAMPLE_PERIOD_NS;
  g_fixed_wait = config.has_fixed_line && config.fixed_is_wait;
  g_fixed_kind = config.fixed_wait_kind;
}

WaitTarget waitTargetOfEpisode(uint8_t kind, uint8_t end, uint32_t waker, bool wrote) {
  if (end == uint8_t(wf::WaitEnd::Failed) || !wf::isPseudoThread(waker))
    return WaitTarget::None;
  if (waker == wf::kPseudoTimer)
    return WaitTarget::Timer;
  if (waker == wf::kPseudoNetwork)
    return WaitTarget::Network;
  if (waker >= wf::kPseudoDiskBase)
    return WaitTarget::Disk;
  // Nothing known ended it: an I/O wait is the outside world's (another
  // process, a device); a wait on a lock or a condition was ended by a
  // program thread whose wake was not seen.
  return waitClassOf(wf::WaitKind(kind)) == wf::kWaitIo && !wrote ? WaitTarget::Other
                                                                  : WaitTarget::None;
}

bool beginWaitInTarget(ThreadState *state, uint64_t caller, uint64_t start_ns) {
  if (!state || inRuntimeWork(state))
    return false;
  uint64_t selected = g_experiment.selected.load(std::memory_order_relaxed);
  if (waitTargetOf(selected) == WaitTarget::None || start_ns == 0 ||
      state->target_wait_since_ns.load(std::memory_order_relaxed) != 0 ||
      lineOfCall(state, caller) != lineOfTarget(selected))
    return false;
  state->target_wait_base_ns.store(localCountWithFloor(state), std::memory_order_relaxed);
  state->target_wait_raised_ns.store(0, std::memory_order_relaxed);
  state->target_wait_since_ns.store(start_ns, std::memory_order_release);
  return true;
}

void endWaitInTarget(ThreadState *state) {
  // Not consumed by onWaitEnded: the wait was too short to record, or did
  // not wait. Whatever the profiler thread raised the global count to for
  // it is the thread's own.
  if (state->target_wait_since_ns.load(std::memory_order_relaxed) == 0)
    return;
  state->target_wait_since_ns.store(0, std::memory_order_relaxed);
  uint64_t raised = state->target_wait_raised_ns.load(std::memory_order_relaxed);
  if (raised > state->wait_credit_to_ns)
    state->wait_credit_to_ns = raised;
  if (state->blocking_calls.load(std::memory_order_relaxed) == 0)
    applyWaitCredit(state);
}

void onWaitEnded(ThreadState *state, uint64_t caller, uint8_t kind, uint8_t end, uint32_t waker,
                 bool wrote, uint64_t start_ns, uint64_t end_ns) {
  if (!state || inRuntimeWork(state))
    return;
  bool marked = state->target_wait_since_ns.load(std::memory_order_relaxed) != 0;
  if (marked)
    state->target_wait_since_ns.store(0, std::memory_order_relaxed);
  WaitTarget target_kind = waitTargetOfEpisode(kind, end, waker, wrote);
  if (target_kind == WaitTarget::None && !marked)
    return;
  uint64_t line = lineOfCall(state, caller);
  if (line == kNoLine)
    return;
  uint64_t target = packWaitTarget(line, target_kind);
  if (target_kind != WaitTarget::None) {
    if (g_fixed_wait && g_fixed_kind == WaitTarget::None &&
        g_fixed_line.load(std::memory_order_relaxed) == line) {
      uint32_t none = 0;
      g_fixed_seen_kind.compare_exchange_strong(none, uint32_t(target_kind),
                                                std::memory_order_relaxed);
    }
    addCandidate(state, target, end_ns - start_ns);
  }
  if (!g_experiment.active.load(std::memory_order_acquire))
    return;
  uint64_t credit_to = 0;
  if (target_kind != WaitTarget::None &&
      g_experiment.selected.load(std::memory_order_relaxed) == target) {
    // The part of the wait inside the experiment.
    uint64_t experiment_start = g_experiment.start_wait_clock_ns.load(std::memory_order_relaxed);
    uint64_t from = start_ns > experiment_start ? start_ns : experiment_start;
    if (end_ns > from) {
      credit_to = localCountWithFloor(state) + scaledBySpeedup(end_ns - from);
      g_experiment.selected_wait_ns.fetch_add(end_ns - from, std::memory_order_relaxed);
    }
  }
  if (marked) {
    // The profiler thread raised the global count for this wait as it
    // lasted (the whole credit, or, for a wait of another kind at the same
    // line, what it raised by mistake): the thread's own, not a debt.
    uint64_t raised = state->target_wait_raised_ns.load(std::memory_order_relaxed);
    credit_to = raised > credit_to ? raised : credit_to;
  }
  if (credit_to > state->wait_credit_to_ns)
    state->wait_credit_to_ns = credit_to;
  // Outside a blocking call's scope (I/O) nothing else credits the thread:
  // now. Inside one, the scope applies it after its own credit.
  if (state->blocking_calls.load(std::memory_order_relaxed) == 0)
    applyWaitCredit(state);
}

void settleWaitCredit(ThreadState *state) {
  uint64_t credit_to = state->wait_credit_to_ns;
  state->wait_credit_to_ns = 0;
  if (!g_experiment.active.load(std::memory_order_acquire))
    return; // between experiments the counts are not kept apart
  if (credit_to > state->local_delay_ns.load(std::memory_order_relaxed))
    state->local_delay_ns.store(credit_to, std::memory_order_relaxed);
  raiseGlobalDelay(credit_to);
}

void accrueWaitsInTarget(const ThreadRegistry &threads) {
  uint64_t now = fastMonotonicNs();
  uint64_t experiment_start = g_experiment.start_wait_clock_ns.load(std::memory_order_relaxed);
  for (uint32_t i = 0, used = threads.slotsUsed(); i < used; ++i) {
    ThreadState *state = threads.slot(i);
    if (!state || !state->in_use.load(std::memory_order_acquire))
      continue;
    uint64_t since = state->target_wait_since_ns.load(std::memory_order_acquire);
    if (since == 0)
      continue;
    uint64_t from = since > experiment_start ? since : experiment_start;
    if (now <= from)
      continue;
    uint64_t value =
        state->target_wait_base_ns.load(std::memory_order_relaxed) + scaledBySpeedup(now - from);
    // The profiler thread and paying threads may both raise it.
    uint64_t raised = state->target_wait_raised_ns.load(std::memory_order_relaxed);
    while (raised < value && !state->target_wait_raised_ns.compare_exchange_weak(
                                 raised, value, std::memory_order_relaxed))
      ;
    raiseGlobalDelay(value);
  }
}

void forgetWaitsInTarget(const ThreadRegistry &threads) {
  for (uint32_t i = 0, used = threads.slotsUsed(); i < used; ++i)
    if (ThreadState *state = threads.slot(i))
      state->target_wait_since_ns.store(0, std::memory_order_relaxed);
}

uint64_t fixedWaitTarget(uint64_t fixed_line) {
  if (fixed_line == kNoLine)
    return kNoLine;
  if (g_fixed_kind != WaitTarget::None)
    return packWaitTarget(fixed_line, g_fixed_kind);
  if (g_fixed_line.load(std::memory_order_relaxed) != fixed_line) {
    g_fixed_line.store(fixed_line, std::memory_order_relaxed);
    g_fixed_seen_kind.store(0, std::memory_order_relaxed);
  }
  uint32_t seen = g_fixed_seen_kind.load(std::memory_order_relaxed);
  return seen ? packWaitTarget(fixed_line, WaitTarget(seen)) : kNoLine;
}

} // namespace causal::rt
