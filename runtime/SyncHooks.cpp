//===- runtime/SyncHooks.cpp - Blocking, waking and sleeping calls, exec --===//
//
// Each function X of CAUSAL_SYNC_FUNCTIONS is implemented once (the *Impl
// functions below) and exposed twice: as __causal_hook_X, which the pass
// calls from instrumented code, and as X itself, which interposes the C
// library's X for code we did not compile (libcausal_rt.so comes before libc
// in the search order). Both call the real X through a pointer resolved with
// dlsym(RTLD_NEXT) at start-up, never each other, so one call is seen once
// (syscall() makes the system call itself: glibc's is nothing more).
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
//===----------------------------------------------------------------------===//

#include "Experiment.h"
#include "Runtime.h"
#include "Sampler.h"

#include "causal/abi.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace causal::rt {

/// Writes the pending profile block before the process image is replaced.
void flushProfileBeforeExec();

namespace {

template <typename F> F resolveReal(const char *name, const char *version) {
  void *symbol = version ? dlvsym(RTLD_NEXT, name, version) : nullptr;
  if (!symbol)
    symbol = dlsym(RTLD_NEXT, name);
  return reinterpret_cast<F>(symbol);
}

// The condition-variable functions have an old (GLIBC_2.2.5) and a current
// version; dlsym would return the old one.
#define CAUSAL_REAL_FUNCTIONS(X)                                                                   \
  X(pthread_mutex_lock, nullptr)                                                                   \
  X(pthread_mutex_trylock, nullptr)                                                                \
  X(pthread_mutex_timedlock, nullptr)                                                              \
  X(pthread_mutex_clocklock, nullptr)                                                              \
  X(pthread_mutex_unlock, nullptr)                                                                 \
  X(pthread_cond_wait, "GLIBC_2.3.2")                                                              \
  X(pthread_cond_timedwait, "GLIBC_2.3.2")                                                         \
  X(pthread_cond_clockwait, nullptr)                                                               \
  X(pthread_cond_signal, "GLIBC_2.3.2")                                                            \
  X(pthread_cond_broadcast, "GLIBC_2.3.2")                                                         \
  X(pthread_rwlock_rdlock, nullptr)                                                                \
  X(pthread_rwlock_tryrdlock, nullptr)                                                             \
  X(pthread_rwlock_timedrdlock, nullptr)                                                           \
  X(pthread_rwlock_clockrdlock, nullptr)                                                           \
  X(pthread_rwlock_wrlock, nullptr)                                                                \
  X(pthread_rwlock_trywrlock, nullptr)                                                             \
  X(pthread_rwlock_timedwrlock, nullptr)                                                           \
  X(pthread_rwlock_clockwrlock, nullptr)                                                           \
  X(pthread_rwlock_unlock, nullptr)                                                                \
  X(sem_wait, nullptr)                                                                             \
  X(sem_trywait, nullptr)                                                                          \
  X(sem_timedwait, nullptr)                                                                        \
  X(sem_clockwait, nullptr)                                                                        \
  X(sem_post, nullptr)                                                                             \
  X(pthread_barrier_wait, nullptr)                                                                 \
  X(pthread_join, nullptr)                                                                         \
  X(pthread_tryjoin_np, nullptr)                                                                   \
  X(pthread_timedjoin_np, nullptr)                                                                 \
  X(pthread_clockjoin_np, nullptr)                                                                 \
  X(pthread_exit, nullptr)                                                                         \
  X(pthread_kill, nullptr)                                                                         \
  X(pthread_sigqueue, nullptr)                                                                     \
  X(sigwait, nullptr)                                                                              \
  X(sigwaitinfo, nullptr)                                                                          \
  X(sigtimedwait, nullptr)                                                                         \
  X(sigsuspend, nullptr)                                                                           \
  X(nanosleep, nullptr)                                                                            \
  X(clock_nanosleep, nullptr)                                                                      \
  X(usleep, nullptr)                                                                               \
  X(sleep, nullptr)                                                                                \
  X(select, nullptr)                                                                               \
  X(pselect, nullptr)                                                                              \
  X(poll, nullptr)                                                                                 \
  X(ppoll, nullptr)                                                                                \
  X(epoll_wait, nullptr)                                                                           \
  X(epoll_pwait, nullptr)                                                                          \
  X(epoll_pwait2, nullptr)                                                                         \
  X(execve, nullptr)                                                                               \
  X(execv, nullptr)                                                                                \
  X(execvp, nullptr)                                                                               \
  X(execvpe, nullptr)                                                                              \
  X(fexecve, nullptr)

#define CAUSAL_DECLARE_REAL(name, version) decltype(&::name) real_##name = nullptr;
CAUSAL_REAL_FUNCTIONS(CAUSAL_DECLARE_REAL)
#undef CAUSAL_DECLARE_REAL

void resolveAll() {
#define CAUSAL_RESOLVE(name, version)                                                              \
  if (!real_##name)                                                                                \
    real_##name = resolveReal<decltype(&::name)>(#name, version);
  CAUSAL_REAL_FUNCTIONS(CAUSAL_RESOLVE)
#undef CAUSAL_RESOLVE
}

// Called before the runtime's own constructor if another constructor locks
// a mutex first: resolve on first use (not on the fast path afterwards).
#define REAL(name)                                                                                 \
  (__builtin_expect(real_##name != nullptr, 1) ? real_##name : (resolveAll(), real_##name))

__attribute__((constructor(101))) void resolveAtStartup() { resolveAll(); }

// ---- The two kinds of call --------------------------------------------------

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

// ---- Implementations (one per function) -------------------------------------

// The wrappers live in their own section, which attribution walks through
// (a sample in libc's lock code is charged to the caller's line, as it
// would be without us); the delay payment they call is runtime code.
#define CAUSAL_FORWARD __attribute__((section("causal_rt_forward")))

CAUSAL_FORWARD int mutexLockImpl(pthread_mutex_t *m) {
  BlockScope scope;
  int r = REAL(pthread_mutex_lock)(m);
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int mutexTrylockImpl(pthread_mutex_t *m) {
  plainCall();
  return REAL(pthread_mutex_trylock)(m);
}
CAUSAL_FORWARD int mutexTimedlockImpl(pthread_mutex_t *m, const struct timespec *t) {
  BlockScope scope;
  int r = REAL(pthread_mutex_timedlock)(m, t);
  if (r == ETIMEDOUT)
    scope.timedOut();
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int mutexClocklockImpl(pthread_mutex_t *m, clockid_t c, const struct timespec *t) {
  BlockScope scope;
  int r = REAL(pthread_mutex_clocklock)(m, c, t);
  if (r == ETIMEDOUT)
    scope.timedOut();
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int mutexUnlockImpl(pthread_mutex_t *m) {
  beforeWaking();
  return REAL(pthread_mutex_unlock)(m);
}
CAUSAL_FORWARD int condWaitImpl(pthread_cond_t *c, pthread_mutex_t *m) {
  beforeWaking(); // the wait unlocks |m|
  BlockScope scope;
  int r = REAL(pthread_cond_wait)(c, m);
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int condTimedwaitImpl(pthread_cond_t *c, pthread_mutex_t *m,
                                     const struct timespec *t) {
  beforeWaking();
  BlockScope scope;
  int r = REAL(pthread_cond_timedwait)(c, m, t);
  if (r == ETIMEDOUT)
    scope.timedOut(); // holding |m| again (docs/runtime.md, known limits)
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int condClockwaitImpl(pthread_cond_t *c, pthread_mutex_t *m, clockid_t k,
                                     const struct timespec *t) {
  beforeWaking();
  BlockScope scope;
  int r = REAL(pthread_cond_clockwait)(c, m, k, t);
  if (r == ETIMEDOUT)
    scope.timedOut();
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int condSignalImpl(pthread_cond_t *c) {
  beforeWaking();
  return REAL(pthread_cond_signal)(c);
}
CAUSAL_FORWARD int condBroadcastImpl(pthread_cond_t *c) {
  beforeWaking();
  return REAL(pthread_cond_broadcast)(c);
}
CAUSAL_FORWARD int rwRdlockImpl(pthread_rwlock_t *l) {
  BlockScope scope;
  int r = REAL(pthread_rwlock_rdlock)(l);
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int rwTryrdlockImpl(pthread_rwlock_t *l) {
  plainCall();
  return REAL(pthread_rwlock_tryrdlock)(l);
}
CAUSAL_FORWARD int rwTimedrdlockImpl(pthread_rwlock_t *l, const struct timespec *t) {
  BlockScope scope;
  int r = REAL(pthread_rwlock_timedrdlock)(l, t);
  if (r == ETIMEDOUT)
    scope.timedOut();
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int rwClockrdlockImpl(pthread_rwlock_t *l, clockid_t c, const struct timespec *t) {
  BlockScope scope;
  int r = REAL(pthread_rwlock_clockrdlock)(l, c, t);
  if (r == ETIMEDOUT)
    scope.timedOut();
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int rwWrlockImpl(pthread_rwlock_t *l) {
  BlockScope scope;
  int r = REAL(pthread_rwlock_wrlock)(l);
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int rwTrywrlockImpl(pthread_rwlock_t *l) {
  plainCall();
  return REAL(pthread_rwlock_trywrlock)(l);
}
CAUSAL_FORWARD int rwTimedwrlockImpl(pthread_rwlock_t *l, const struct timespec *t) {
  BlockScope scope;
  int r = REAL(pthread_rwlock_timedwrlock)(l, t);
  if (r == ETIMEDOUT)
    scope.timedOut();
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int rwClockwrlockImpl(pthread_rwlock_t *l, clockid_t c, const struct timespec *t) {
  BlockScope scope;
  int r = REAL(pthread_rwlock_clockwrlock)(l, c, t);
  if (r == ETIMEDOUT)
    scope.timedOut();
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int rwUnlockImpl(pthread_rwlock_t *l) {
  beforeWaking();
  return REAL(pthread_rwlock_unlock)(l);
}
CAUSAL_FORWARD int semWaitImpl(sem_t *s) {
  BlockScope scope;
  int r = REAL(sem_wait)(s);
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int semTrywaitImpl(sem_t *s) {
  plainCall();
  return REAL(sem_trywait)(s);
}
CAUSAL_FORWARD int semTimedwaitImpl(sem_t *s, const struct timespec *t) {
  BlockScope scope;
  int r = REAL(sem_timedwait)(s, t);
  if (r != 0 && errno == ETIMEDOUT)
    scope.timedOut();
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int semClockwaitImpl(sem_t *s, clockid_t c, const struct timespec *t) {
  BlockScope scope;
  int r = REAL(sem_clockwait)(s, c, t);
  if (r != 0 && errno == ETIMEDOUT)
    scope.timedOut();
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int semPostImpl(sem_t *s) {
  beforeWaking();
  return REAL(sem_post)(s);
}
CAUSAL_FORWARD int barrierWaitImpl(pthread_barrier_t *b) {
  beforeWaking(); // the last arrival wakes the others
  BlockScope scope;
  int r = REAL(pthread_barrier_wait)(b);
  scope.woken(r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
  return r;
}
CAUSAL_FORWARD int joinImpl(pthread_t t, void **v) {
  BlockScope scope;
  int r = REAL(pthread_join)(t, v);
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int tryjoinImpl(pthread_t t, void **v) {
  plainCall();
  return REAL(pthread_tryjoin_np)(t, v);
}
CAUSAL_FORWARD int timedjoinImpl(pthread_t t, void **v, const struct timespec *a) {
  BlockScope scope;
  int r = REAL(pthread_timedjoin_np)(t, v, a);
  if (r == ETIMEDOUT)
    scope.timedOut();
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int clockjoinImpl(pthread_t t, void **v, clockid_t c, const struct timespec *a) {
  BlockScope scope;
  int r = REAL(pthread_clockjoin_np)(t, v, c, a);
  if (r == ETIMEDOUT)
    scope.timedOut();
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD [[noreturn]] void exitImpl(void *v) {
  beforeWaking(); // joiners wake up
  REAL(pthread_exit)(v);
  __builtin_unreachable();
}
CAUSAL_FORWARD int killImpl(pthread_t t, int s) {
  beforeWaking();
  return REAL(pthread_kill)(t, s);
}
CAUSAL_FORWARD int sigqueueImpl(pthread_t t, int s, const union sigval v) {
  beforeWaking();
  return REAL(pthread_sigqueue)(t, s, v);
}
CAUSAL_FORWARD int sigwaitImpl(const sigset_t *set, int *sig) {
  BlockScope scope;
  int r = REAL(sigwait)(set, sig);
  scope.woken(r == 0);
  return r;
}
CAUSAL_FORWARD int sigwaitinfoImpl(const sigset_t *set, siginfo_t *info) {
  BlockScope scope;
  int r = REAL(sigwaitinfo)(set, info);
  scope.woken(r >= 0);
  return r;
}
CAUSAL_FORWARD int sigtimedwaitImpl(const sigset_t *set, siginfo_t *info,
                                    const struct timespec *t) {
  BlockScope scope;
  int r = REAL(sigtimedwait)(set, info, t);
  if (r < 0 && errno == EAGAIN)
    scope.timedOut();
  scope.woken(r >= 0);
  return r;
}
CAUSAL_FORWARD int sigsuspendImpl(const sigset_t *mask) {
  BlockScope scope;
  int r = REAL(sigsuspend)(mask);
  scope.woken(true); // returns when a signal handler ran
  return r;
}

// ---- Sleeps and waits with a timeout ---------------------------------------
//
// Each ends in one of three ways: its timer expired (timedOut: pays the
// delays inserted meanwhile), another thread or a signal ended it early
// (woken: credited), or it failed without waiting (neither).

// Waits that return a count of ready descriptors, 0 on timeout, -1 and errno.
inline void endReadinessWait(BlockScope &scope, int r) {
  if (r == 0)
    scope.timedOut();
  else
    scope.woken(r > 0 || errno == EINTR);
}

// A wait that a signal handler interrupts (EINTR whatever SA_RESTART says)
// when a handler ran before it (BlockScope::signal_while_paying): descriptors
// already ready win over a pending signal in the kernel too, so |probe|, the
// same wait with a zero timeout, decides; if nothing is ready, EINTR.
template <typename Probe> int interruptedWait(BlockScope &scope, Probe probe) {
  int r = probe();
  if (r == 0) {
    errno = EINTR;
    r = -1;
  }
  scope.woken(true);
  return r;
}

inline bool isZero(const struct timespec *t) { return t && t->tv_sec == 0 && t->tv_nsec == 0; }
inline bool isValidLength(const struct timespec *t) {
  return t && t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1000000000l;
}

// The descriptor sets of select, saved and restored around a probe (on EINTR
// the kernel leaves them as they were).
struct SavedFdSets {
  static constexpr size_t kWords = FD_SETSIZE / (8 * sizeof(unsigned long));
  unsigned long words[3][kWords];
  size_t used;
  fd_set *sets[3];
  SavedFdSets(int n, fd_set *r, fd_set *w, fd_set *e)
      : used((size_t(n) + 8 * sizeof(unsigned long) - 1) / (8 * sizeof(unsigned long))), sets{r, w,
                                                                                              e} {
    for (int i = 0; i < 3; ++i)
      if (sets[i])
        memcpy(words[i], sets[i], used * sizeof(unsigned long));
  }
  void restore() {
    for (int i = 0; i < 3; ++i)
      if (sets[i])
        memcpy(sets[i], words[i], used * sizeof(unsigned long));
  }
};

CAUSAL_FORWARD int nanosleepImpl(const struct timespec *req, struct timespec *rem) {
  BlockScope scope;
  if (__builtin_expect(scope.signal_while_paying, 0) && isValidLength(req) && !isZero(req)) {
    if (rem)
      *rem = *req; // interrupted at once: all of it is left
    errno = EINTR;
    scope.woken(true);
    return -1;
  }
  int r = REAL(nanosleep)(req, rem);
  if (r == 0)
    scope.timedOut();
  else
    scope.woken(errno == EINTR);
  return r;
}
CAUSAL_FORWARD int clockNanosleepImpl(clockid_t c, int flags, const struct timespec *req,
                                      struct timespec *rem) {
  BlockScope scope;
  if (__builtin_expect(scope.signal_while_paying, 0) && isValidLength(req) && !isZero(req)) {
    struct timespec zero = {0, 0}, now;
    bool past =
        (flags & TIMER_ABSTIME) && clock_gettime(c, &now) == 0 &&
        (now.tv_sec > req->tv_sec || (now.tv_sec == req->tv_sec && now.tv_nsec >= req->tv_nsec));
    int error = REAL(clock_nanosleep)(c, 0, &zero, nullptr); // EINVAL for a bad clock
    if (error == 0 && !past) {
      if (rem && !(flags & TIMER_ABSTIME))
        *rem = *req;
      scope.woken(true);
      return EINTR;
    }
  }
  int r = REAL(clock_nanosleep)(c, flags, req, rem); // an error number, errno untouched
  if (r == 0)
    scope.timedOut();
  else
    scope.woken(r == EINTR);
  return r;
}
CAUSAL_FORWARD int usleepImpl(useconds_t us) {
  BlockScope scope;
  if (__builtin_expect(scope.signal_while_paying, 0) && us != 0) {
    errno = EINTR;
    scope.woken(true);
    return -1;
  }
  int r = REAL(usleep)(us);
  if (r == 0)
    scope.timedOut();
  else
    scope.woken(errno == EINTR);
  return r;
}
CAUSAL_FORWARD unsigned sleepImpl(unsigned seconds) {
  BlockScope scope;
  if (__builtin_expect(scope.signal_while_paying, 0) && seconds != 0) {
    scope.woken(true);
    return seconds; // none of them slept
  }
  unsigned left = REAL(sleep)(seconds); // seconds not slept: a signal handler ran
  if (left == 0)
    scope.timedOut();
  else
    scope.woken(true);
  return left;
}
CAUSAL_FORWARD int selectImpl(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t) {
  BlockScope scope;
  if (__builtin_expect(scope.signal_while_paying, 0) && !(t && t->tv_sec == 0 && t->tv_usec == 0) &&
      n >= 0 && n <= FD_SETSIZE) {
    SavedFdSets saved(n, r, w, e);
    return interruptedWait(scope, [&] {
      struct timeval zero = {0, 0};
      int found = REAL(select)(n, r, w, e, &zero);
      if (found == 0)
        saved.restore();
      return found;
    });
  }
  int ready = REAL(select)(n, r, w, e, t);
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int pselectImpl(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t,
                               const sigset_t *mask) {
  BlockScope scope;
  if (__builtin_expect(scope.signal_while_paying, 0) && !isZero(t) && n >= 0 && n <= FD_SETSIZE) {
    SavedFdSets saved(n, r, w, e);
    return interruptedWait(scope, [&] {
      struct timespec zero = {0, 0};
      int found = REAL(pselect)(n, r, w, e, &zero, mask);
      if (found == 0)
        saved.restore();
      return found;
    });
  }
  int ready = REAL(pselect)(n, r, w, e, t, mask);
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int pollImpl(struct pollfd *fds, nfds_t n, int timeout_ms) {
  BlockScope scope;
  if (__builtin_expect(scope.signal_while_paying, 0) && timeout_ms != 0)
    return interruptedWait(scope, [&] { return REAL(poll)(fds, n, 0); });
  int ready = REAL(poll)(fds, n, timeout_ms);
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int ppollImpl(struct pollfd *fds, nfds_t n, const struct timespec *t,
                             const sigset_t *mask) {
  BlockScope scope;
  if (__builtin_expect(scope.signal_while_paying, 0) && !isZero(t))
    return interruptedWait(scope, [&] {
      struct timespec zero = {0, 0};
      return REAL(ppoll)(fds, n, &zero, mask);
    });
  int ready = REAL(ppoll)(fds, n, t, mask);
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int epollWaitImpl(int fd, struct epoll_event *events, int max, int timeout_ms) {
  BlockScope scope;
  if (__builtin_expect(scope.signal_while_paying, 0) && timeout_ms != 0)
    return interruptedWait(scope, [&] { return REAL(epoll_wait)(fd, events, max, 0); });
  int ready = REAL(epoll_wait)(fd, events, max, timeout_ms);
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int epollPwaitImpl(int fd, struct epoll_event *events, int max, int timeout_ms,
                                  const sigset_t *mask) {
  BlockScope scope;
  if (__builtin_expect(scope.signal_while_paying, 0) && timeout_ms != 0)
    return interruptedWait(scope, [&] { return REAL(epoll_pwait)(fd, events, max, 0, mask); });
  int ready = REAL(epoll_pwait)(fd, events, max, timeout_ms, mask);
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int epollPwait2Impl(int fd, struct epoll_event *events, int max,
                                   const struct timespec *t, const sigset_t *mask) {
  auto real = REAL(epoll_pwait2);
  if (!real) { // a C library older than 2.35
    errno = ENOSYS;
    return -1;
  }
  BlockScope scope;
  if (__builtin_expect(scope.signal_while_paying, 0) && !isZero(t))
    return interruptedWait(scope, [&] {
      struct timespec zero = {0, 0};
      return real(fd, events, max, &zero, mask);
    });
  int ready = real(fd, events, max, t, mask);
  endReadinessWait(scope, ready);
  return ready;
}

// syscall(): glibc's wrapper is the system call instruction and nothing else
// (no cancellation point), so it is made here directly, with its errno
// convention, and needs no real function. Only futex operations are looked
// at: waits are blocking calls, wakes waking calls.
long syscallWithErrno(long number, const long a[6]) {
  long r = rawSyscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
  if (static_cast<unsigned long>(r) > -4096ul) {
    errno = int(-r);
    return -1;
  }
  return r;
}

enum class FutexCall { Other, Wait, Wake };

FutexCall classifyFutex(long op) {
  switch (op & FUTEX_CMD_MASK) {
  case FUTEX_WAIT:
  case FUTEX_WAIT_BITSET:
  case FUTEX_WAIT_REQUEUE_PI:
  case FUTEX_LOCK_PI:
#ifdef FUTEX_LOCK_PI2
  case FUTEX_LOCK_PI2:
#endif
    return FutexCall::Wait;
  case FUTEX_WAKE:
  case FUTEX_WAKE_BITSET:
  case FUTEX_WAKE_OP:
  case FUTEX_REQUEUE:
  case FUTEX_CMP_REQUEUE:
  case FUTEX_CMP_REQUEUE_PI:
  case FUTEX_UNLOCK_PI:
    return FutexCall::Wake;
  default:
    return FutexCall::Other;
  }
}

CAUSAL_FORWARD long syscallImpl(long number, const long a[6]) {
  FutexCall kind = FutexCall::Other;
  if (number == SYS_futex)
    kind = classifyFutex(a[1]);
#ifdef SYS_futex_waitv
  else if (number == SYS_futex_waitv)
    kind = FutexCall::Wait;
#endif
  if (kind == FutexCall::Other)
    return syscallWithErrno(number, a);
  if (kind == FutexCall::Wake) {
    beforeWaking();
    return syscallWithErrno(number, a);
  }
  BlockScope scope;
  long r = syscallWithErrno(number, a);
  if (r < 0 && errno == ETIMEDOUT)
    scope.timedOut();
  else
    scope.woken(r >= 0 || errno == EINTR); // EAGAIN: the word had changed, no wait
  return r;
}

} // namespace
} // namespace causal::rt

using namespace causal::rt;

// ---- The two entry points of each function -------------------------------

#define CAUSAL_EXPOSE(ret, name, impl, params, args)                                               \
  extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD ret name params { return impl args; }                 \
  extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD ret __causal_hook_##name params { return impl args; }

CAUSAL_EXPOSE(int, pthread_mutex_lock, mutexLockImpl, (pthread_mutex_t * m), (m))
CAUSAL_EXPOSE(int, pthread_mutex_trylock, mutexTrylockImpl, (pthread_mutex_t * m), (m))
CAUSAL_EXPOSE(int, pthread_mutex_timedlock, mutexTimedlockImpl,
              (pthread_mutex_t * m, const struct timespec *t), (m, t))
CAUSAL_EXPOSE(int, pthread_mutex_clocklock, mutexClocklockImpl,
              (pthread_mutex_t * m, clockid_t c, const struct timespec *t), (m, c, t))
CAUSAL_EXPOSE(int, pthread_mutex_unlock, mutexUnlockImpl, (pthread_mutex_t * m), (m))
CAUSAL_EXPOSE(int, pthread_cond_wait, condWaitImpl, (pthread_cond_t * c, pthread_mutex_t *m),
              (c, m))
CAUSAL_EXPOSE(int, pthread_cond_timedwait, condTimedwaitImpl,
              (pthread_cond_t * c, pthread_mutex_t *m, const struct timespec *t), (c, m, t))
CAUSAL_EXPOSE(int, pthread_cond_clockwait, condClockwaitImpl,
              (pthread_cond_t * c, pthread_mutex_t *m, clockid_t k, const struct timespec *t),
              (c, m, k, t))
CAUSAL_EXPOSE(int, pthread_cond_signal, condSignalImpl, (pthread_cond_t * c), (c))
CAUSAL_EXPOSE(int, pthread_cond_broadcast, condBroadcastImpl, (pthread_cond_t * c), (c))
CAUSAL_EXPOSE(int, pthread_rwlock_rdlock, rwRdlockImpl, (pthread_rwlock_t * l), (l))
CAUSAL_EXPOSE(int, pthread_rwlock_tryrdlock, rwTryrdlockImpl, (pthread_rwlock_t * l), (l))
CAUSAL_EXPOSE(int, pthread_rwlock_timedrdlock, rwTimedrdlockImpl,
              (pthread_rwlock_t * l, const struct timespec *t), (l, t))
CAUSAL_EXPOSE(int, pthread_rwlock_clockrdlock, rwClockrdlockImpl,
              (pthread_rwlock_t * l, clockid_t c, const struct timespec *t), (l, c, t))
CAUSAL_EXPOSE(int, pthread_rwlock_wrlock, rwWrlockImpl, (pthread_rwlock_t * l), (l))
CAUSAL_EXPOSE(int, pthread_rwlock_trywrlock, rwTrywrlockImpl, (pthread_rwlock_t * l), (l))
CAUSAL_EXPOSE(int, pthread_rwlock_timedwrlock, rwTimedwrlockImpl,
              (pthread_rwlock_t * l, const struct timespec *t), (l, t))
CAUSAL_EXPOSE(int, pthread_rwlock_clockwrlock, rwClockwrlockImpl,
              (pthread_rwlock_t * l, clockid_t c, const struct timespec *t), (l, c, t))
CAUSAL_EXPOSE(int, pthread_rwlock_unlock, rwUnlockImpl, (pthread_rwlock_t * l), (l))
CAUSAL_EXPOSE(int, sem_wait, semWaitImpl, (sem_t * s), (s))
CAUSAL_EXPOSE(int, sem_trywait, semTrywaitImpl, (sem_t * s), (s))
CAUSAL_EXPOSE(int, sem_timedwait, semTimedwaitImpl, (sem_t * s, const struct timespec *t), (s, t))
CAUSAL_EXPOSE(int, sem_clockwait, semClockwaitImpl,
              (sem_t * s, clockid_t c, const struct timespec *t), (s, c, t))
CAUSAL_EXPOSE(int, sem_post, semPostImpl, (sem_t * s), (s))
CAUSAL_EXPOSE(int, pthread_barrier_wait, barrierWaitImpl, (pthread_barrier_t * b), (b))
CAUSAL_EXPOSE(int, pthread_join, joinImpl, (pthread_t t, void **v), (t, v))
CAUSAL_EXPOSE(int, pthread_tryjoin_np, tryjoinImpl, (pthread_t t, void **v), (t, v))
CAUSAL_EXPOSE(int, pthread_timedjoin_np, timedjoinImpl,
              (pthread_t t, void **v, const struct timespec *a), (t, v, a))
CAUSAL_EXPOSE(int, pthread_clockjoin_np, clockjoinImpl,
              (pthread_t t, void **v, clockid_t c, const struct timespec *a), (t, v, c, a))
CAUSAL_EXPOSE(int, pthread_kill, killImpl, (pthread_t t, int s), (t, s))
CAUSAL_EXPOSE(int, pthread_sigqueue, sigqueueImpl, (pthread_t t, int s, const union sigval v),
              (t, s, v))
CAUSAL_EXPOSE(int, sigwait, sigwaitImpl, (const sigset_t *set, int *sig), (set, sig))
CAUSAL_EXPOSE(int, sigwaitinfo, sigwaitinfoImpl, (const sigset_t *set, siginfo_t *info),
              (set, info))
CAUSAL_EXPOSE(int, sigtimedwait, sigtimedwaitImpl,
              (const sigset_t *set, siginfo_t *info, const struct timespec *t), (set, info, t))
CAUSAL_EXPOSE(int, sigsuspend, sigsuspendImpl, (const sigset_t *mask), (mask))

CAUSAL_EXPOSE(int, nanosleep, nanosleepImpl, (const struct timespec *req, struct timespec *rem),
              (req, rem))
CAUSAL_EXPOSE(int, clock_nanosleep, clockNanosleepImpl,
              (clockid_t c, int flags, const struct timespec *req, struct timespec *rem),
              (c, flags, req, rem))
CAUSAL_EXPOSE(int, usleep, usleepImpl, (useconds_t us), (us))
CAUSAL_EXPOSE(unsigned, sleep, sleepImpl, (unsigned seconds), (seconds))
CAUSAL_EXPOSE(int, select, selectImpl, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t),
              (n, r, w, e, t))
CAUSAL_EXPOSE(int, pselect, pselectImpl,
              (int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t,
               const sigset_t *mask),
              (n, r, w, e, t, mask))
CAUSAL_EXPOSE(int, poll, pollImpl, (struct pollfd * fds, nfds_t n, int timeout_ms),
              (fds, n, timeout_ms))
CAUSAL_EXPOSE(int, ppoll, ppollImpl,
              (struct pollfd * fds, nfds_t n, const struct timespec *t, const sigset_t *mask),
              (fds, n, t, mask))
CAUSAL_EXPOSE(int, epoll_wait, epollWaitImpl,
              (int fd, struct epoll_event *events, int max, int timeout_ms),
              (fd, events, max, timeout_ms))
CAUSAL_EXPOSE(int, epoll_pwait, epollPwaitImpl,
              (int fd, struct epoll_event *events, int max, int timeout_ms, const sigset_t *mask),
              (fd, events, max, timeout_ms, mask))
CAUSAL_EXPOSE(int, epoll_pwait2, epollPwait2Impl,
              (int fd, struct epoll_event *events, int max, const struct timespec *t,
               const sigset_t *mask),
              (fd, events, max, t, mask))

// Variadic: the six argument registers are forwarded whatever the call
// passed (reading unpassed ones reads whatever they hold, as glibc does).
#define CAUSAL_SYSCALL_ARGS(number)                                                                \
  long args[6];                                                                                    \
  va_list list;                                                                                    \
  va_start(list, number);                                                                          \
  for (long &arg : args)                                                                           \
    arg = va_arg(list, long);                                                                      \
  va_end(list);
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD long syscall(long number, ...) {
  CAUSAL_SYSCALL_ARGS(number)
  return syscallImpl(number, args);
}
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD long __causal_hook_syscall(long number, ...) {
  CAUSAL_SYSCALL_ARGS(number)
  return syscallImpl(number, args);
}

extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD void pthread_exit(void *value) { exitImpl(value); }
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD void __causal_hook_pthread_exit(void *value) {
  exitImpl(value);
}

// One implementation of pthread_create: the interposer in Runtime.cpp.
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int
__causal_hook_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                             void *arg) {
  return pthread_create(thread, attr, start, arg);
}

// ---- exec: write the pending records first --------------------------------

extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int execve(const char *path, char *const argv[],
                                                      char *const envp[]) {
  flushProfileBeforeExec();
  return REAL(execve)(path, argv, envp);
}
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int execv(const char *path, char *const argv[]) {
  flushProfileBeforeExec();
  return REAL(execv)(path, argv);
}
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int execvp(const char *file, char *const argv[]) {
  flushProfileBeforeExec();
  return REAL(execvp)(file, argv);
}
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int execvpe(const char *file, char *const argv[],
                                                       char *const envp[]) {
  flushProfileBeforeExec();
  return REAL(execvpe)(file, argv, envp);
}
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int fexecve(int fd, char *const argv[],
                                                       char *const envp[]) {
  flushProfileBeforeExec();
  return REAL(fexecve)(fd, argv, envp);
}

namespace {
// Collects the variadic arguments of the execl family (NULL-terminated),
// then |envp| for execle.
#define CAUSAL_COLLECT_ARGS(first, with_env)                                                       \
  size_t count = 1;                                                                                \
  va_list args;                                                                                    \
  va_start(args, first);                                                                           \
  while (va_arg(args, const char *))                                                               \
    ++count;                                                                                       \
  va_end(args);                                                                                    \
  const char *argv[count + 1];                                                                     \
  argv[0] = first;                                                                                 \
  va_start(args, first);                                                                           \
  for (size_t i = 1; i <= count; ++i)                                                              \
    argv[i] = va_arg(args, const char *);                                                          \
  char *const *envp = with_env ? va_arg(args, char *const *) : nullptr;                            \
  va_end(args);                                                                                    \
  (void)envp;
} // namespace

extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int execl(const char *path, const char *arg, ...) {
  CAUSAL_COLLECT_ARGS(arg, false)
  return execv(path, const_cast<char *const *>(argv));
}
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int execlp(const char *file, const char *arg, ...) {
  CAUSAL_COLLECT_ARGS(arg, false)
  return execvp(file, const_cast<char *const *>(argv));
}
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int execle(const char *path, const char *arg, ...) {
  CAUSAL_COLLECT_ARGS(arg, true)
  return execve(path, const_cast<char *const *>(argv), envp);
}

// For the runtime's tests: synchronization calls the calling thread made
// through either entry point (each call counts once), or UINT64_MAX if the
// thread is not profiled.
extern "C" CAUSAL_RT_EXPORT uint64_t __causal_test_sync_calls() {
  ThreadState *state = tls_thread;
  return state ? state->sync_calls : UINT64_MAX;
}

// For the runtime's tests: the global delay count, the calling thread's
// local count and the time it paused so far; false if it is not profiled.
extern "C" CAUSAL_RT_EXPORT bool __causal_test_delays(uint64_t *global, uint64_t *local,
                                                      uint64_t *paused) {
  ThreadState *state = tls_thread;
  if (!state)
    return false;
  *global = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  *local = state->local_delay_ns.load(std::memory_order_relaxed);
  *paused = state->paused_ns;
  return true;
}
