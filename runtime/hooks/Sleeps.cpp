//===- runtime/hooks/Sleeps.cpp - Sleeps, waits with a timeout, syscall() -===//
//
// The custom hooks of causal/hooks.def for the sleeps and the waits for
// readiness with a timeout, and syscall() (variadic), whose futex operations
// wait and wake.
//
//===----------------------------------------------------------------------===//

#include "Descriptors.h"
#include "HookCore.h"

#include <linux/futex.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>

namespace causal::rt::hooks {
namespace {

// ---- Sleeps and waits with a timeout ---------------------------------------
//
// Each ends in one of three ways: its timer expired (timedOut: pays the
// delays inserted meanwhile), another thread or a signal ended it early
// (woken: credited), or it failed without waiting (neither).

// Sleeps return 0 when they ran their length (their own timer ended them);
// else |interrupted| says whether a signal handler cut them short (credited)
// or they failed.
template <typename R> R endSleep(BlockScope &scope, R r, bool interrupted) {
  if (r == 0)
    scope.timedOut();
  else
    scope.woken(interrupted);
  return r;
}

// A sleep that a signal handler interrupts at once, as it would have without
// the pause (BlockScope::signal_while_paying): -1 and EINTR.
int interruptedAtOnce(BlockScope &scope) {
  errno = EINTR;
  scope.woken(true);
  return -1;
}

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

// --waits: a sleep that ran its length was ended by the timer; one cut
// short by a signal failed (nothing known ended it).
inline void endSleepEpisode(EpisodeScope &episode, bool ran_its_length) {
  if (ran_its_length)
    episode.end(wf::WaitEnd::TimedOut, wf::kPseudoTimer);
  else
    episode.end(wf::WaitEnd::Failed, wf::kPseudoUnknown);
}
// A wait for readiness: its timeout (the timer), something ready, or an
// error. Something ready was made ready by the last program thread that wrote
// to one of the ready descriptors during the wait (Descriptors.h), which
// |forEachReady| passes to a ReadyDescriptors; else by the network (a ready
// socket) or nothing known. |object|: the epoll descriptor, else the ready
// descriptor that woke it.
template <typename ForEachReady>
inline void endReadinessEpisode(EpisodeScope &episode, int ready, uint64_t object,
                                ForEachReady forEachReady) {
  if (__builtin_expect(episode.buffer == nullptr, 1))
    return;
  if (ready == 0) {
    episode.end(wf::WaitEnd::TimedOut, wf::kPseudoTimer, object);
  } else if (ready < 0) {
    episode.end(wf::WaitEnd::Failed, wf::kPseudoUnknown, object);
  } else {
    int saved = errno;
    uint64_t now = fastMonotonicNs();
    ReadyWaker waker{wf::kPseudoUnknown};
    if (now - episode.start >= CAUSAL_WAITS_MIN_EPISODE_NS) { // else not recorded
      ReadyDescriptors found(episode.start, now);
      forEachReady(found);
      waker = found.waker();
    }
    episode.end(wf::WaitEnd::Woken, waker.waker, object ? object : waker.object, waker.waker_pc);
    errno = saved;
  }
}
// The descriptors poll and ppoll found readable.
inline auto readyPollFds(const struct pollfd *fds, nfds_t n) {
  return [=](ReadyDescriptors &found) {
    for (nfds_t i = 0; i < n && !found.full(); ++i)
      if (fds[i].revents & (POLLIN | POLLPRI | POLLRDHUP | POLLHUP))
        found.add(fds[i].fd);
  };
}
// The descriptors select and pselect found readable.
inline auto readySelectFds(int n, const fd_set *r) {
  return [=](ReadyDescriptors &found) {
    for (int fd = 0; r && fd < n && fd < FD_SETSIZE && !found.full(); ++fd)
      if (FD_ISSET(fd, r))
        found.add(fd);
  };
}
// The descriptors of epoll's readable events (epoll_ctl's hook learnt which
// descriptor an event's data stands for).
inline auto readyEpollFds(int epfd, const struct epoll_event *events, int ready) {
  return [=](ReadyDescriptors &found) {
    for (int i = 0; i < ready && !found.full(); ++i)
      if (events[i].events & (EPOLLIN | EPOLLPRI | EPOLLRDHUP | EPOLLHUP))
        found.add(epollTarget(epfd, events[i].data.u64));
  };
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

} // namespace

CAUSAL_FORWARD int nanosleepHook(uint64_t caller, const struct timespec *req,
                                 struct timespec *rem) {
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Sleep, scope.state, caller);
  if (__builtin_expect(scope.signal_while_paying, 0) && isValidLength(req) && !isZero(req)) {
    if (rem)
      *rem = *req; // interrupted at once: all of it is left
    return interruptedAtOnce(scope);
  }
  int r = REAL(nanosleep)(req, rem);
  endSleepEpisode(episode, r == 0);
  return endSleep(scope, r, errno == EINTR);
}
CAUSAL_FORWARD int clock_nanosleepHook(uint64_t caller, clockid_t c, int flags,
                                       const struct timespec *req, struct timespec *rem) {
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Sleep, scope.state, caller);
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
  endSleepEpisode(episode, r == 0);
  return endSleep(scope, r, r == EINTR);
}
CAUSAL_FORWARD int usleepHook(uint64_t caller, useconds_t us) {
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Sleep, scope.state, caller);
  if (__builtin_expect(scope.signal_while_paying, 0) && us != 0)
    return interruptedAtOnce(scope);
  int r = REAL(usleep)(us);
  endSleepEpisode(episode, r == 0);
  return endSleep(scope, r, errno == EINTR);
}
CAUSAL_FORWARD unsigned sleepHook(uint64_t caller, unsigned seconds) {
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Sleep, scope.state, caller);
  if (__builtin_expect(scope.signal_while_paying, 0) && seconds != 0) {
    scope.woken(true);
    return seconds; // none of them slept
  }
  unsigned left = REAL(sleep)(seconds); // seconds not slept: a signal handler ran
  endSleepEpisode(episode, left == 0);
  return endSleep(scope, left, true);
}
CAUSAL_FORWARD int selectHook(uint64_t caller, int n, fd_set *r, fd_set *w, fd_set *e,
                              struct timeval *t) {
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Poll, scope.state, caller,
                       !(t && t->tv_sec == 0 && t->tv_usec == 0));
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
  endReadinessEpisode(episode, ready, 0, readySelectFds(n, r));
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int pselectHook(uint64_t caller, int n, fd_set *r, fd_set *w, fd_set *e,
                               const struct timespec *t, const sigset_t *mask) {
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Poll, scope.state, caller, !isZero(t));
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
  endReadinessEpisode(episode, ready, 0, readySelectFds(n, r));
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int pollHook(uint64_t caller, struct pollfd *fds, nfds_t n, int timeout_ms) {
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Poll, scope.state, caller, timeout_ms != 0);
  if (__builtin_expect(scope.signal_while_paying, 0) && timeout_ms != 0)
    return interruptedWait(scope, [&] { return REAL(poll)(fds, n, 0); });
  int ready = REAL(poll)(fds, n, timeout_ms);
  endReadinessEpisode(episode, ready, 0, readyPollFds(fds, n));
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int ppollHook(uint64_t caller, struct pollfd *fds, nfds_t n,
                             const struct timespec *t, const sigset_t *mask) {
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Poll, scope.state, caller, !isZero(t));
  if (__builtin_expect(scope.signal_while_paying, 0) && !isZero(t))
    return interruptedWait(scope, [&] {
      struct timespec zero = {0, 0};
      return REAL(ppoll)(fds, n, &zero, mask);
    });
  int ready = REAL(ppoll)(fds, n, t, mask);
  endReadinessEpisode(episode, ready, 0, readyPollFds(fds, n));
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int epoll_waitHook(uint64_t caller, int fd, struct epoll_event *events, int max,
                                  int timeout_ms) {
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Poll, scope.state, caller, timeout_ms != 0);
  if (__builtin_expect(scope.signal_while_paying, 0) && timeout_ms != 0)
    return interruptedWait(scope, [&] { return REAL(epoll_wait)(fd, events, max, 0); });
  int ready = REAL(epoll_wait)(fd, events, max, timeout_ms);
  endReadinessEpisode(episode, ready, uint64_t(fd), readyEpollFds(fd, events, ready));
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int epoll_pwaitHook(uint64_t caller, int fd, struct epoll_event *events, int max,
                                   int timeout_ms, const sigset_t *mask) {
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Poll, scope.state, caller, timeout_ms != 0);
  if (__builtin_expect(scope.signal_while_paying, 0) && timeout_ms != 0)
    return interruptedWait(scope, [&] { return REAL(epoll_pwait)(fd, events, max, 0, mask); });
  int ready = REAL(epoll_pwait)(fd, events, max, timeout_ms, mask);
  endReadinessEpisode(episode, ready, uint64_t(fd), readyEpollFds(fd, events, ready));
  endReadinessWait(scope, ready);
  return ready;
}
CAUSAL_FORWARD int epoll_pwait2Hook(uint64_t caller, int fd, struct epoll_event *events, int max,
                                    const struct timespec *t, const sigset_t *mask) {
  auto real = REAL(epoll_pwait2);
  if (!real) { // a C library older than 2.35
    errno = ENOSYS;
    return -1;
  }
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Poll, scope.state, caller, !isZero(t));
  if (__builtin_expect(scope.signal_while_paying, 0) && !isZero(t))
    return interruptedWait(scope, [&] {
      struct timespec zero = {0, 0};
      return real(fd, events, max, &zero, mask);
    });
  int ready = real(fd, events, max, t, mask);
  endReadinessEpisode(episode, ready, uint64_t(fd), readyEpollFds(fd, events, ready));
  endReadinessWait(scope, ready);
  return ready;
}

namespace {

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

CAUSAL_FORWARD long syscallHook(uint64_t caller, long number, const long a[6]) {
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
    if (waitsRecorded(wf::WaitKind::Futex) && number == SYS_futex)
      recordWake(uint64_t(a[0]), caller);
    return syscallWithErrno(number, a);
  }
  BlockScope scope;
  EpisodeScope episode(wf::WaitKind::Futex, scope.state, caller);
  long r = syscallWithErrno(number, a);
  if (__builtin_expect(episode.buffer != nullptr, 0)) {
    uint64_t word = number == SYS_futex ? uint64_t(a[0]) : 0;
    uint32_t waker = wf::kPseudoUnknown;
    uint64_t waker_pc = 0;
    if (r < 0 && errno == ETIMEDOUT)
      episode.end(wf::WaitEnd::TimedOut, wf::kPseudoTimer, word);
    else if (r >= 0 && word && wakerOf(wf::WaitKind::Futex, word, episode.start, &waker, &waker_pc))
      episode.end(wf::WaitEnd::Woken, waker, word, waker_pc);
    else
      episode.end(r >= 0 ? wf::WaitEnd::Woken : wf::WaitEnd::Failed, wf::kPseudoUnknown, word);
  }
  if (r < 0 && errno == ETIMEDOUT)
    scope.timedOut();
  else
    scope.woken(r >= 0 || errno == EINTR); // EAGAIN: the word had changed, no wait
  return r;
}

} // namespace
} // namespace causal::rt::hooks

using namespace causal::rt;

// Variadic: the six arguments are forwarded whatever the call passed
// (reading unpassed ones reads whatever they hold, as glibc does). Five
// travel in registers; the sixth is read from the caller's stack slot, where
// a call with fewer arguments has its own data: glibc's syscall reads it too.
// Not a memory error for ASan to report in a sanitized build of the runtime.
#define CAUSAL_READS_UNPASSED_ARGS __attribute__((no_sanitize("address")))
#define CAUSAL_SYSCALL_ARGS(number)                                                                \
  long args[6];                                                                                    \
  va_list list;                                                                                    \
  va_start(list, number);                                                                          \
  for (long &arg : args)                                                                           \
    arg = va_arg(list, long);                                                                      \
  va_end(list);
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD CAUSAL_READS_UNPASSED_ARGS long syscall(long number,
                                                                                   ...) {
  CAUSAL_SYSCALL_ARGS(number)
  return hooks::syscallHook(uint64_t(__builtin_return_address(0)), number, args);
}
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD CAUSAL_READS_UNPASSED_ARGS long
__causal_hook_syscall(long number, ...) {
  CAUSAL_SYSCALL_ARGS(number)
  return hooks::syscallHook(uint64_t(__builtin_return_address(0)), number, args);
}
