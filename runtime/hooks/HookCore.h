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
// resolved with dlsym(RTLD_NEXT) (dlvsym for a versioned one, HookTable.cpp) at start-up,
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
#include "WaitTargets.h"
#include "Waits.h"
#include "hooks/Descriptors.h"

#include "causal/hook_declarations.h"

#include <errno.h>
#include <fcntl.h>
#include <initializer_list>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <type_traits>
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
#define CAUSAL_IF_REAL_Io(M, ...) M(__VA_ARGS__)
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

// The implementations of the Custom and CustomNoReturn hooks (family files):
// NAME##Hook(caller, PARAMS...), |caller| the return address of the entry
// point (the program's line, for --waits).
#define CAUSAL_UNPAREN(...) __VA_ARGS__
#define CAUSAL_IMPLEMENTED_Custom(ret, name, params)                                               \
  ret name##Hook(uint64_t caller, CAUSAL_UNPAREN params);
#define CAUSAL_IMPLEMENTED_CustomNoReturn(ret, name, params)                                       \
  [[noreturn]] ret name##Hook(uint64_t caller, CAUSAL_UNPAREN params);
#define CAUSAL_IMPLEMENTED_Blocking(ret, name, params)
#define CAUSAL_IMPLEMENTED_WakingThenBlocking CAUSAL_IMPLEMENTED_Blocking
#define CAUSAL_IMPLEMENTED_Waking CAUSAL_IMPLEMENTED_Blocking
#define CAUSAL_IMPLEMENTED_Trying CAUSAL_IMPLEMENTED_Blocking
#define CAUSAL_IMPLEMENTED_Io CAUSAL_IMPLEMENTED_Blocking
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
#undef CAUSAL_IMPLEMENTED_Io
#undef CAUSAL_IMPLEMENTED_Exec
#undef CAUSAL_IMPLEMENTED_Variadic

// ---- The blocking scope and the waking call -----------------------------------

// Whether the thread owes delays, or may owe more than the global count
// says: during an experiment on a wait target the selected waits under way
// raise it only every poll step, so a hook brings it up to now first
// (WaitTargets.h). One branch on the fast path: the flag sits next to the
// global count.
inline bool mayOweDelays(const ThreadState *state) {
  uint64_t global = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  uint64_t local = state->local_delay_ns.load(std::memory_order_relaxed);
  uint32_t lazy = g_experiment.wait_target_active.load(std::memory_order_relaxed);
  return __builtin_expect((global > local) | (lazy != 0), 0);
}
inline bool owesDelaysUpToNow(const ThreadState *state) {
  if (g_experiment.wait_target_active.load(std::memory_order_relaxed))
    accrueSelectedWaits();
  return owesDelays(state);
}

// Counts a synchronization call of the program's (not libunwind's, inside
// the sample handler).
inline void countProgramCall(ThreadState *state) { state->sync_calls += !inRuntimeWork(state); }

__attribute__((always_inline)) inline void beforeWaking() {
  ThreadState *state = tls_thread;
  if (!state)
    return;
  countProgramCall(state);
  if (mayOweDelays(state) && owesDelaysUpToNow(state))
    payOwedDelays(state);
}

struct BlockScope {
  ThreadState *state;
  uint64_t global_before = 0;
  // --paths (runtime/Paths.h): when the call began, if the thread had a path
  // entry active (0: not timed). One load and a branch on the fast path.
  uint64_t path_block_start = 0;
  /// |time_path| false: the call is timed for --paths only from
  /// startPathBlock() on (a lock tried first).
  __attribute__((always_inline)) explicit BlockScope(bool time_path = true) : state(tls_thread) {
    if (state) {
      countProgramCall(state);
      if (mayOweDelays(state) && owesDelaysUpToNow(state))
        payBeforeCall();
      enterBlockingCall(state);
      global_before = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
      if (time_path)
        startPathBlock();
    }
  }
  /// Whether the thread has a path entry active (--paths): the call's time
  /// counts as blocked time then.
  __attribute__((always_inline)) bool pathTimed() const {
    return state && __builtin_expect(state->path_depth != 0, 0) && !inRuntimeWork(state);
  }
  __attribute__((always_inline)) void startPathBlock() {
    if (pathTimed()) { // not libunwind's locks in the sample handler
      path_block_start = fastMonotonicNs();
      // A write of the paths while the call lasts counts its time so far.
      __atomic_store_n(&state->path_block_since, path_block_start, __ATOMIC_RELAXED);
    }
  }
  __attribute__((always_inline)) ~BlockScope() {
    endPathBlock();
    if (state && !left)
      leaveBlockingCall(state);
  }
  // The call's time, up to its return, into the thread's blocked total (not
  // the delays a timed-out call pays after it).
  __attribute__((always_inline)) void endPathBlock() {
    if (__builtin_expect(path_block_start != 0, 0)) {
      __atomic_store_n(&state->path_block_since, uint64_t(0), __ATOMIC_RELAXED);
      __atomic_store_n(&state->path_blocked_ns,
                       state->path_blocked_ns + (fastMonotonicNs() - path_block_start),
                       __ATOMIC_RELAXED);
      path_block_start = 0;
    }
  }
  __attribute__((always_inline)) void woken(bool by_other_thread) {
    // No delay inserted meanwhile (nearly always): nothing to credit, no call.
    if (state && by_other_thread &&
        g_experiment.global_delay_ns.load(std::memory_order_relaxed) > global_before &&
        !inRuntimeWork(state))
      creditWakeUp(state, global_before);
  }
  // The call's own timer ended it: no credit, and the delays inserted while
  // it slept are paid now, before the program goes on (errno is kept).
  void timedOut() {
    if (!state)
      return;
    endPathBlock();
    leaveBlockingCall(state); // running again: the drain may wait for it
    left = true;
    applyWaitCredit(state); // a selected wait's (WaitTargets.h): before paying the others'
    if (__builtin_expect(owesDelays(state), 0))
      payOwedDelays(state);
  }
  bool left = false;
  // A signal of the program's came while the thread paused to pay before
  // the call (payOwedDelaysBeforeBlocking).
  // Without the profiler the thread would have been inside the call, and a
  // sleep or an I/O wait would have returned EINTR: the sleep hooks return
  // that rather than wait for a signal that has come and gone.
  bool signal_while_paying = false;

private:
  void payBeforeCall() { signal_while_paying = payOwedDelaysBeforeBlocking(state); }
};

inline void plainCall() {
  if (ThreadState *state = tls_thread)
    countProgramCall(state);
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

// ---- Waits (--waits, runtime/Waits.h) ----------------------------------------------
//
// The kind of wait of each hook comes from its name, here and nowhere else;
// the I/O hooks' kind (file, pipe, socket) is refined from the descriptor
// when the call returns.

constexpr bool startsWith(const char *text, const char *prefix) {
  for (; *prefix; ++text, ++prefix)
    if (*text != *prefix)
      return false;
  return true;
}
constexpr bool sameName(const char *a, const char *b) {
  for (; *a && *a == *b; ++a, ++b)
    ;
  return *a == *b;
}
constexpr bool nameIn(const char *name, std::initializer_list<const char *> names) {
  for (const char *n : names)
    if (sameName(name, n))
      return true;
  return false;
}

/// What a hook of the table waits in (or, for a waking hook, wakes).
constexpr wf::WaitKind waitKindOfHook(const char *name) {
  using K = wf::WaitKind;
  if (startsWith(name, "pthread_mutex_"))
    return K::Mutex;
  if (startsWith(name, "pthread_rwlock_"))
    return K::RwLock;
  if (startsWith(name, "pthread_cond_"))
    return K::CondVar;
  if (startsWith(name, "pthread_barrier_"))
    return K::Barrier;
  if (nameIn(name, {"pthread_join", "pthread_tryjoin_np", "pthread_timedjoin_np",
                    "pthread_clockjoin_np"}))
    return K::Join;
  if (startsWith(name, "sem_"))
    return K::Semaphore;
  if (startsWith(name, "pthread_spin_"))
    return K::Spin;
  if (startsWith(name, "sig") || nameIn(name, {"pthread_kill", "pthread_sigqueue"}))
    return K::Signal;
  if (nameIn(name, {"nanosleep", "clock_nanosleep", "usleep", "sleep"}))
    return K::Sleep;
  if (nameIn(name, {"select", "pselect", "poll", "ppoll"}) || startsWith(name, "epoll_"))
    return K::Poll;
  if (sameName(name, "syscall"))
    return K::Futex;
  if (nameIn(name, {"read", "write", "pread", "pwrite", "pread64", "pwrite64", "readv", "writev",
                    "fsync", "fdatasync", "__read_chk", "__pread_chk", "__pread64_chk"}))
    return K::FileIo; // refined: a pipe, a socket
  if (nameIn(name, {"accept", "accept4", "connect", "recv", "recvfrom", "recvmsg", "send", "sendto",
                    "sendmsg", "__recv_chk", "__recvfrom_chk"}))
    return K::SocketIo;
  return K::Other;
}

/// A condition wait unlocks its mutex (its second argument) before it
/// blocks: the waiters of that mutex are the ones it wakes.
constexpr bool wakesSecondArgument(const char *name) { return startsWith(name, "pthread_cond_"); }

/// I/O hooks whose data another thread may be waiting for (a pipe's reader).
constexpr bool writesData(const char *name) {
  return nameIn(name, {"write", "pwrite", "pwrite64", "writev", "send", "sendto", "sendmsg"});
}

/// The waker table's key of a hook's object (its first argument): a lock,
/// condition, semaphore, barrier or futex address; a thread to join.
template <wf::WaitKind Kind, typename T> inline uint64_t waitKey(T object) {
  uint64_t key;
  if constexpr (std::is_pointer_v<T>)
    key = uint64_t(reinterpret_cast<uintptr_t>(object));
  else
    key = uint64_t(object);
  return Kind == wf::WaitKind::Join ? (kJoinKeyTag | key) : key;
}
template <typename First, typename... Rest> inline First firstOf(First first, Rest...) {
  return first;
}
template <typename First, typename Second, typename... Rest>
inline Second secondOf(First, Second second, Rest...) {
  return second;
}

/// Waits that a wake-up may leave with their condition still false: their
/// waker is the first wake of the object after the wait began (the one that
/// ended it), and a wait begun right after one of them was woken, on the same
/// object, is a re-wait (wf::kEpisodeRewait).
constexpr bool mayWakeFalsely(wf::WaitKind kind) {
  return kind == wf::WaitKind::CondVar || kind == wf::WaitKind::Futex;
}

/// The waker of a wait on |key| from |start| that returned woken: for a
/// condition or a futex the first wake since it began, for the others (a
/// lock, a semaphore, a barrier, a join) the last one, who released it.
inline bool wakerOf(wf::WaitKind kind, uint64_t key, uint64_t start, uint32_t *waker,
                    uint64_t *waker_pc) {
  return mayWakeFalsely(kind) ? lookupFirstWaker(key, start, waker, waker_pc)
                              : lookupWaker(key, waker, waker_pc);
}

/// The episode of a blocking call that returned: woken by the waker of
/// |key| (wakerOf), its own timer, or failed.
template <wf::WaitKind Kind>
void noteBlockingEpisode(WaitBuffer *buffer, uint64_t start, uint64_t end, uint64_t caller,
                         uint64_t key, bool woken, bool timed_out) {
  if (end - start < CAUSAL_WAITS_MIN_EPISODE_NS)
    return;
  RawEpisode episode = {};
  episode.flags = rewaitFlag(buffer, key);
  episode.start_ns = start;
  episode.end_ns = end;
  episode.pc = caller;
  episode.kind = uint8_t(Kind);
  episode.object = key;
  episode.waker = wf::kPseudoUnknown;
  if (timed_out) {
    episode.end = uint8_t(wf::WaitEnd::TimedOut);
    episode.waker = wf::kPseudoTimer;
  } else if (woken) {
    episode.end = uint8_t(wf::WaitEnd::Woken);
    wakerOf(Kind, key, start, &episode.waker, &episode.waker_pc);
  } else {
    episode.end = uint8_t(wf::WaitEnd::Failed);
  }
  if (Kind == wf::WaitKind::Join) // the joined thread, if known
    episode.object = wf::isPseudoThread(episode.waker) ? 0 : episode.waker;
  if (appendEpisode(buffer, episode) && woken && mayWakeFalsely(Kind))
    noteWokenWait(buffer, key);
}

/// For the custom hooks (sleeps, waits for readiness, futexes): the episode
/// from its construction (after the blocking scope's payment) to end().
/// |may_block| false (a readiness check with a zero timeout): no episode, no
/// clock read; the call still counts as a hooked call between two waits.
struct EpisodeScope {
  WaitBuffer *buffer = nullptr;
  uint64_t start = 0;
  uint64_t caller;
  wf::WaitKind kind;
  ThreadState *recording = nullptr; // the thread, while its wait is recorded
  TargetWaitMark mark;
  EpisodeScope(wf::WaitKind kind, ThreadState *state, uint64_t caller, bool may_block = true)
      : caller(caller), kind(kind) {
    if (waitsRecorded(kind) && (buffer = recordingBuffer(state, caller))) {
      if (may_block) {
        start = fastMonotonicNs();
        recording = state;
        mark.begin(state, caller, start);
      } else {
        buffer = nullptr;
      }
    }
  }
  // Destroyed after the hook's outcome (BlockScope's woken() or timedOut())
  // and before its BlockScope: a selected wait's credit comes after the
  // call's own (WaitTargets.h).
  ~EpisodeScope() {
    if (__builtin_expect(recording != nullptr, 0)) {
      mark.end();
      applyWaitCredit(recording);
    }
  }
  /// Ended by |waker| (a tid or wf::PseudoThread), whose line is |waker_pc|.
  void end(wf::WaitEnd how, uint32_t waker, uint64_t object = 0, uint64_t waker_pc = 0) {
    if (__builtin_expect(buffer != nullptr, 0)) {
      int saved = errno;
      RawEpisode episode = {};
      if (mayWakeFalsely(kind))
        episode.flags = rewaitFlag(buffer, object);
      episode.start_ns = start;
      episode.end_ns = fastMonotonicNs();
      episode.object = object;
      episode.pc = caller;
      episode.waker_pc = waker_pc;
      episode.waker = waker;
      episode.kind = uint8_t(kind);
      episode.end = uint8_t(how);
      if (appendEpisode(buffer, episode) && how == wf::WaitEnd::Woken && mayWakeFalsely(kind) &&
          object)
        noteWokenWait(buffer, object);
      buffer = nullptr;
      errno = saved;
    }
  }
};

// ---- The kinds (KIND in the table) ------------------------------------------------
//
// Each calls the real function |Real| (a real_NAME of the table) with the
// arguments of the entry point. Always inlined into the entry points, which
// are in the forwarding section.

/// Whether |Real| is real_pthread_mutex_lock (other reals have other types).
template <auto &Real> constexpr bool isRealMutexLock() {
  if constexpr (std::is_same_v<decltype(&Real), decltype(&real_pthread_mutex_lock)>)
    return &Real == &real_pthread_mutex_lock;
  return false;
}

// With --waits, a blocking call of the table is recorded here, out of line
// (the hook's fast path keeps one branch); |caller| is the entry point's
// return address.
template <typename Outcome, wf::WaitKind Kind, auto &Real, typename... Args>
__attribute__((noinline)) CAUSAL_FORWARD auto recordedBlockingCall(uint64_t caller, Args... args) {
  BlockScope scope;
  WaitBuffer *buffer = recordingBuffer(scope.state, caller);
  if constexpr (isRealMutexLock<Real>()) {
    // A lock taken at once is no wait: no clock is read (two reads were
    // most of what --waits added to an uncontended lock). trylock answers as
    // lock would, but for EBUSY (held: by another thread, or this one's
    // error-checking mutex, whose lock then says EDEADLK).
    if (buffer) {
      int taken = resolved<real_pthread_mutex_trylock>()(args...);
      if (taken != EBUSY) {
        scope.woken(Outcome::woken(taken));
        return taken;
      }
    }
  }
  uint64_t start = buffer ? fastMonotonicNs() : 0;
  TargetWaitMark mark;
  if (buffer)
    mark.begin(scope.state, caller, start);
  auto r = resolved<Real>()(args...);
  bool timed_out = Outcome::timedOut(r);
  bool woken = Outcome::woken(r);
  if (buffer) {
    int saved = errno;
    noteBlockingEpisode<Kind>(buffer, start, fastMonotonicNs(), caller,
                              waitKey<Kind>(firstOf(args...)), woken, timed_out);
    errno = saved;
  }
  if (timed_out)
    scope.timedOut();
  scope.woken(woken);
  if (buffer) { // a selected wait's credit, after the call's own (WaitTargets.h)
    mark.end();
    applyWaitCredit(scope.state);
  }
  return r;
}

template <typename Outcome, wf::WaitKind Kind> struct Blocking {
  template <auto &Real, typename... Args>
  __attribute__((always_inline)) static auto call(Args... args) {
    if (waitsRecorded(Kind))
      return recordedBlockingCall<Outcome, Kind, Real>(uint64_t(__builtin_return_address(0)),
                                                       args...);
    return unrecorded<Real>(args...);
  }
  template <auto &Real, typename... Args>
  __attribute__((always_inline)) static auto unrecorded(Args... args) {
    if constexpr (isRealMutexLock<Real>()) {
      BlockScope scope(/*time_path=*/false);
      // With a path entry active (--paths), a lock taken at once blocked
      // for no time: no clock is read (two reads were most of what an
      // uncontended lock cost then). trylock answers as lock would, but for
      // EBUSY (see recordedBlockingCall).
      if (scope.pathTimed()) {
        int taken = resolved<real_pthread_mutex_trylock>()(args...);
        if (taken != EBUSY) {
          scope.woken(Outcome::woken(taken));
          return taken;
        }
        scope.startPathBlock();
      }
      auto r = resolved<Real>()(args...);
      if (Outcome::timedOut(r))
        scope.timedOut();
      scope.woken(Outcome::woken(r));
      return r;
    }
    BlockScope scope;
    auto r = resolved<Real>()(args...);
    if (Outcome::timedOut(r))
      scope.timedOut();
    scope.woken(Outcome::woken(r));
    return r;
  }
};

template <typename Outcome, wf::WaitKind Kind, bool WakesSecond> struct WakingThenBlocking {
  template <auto &Real, typename... Args>
  __attribute__((always_inline)) static auto call(Args... args) {
    beforeWaking(); // a condition wait unlocks its mutex; the last arrival wakes the others
    if (waitsRecorded(Kind)) {
      uint64_t caller = uint64_t(__builtin_return_address(0));
      if constexpr (WakesSecond) // not progress: a false wake-up's re-wait unlocks too
        recordWake(waitKey<wf::WaitKind::Mutex>(secondOf(args...)), caller, false, false);
      else
        recordWake(waitKey<Kind>(firstOf(args...)), caller, true, mayWakeFalsely(Kind));
      return recordedBlockingCall<Outcome, Kind, Real>(caller, args...);
    }
    return Blocking<Outcome, Kind>::template unrecorded<Real>(args...);
  }
};

template <wf::WaitKind Kind> struct Waking {
  template <auto &Real, typename... Args>
  __attribute__((always_inline)) static auto call(Args... args) {
    beforeWaking();
    if constexpr (Kind != wf::WaitKind::Signal) // nothing reads who sent a signal
      if (waitsRecorded(Kind))
        recordWake(waitKey<Kind>(firstOf(args...)), uint64_t(__builtin_return_address(0)), true,
                   mayWakeFalsely(Kind));
    return resolved<Real>()(args...);
  }
};

// An I/O call on a descriptor (its first argument), recorded: what the
// descriptor is says the kind and who ended the wait: the last program thread
// that wrote what it reads (a pipe, a socket between two of its threads, an
// eventfd: Descriptors.h), the device of a file (its disk pseudo-thread), the
// network for a socket with no program writer. A write records its writer
// for the reader before it writes (the reader may run at once).
inline bool describeDescriptor(int fd, struct stat *st) {
  return rawSyscall(SYS_fstat, fd, reinterpret_cast<long>(st)) == 0;
}
// A regular file, a directory or a block device: its I/O waits for a disk.
inline bool isOnADisk(const struct stat &st) {
  return S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode);
}
// The disk pseudo-thread of a file's device. The format gives disks
// 0xFFFFFF10 + minor: the last 16 minors would wrap around into real tids;
// they share the last disk id.
inline uint32_t diskOf(const struct stat &st) {
  uint32_t minor_low = minor(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev) & 0xff;
  return wf::kPseudoDiskBase + (minor_low > 0xef ? 0xef : minor_low);
}
// A call on a pipe, socket or eventfd in non-blocking mode (O_NONBLOCK), or
// one that failed with EAGAIN, did not wait: its time is the kernel's work
// (a server's non-blocking reads and writes would otherwise be most of its
// "waits"). A file's I/O waits for its device whatever the mode.
inline bool mayHaveWaited(int fd, const struct stat &st, int error) {
  if (isOnADisk(st))
    return true;
  if (error == EAGAIN || error == EWOULDBLOCK)
    return false;
  long flags = rawSyscall(SYS_fcntl, fd, F_GETFL);
  return flags < 0 || !(flags & O_NONBLOCK);
}
template <auto &Real, bool Writes, typename... Args>
__attribute__((noinline)) CAUSAL_FORWARD auto recordedIoCall(uint64_t caller, Args... args) {
  WaitBuffer *buffer = recordingBuffer(tls_thread, caller);
  if (!buffer)
    return resolved<Real>()(args...);
  int fd = int(firstOf(args...));
  struct stat st;
  bool described = false;
  if (Writes) {
    described = describeDescriptor(fd, &st);
    if (described) {
      DescriptorFlow flow = describeFlow(fd, st);
      if (flow.outgoing)
        recordWake(flow.outgoing, caller);
    }
  }
  uint64_t start = fastMonotonicNs();
  TargetWaitMark mark;
  mark.begin(tls_thread, caller, start);
  auto r = resolved<Real>()(args...);
  uint64_t end = fastMonotonicNs();
  if (end - start < CAUSAL_WAITS_MIN_EPISODE_NS)
    return r;
  int saved = errno;
  if ((described || describeDescriptor(fd, &st)) && mayHaveWaited(fd, st, r < 0 ? saved : 0)) {
    RawEpisode episode = {};
    episode.start_ns = start;
    episode.end_ns = end;
    episode.object = uint64_t(fd);
    episode.pc = caller;
    episode.end = uint8_t(r < 0 ? wf::WaitEnd::Failed : wf::WaitEnd::Woken);
    episode.flags = Writes ? kRawEpisodeWrote : 0;
    episode.waker = wf::kPseudoUnknown;
    if (isOnADisk(st)) {
      episode.kind = uint8_t(wf::WaitKind::FileIo);
      episode.waker = diskOf(st);
    } else {
      episode.kind = uint8_t(S_ISFIFO(st.st_mode)   ? wf::WaitKind::PipeIo
                             : S_ISSOCK(st.st_mode) ? wf::WaitKind::SocketIo
                                                    : wf::WaitKind::Other);
      DescriptorFlow flow = describeFlow(fd, st);
      if (flow.socket)
        episode.waker = wf::kPseudoNetwork;
      if (!Writes && r >= 0 && flow.incoming) // whoever wrote what it read
        lookupWaker(flow.incoming, &episode.waker, &episode.waker_pc);
    }
    if (r < 0)
      episode.waker = wf::kPseudoUnknown;
    appendEpisode(buffer, episode);
  }
  errno = saved;
  return r;
}

template <bool Writes> struct Io {
  template <auto &Real, typename... Args>
  __attribute__((always_inline)) static auto call(Args... args) {
    if (waitsRecorded(wf::WaitKind::FileIo))
      return recordedIoCall<Real, Writes>(uint64_t(__builtin_return_address(0)), args...);
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
