//===- runtime/hooks/HookCore.h - What every hook is made of ----*- C++ -*-===//
//
// The hooks of causal/hooks.def stand on this core: the real functions and
// REAL(), the blocking scope, the kinds a hook of the table expands from and
// the outcomes of a blocking call. HookTable.cpp expands the table; the family
// files (ThreadsAndLocks, Sleeps, Exec, ProcessEnd) implement the custom hooks.
//
// Rules (Coz paper, Tables 1 and 2):
//   * before a call that can wake another thread (unlock, signal,
//     broadcast, post, barrier, kill, thread exit, and a condition wait,
//     which unlocks its mutex) the thread pays the delays it owes;
//   * after a call that blocked until another thread woke it, the thread
//     skips the delays inserted meanwhile (the waker paid them); a failed
//     call or a try is not credited;
//   * a call that returns because its own timer expired (a sleep, a timed
//     wait that timed out) is not credited either, and the thread pays the
//     delays inserted while it slept before it returns: in the sped-up
//     program everything else would have run that much faster, so relative
//     to it the timer fires that much later (docs/runtime.md, "Sleeps and
//     timeouts");
//   * before a call that may block, the thread also pays what it owes. Not
//     in the paper: a thread pays only after its own samples, so a debt
//     run up just before the call (a worker's short work outside a lock)
//     would otherwise survive the wait, which credits only the delays
//     inserted during it, and be paid after the wake-up: inside the
//     critical section just acquired, holding the lock, where the pause
//     delays every waiter. Paid before the call, it overlaps the wait, as
//     it would have had the thread paid in time. (bench/accuracy's lock
//     case, a 0.3 ms critical section, 3 rounds: predicted / true effect
//     at 25, 50, 100 % went from 0.37, 0.87, 0.78 to 0.73, 0.70, 0.82.)
// Fast path (no experiment, nothing owed): a TLS load and a compare.
//
// Both entry points of a hook call the real function through a pointer
// resolved with dlsym(RTLD_NEXT) (dlvsym for a versioned one) at start-up,
// never each other, so one call is seen once. The runtime's own waits (the
// profiler thread's sleeps, the profile writer's I/O) make the system call or
// call the real function themselves: they never enter a hook.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_HOOKS_HOOKCORE_H
#define CAUSAL_RUNTIME_HOOKS_HOOKCORE_H

#include "Experiment.h"
#include "Lifecycle.h"
#include "Runtime.h"
#include "Sampler.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

// The hooks' code lives in its own section, which attribution walks through
// (a sample in libc's lock code is charged to the caller's line, as it would
// be without us); the delay payment they call is runtime code. Every function
// that calls a real function of the table carries it.
#define CAUSAL_FORWARD __attribute__((section("causal_rt_forward")))

namespace causal::rt::hooks {

// ---- The real functions ---------------------------------------------------------

// CAUSAL_IF_REAL_KIND(M, NAME, ...) is M(NAME, ...) if a hook of that kind
// calls a real function, else nothing.
#define CAUSAL_IF_REAL_Blocking(M, ...) M(__VA_ARGS__)
#define CAUSAL_IF_REAL_WakingThenBlocking(M, ...) M(__VA_ARGS__)
#define CAUSAL_IF_REAL_Waking(M, ...) M(__VA_ARGS__)
#define CAUSAL_IF_REAL_Trying(M, ...) M(__VA_ARGS__)
#define CAUSAL_IF_REAL_Exec(M, ...) M(__VA_ARGS__)
#define CAUSAL_IF_REAL_Custom(M, ...) M(__VA_ARGS__)
#define CAUSAL_IF_REAL_CustomNoReturn(M, ...) M(__VA_ARGS__)
#define CAUSAL_IF_REAL_Variadic(M, ...) // its own implementation, no real function

// real_NAME: the C library's NAME (defined and resolved in HookTable.cpp).
#define CAUSAL_DECLARE_REAL(name, version) extern decltype(&::name) real_##name;
#define CAUSAL_HOOK(kind, outcome, ret, name, params, args, version)                               \
  CAUSAL_IF_REAL_##kind(CAUSAL_DECLARE_REAL, name, version)
#define CAUSAL_INTERPOSER CAUSAL_HOOK
#include "causal/hooks.def"
#undef CAUSAL_DECLARE_REAL

/// Resolves every real function not resolved yet.
void resolveRealFunctions();

/// The real function |Real| (a real_NAME): resolved by a constructor, or on
/// first use when another image's constructor calls a hook before ours ran
/// (not on the fast path afterwards).
template <auto &Real> __attribute__((always_inline)) inline auto resolved() {
  return __builtin_expect(Real != nullptr, 1) ? Real : (resolveRealFunctions(), Real);
}
#define REAL(name) ::causal::rt::hooks::resolved<::causal::rt::hooks::real_##name>()

// The implementations of the Custom and CustomNoReturn hooks (family files).
#define CAUSAL_IMPLEMENTED_Custom(ret, name, params) ret name##Hook params;
#define CAUSAL_IMPLEMENTED_CustomNoReturn(ret, name, params) [[noreturn]] ret name##Hook params;
#define CAUSAL_IMPLEMENTED_Blocking(ret, name, params)
#define CAUSAL_IMPLEMENTED_WakingThenBlocking CAUSAL_IMPLEMENTED_Blocking
#define CAUSAL_IMPLEMENTED_Waking CAUSAL_IMPLEMENTED_Blocking
#define CAUSAL_IMPLEMENTED_Trying CAUSAL_IMPLEMENTED_Blocking
#define CAUSAL_IMPLEMENTED_Exec CAUSAL_IMPLEMENTED_Blocking
#define CAUSAL_IMPLEMENTED_Variadic CAUSAL_IMPLEMENTED_Blocking
#define CAUSAL_HOOK(kind, outcome, ret, name, params, args, version)                               \
  CAUSAL_IMPLEMENTED_##kind(ret, name, params)
#define CAUSAL_INTERPOSER CAUSAL_HOOK
#include "causal/hooks.def"
#undef CAUSAL_IMPLEMENTED_Custom
#undef CAUSAL_IMPLEMENTED_CustomNoReturn
#undef CAUSAL_IMPLEMENTED_Blocking
#undef CAUSAL_IMPLEMENTED_WakingThenBlocking
#undef CAUSAL_IMPLEMENTED_Waking
#undef CAUSAL_IMPLEMENTED_Trying
#undef CAUSAL_IMPLEMENTED_Exec
#undef CAUSAL_IMPLEMENTED_Variadic

// ---- The blocking scope and the waking call -----------------------------------

inline void beforeWaking() {
  ThreadState *state = tls_thread;
  if (!state)
    return;
  state->sync_calls += !state->in_handler; // the program's calls, not libunwind's
  if (__builtin_expect(owesDelays(state), 0))
    payOwedDelays(state);
}

struct BlockScope {
  ThreadState *state;
  uint64_t global_before = 0;
  BlockScope() : state(tls_thread) {
    if (state) {
      state->sync_calls += !state->in_handler; // the program's calls, not libunwind's
      if (__builtin_expect(owesDelays(state), 0))
        payBeforeCall();
      enterBlockingCall(state);
      global_before = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
    }
  }
  ~BlockScope() {
    if (state && !left)
      leaveBlockingCall(state);
  }
  void woken(bool by_other_thread) {
    if (state && by_other_thread && !state->in_handler)
      creditWakeUp(state, global_before);
  }
  // The call's own timer ended it: no credit, and the delays inserted while
  // it slept are paid now, before the program goes on (errno is kept).
  void timedOut() {
    if (!state)
      return;
    leaveBlockingCall(state); // running again: the drain may wait for it
    left = true;
    if (__builtin_expect(owesDelays(state), 0))
      payOwedDelays(state);
  }
  bool left = false;
  // A signal handler of the program ran while the thread paused to pay
  // before the call (the pause was cut short, and not by a sample signal).
  // Without the profiler the thread would have been inside the call, and a
  // sleep or an I/O wait would have returned EINTR: the sleep hooks return
  // that rather than wait for a signal that has come and gone.
  bool signal_while_paying = false;

private:
  void payBeforeCall() {
    uint32_t interruptions = state->pause_interruptions;
    sig_atomic_t samples = state->sample_signals;
    payOwedDelays(state);
    signal_while_paying =
        state->pause_interruptions != interruptions && state->sample_signals == samples;
  }
};

inline void plainCall() {
  if (ThreadState *state = tls_thread)
    state->sync_calls += !state->in_handler; // the program's calls, not libunwind's
}

// ---- Outcomes of a blocking call (OUTCOME in the table) -------------------------
//
// woken(r): another thread (or a signal handler) ended the wait: credited.
// timedOut(r): the call's own timer ended it: pays the delays inserted while
// it slept. Neither: it failed without waiting.

struct ZeroIsWoken {
  static bool woken(int r) { return r == 0; }
  static constexpr bool timedOut(int) { return false; }
};
struct ErrorNumber {
  static bool woken(int r) { return r == 0; }
  static bool timedOut(int r) { return r == ETIMEDOUT; }
};
struct MinusOneErrno {
  static bool woken(int r) { return r == 0; }
  static bool timedOut(int r) { return r != 0 && errno == ETIMEDOUT; }
};
struct BarrierPassed {
  static bool woken(int r) { return r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD; }
  static constexpr bool timedOut(int) { return false; }
};
struct SignalNumber {
  static bool woken(int r) { return r >= 0; }
  static constexpr bool timedOut(int) { return false; }
};
struct SignalOrEagain {
  static bool woken(int r) { return r >= 0; }
  static bool timedOut(int r) { return r < 0 && errno == EAGAIN; }
};
struct HandlerRan {
  static constexpr bool woken(int) { return true; }
  static constexpr bool timedOut(int) { return false; }
};

// ---- The kinds (KIND in the table) ------------------------------------------------
//
// Each calls the real function |Real| (a real_NAME of the table) with the
// arguments of the entry point. Always inlined into the entry points, which
// are in the forwarding section.

template <typename Outcome> struct Blocking {
  template <auto &Real, typename... Args>
  __attribute__((always_inline)) static auto call(Args... args) {
    BlockScope scope;
    auto r = resolved<Real>()(args...);
    if (Outcome::timedOut(r))
      scope.timedOut();
    scope.woken(Outcome::woken(r));
    return r;
  }
};

template <typename Outcome> struct WakingThenBlocking {
  template <auto &Real, typename... Args>
  __attribute__((always_inline)) static auto call(Args... args) {
    beforeWaking(); // a condition wait unlocks its mutex; the last arrival wakes the others
    return Blocking<Outcome>::template call<Real>(args...);
  }
};

struct Waking {
  template <auto &Real, typename... Args>
  __attribute__((always_inline)) static auto call(Args... args) {
    beforeWaking();
    return resolved<Real>()(args...);
  }
};

struct Trying {
  template <auto &Real, typename... Args>
  __attribute__((always_inline)) static auto call(Args... args) {
    plainCall();
    return resolved<Real>()(args...);
  }
};

struct Exec {
  template <auto &Real, typename... Args>
  __attribute__((always_inline)) static auto call(Args... args) {
    flushProfileBeforeExec();
    return resolved<Real>()(args...);
  }
};

} // namespace causal::rt::hooks

#endif // CAUSAL_RUNTIME_HOOKS_HOOKCORE_H
