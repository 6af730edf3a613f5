//===- test/unit/runtime/sleep_target.cpp - Program for the sleep hook tests -===//
//
// Linked with libcausal_rt.so like experiment_target. Registers a line table
// for busyLine ("sleep_busy.cpp:5") and a throughput counter "tick".
// argv[1]:
//   semantics HOOKS  calls every sleep and timed wait (through the hooks if
//                    HOOKS is 1, else through the interposed functions) and
//                    checks return values, errno, remaining-time outputs and
//                    EINTR against what the C library documents; prints
//                    "ok NAME" or "FAIL NAME: why" per check, then "checks=N"
//   timer            a busy thread runs busyLine (the line a test selects);
//                    another thread makes 5 ms sleeps and timed waits that
//                    end by their timer; per function, prints the delays
//                    inserted while it slept and the time it paused in the call
//   woken            the same, but each wait is ended early by a third thread
//                    (pipe write, futex wake, sem_post, signal)
//   signal-in-payment  the thread owes about 100 ms (it waited in read(),
//                    which is no hook), calls a 2 s sleep (nanosleep, poll,
//                    select), and a signal arrives during the payment
//                    before the call: the sleep returns EINTR at once, as it
//                    would have had the thread been in it; prints per call
//                    the debt, the pause, the result and the time it took
//   pause-span       a thread runs up a debt of about 0.2 ms in raw sleeps (no
//                    hook) and pays it in pthread_cond_signal (a waking hook);
//                    prints the 10th percentile and the median, over the calls that
//                    paused, of the call's wall time less the time counted as
//                    paused, and of the same call with nothing owed
//   progress         a thread's work alternates with a progress point visited
//                    as the pass emits it (flag check, settle call,
//                    increment); counts the visits at which the thread had
//                    not paid what it owed before the check
//   latency-edges MS  one thread runs requests of a latency point "req" (30 us
//                    in flight, 30 us not, visits as the pass emits them) for
//                    MS ms, so that visits race the edges of every window
//   late-debt MS     a busy thread runs busyLine; another sleeps 4 ms (woken by
//                    its timer, it pays what was inserted meanwhile), then runs
//                    a request of "req": 100 us of spinning between its visits;
//                    for MS ms. It reaches each visit still owing what was
//                    inserted while it paid; prints the requests and the
//                    visits made owing
//   idle-pause idle|wanted
//                    a busy thread runs busyLine; another runs up debts of
//                    about 1.5 ms in raw sleeps and pays them in
//                    pthread_cond_signal, while main waits in a join (idle)
//                    or while one more thread spins outside busyLine
//                    (wanted); prints how many pauses spun through, slept
//                    and spun their last part, or slept
//
//===----------------------------------------------------------------------===//

#include "TargetSupport.h"

#include "causal/abi.h"

#include <algorithm>
#include <atomic>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <memory>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

extern "C" void __causal_register_module(const void *start, const void *stop);
extern "C" void __causal_register_counters(causal_counter *start, causal_counter *stop);
extern "C" uint64_t __causal_test_sync_calls();
extern "C" bool __causal_test_delays(uint64_t *global, uint64_t *local, uint64_t *paused,
                                     uint64_t *overshoot);
extern "C" const char __start_causal_sleep_busy[], __stop_causal_sleep_busy[];

using causal::test::nowNs;

namespace {

timespec relative(uint64_t ns) { return {time_t(ns / 1000000000ull), long(ns % 1000000000ull)}; }

timespec deadline(clockid_t clock, uint64_t ns) {
  uint64_t at = nowNs(clock) + ns;
  return relative(at);
}

} // namespace

__attribute__((noinline, section("causal_sleep_busy"))) uint64_t busyLine(uint64_t cpu_ns) {
  return causal::test::burnCpu(cpu_ns, 2000);
}

namespace {

// Never destroyed: the runtime writes the profile from its exit destructor,
// which runs after static destructors and still reads the registered tables.
std::unique_ptr<causal::test::InMemoryLineTable> &g_table =
    *new std::unique_ptr<causal::test::InMemoryLineTable>;
causal_counter g_tick[] = {{0, "tick", CAUSAL_COUNTER_THROUGHPUT, 0}};

// ---- The functions under test, through either entry point ----------------

#define SLEEP_FUNCTIONS(X)                                                                         \
  X(nanosleep)                                                                                     \
  X(clock_nanosleep)                                                                               \
  X(usleep)                                                                                        \
  X(sleep)                                                                                         \
  X(select)                                                                                        \
  X(pselect)                                                                                       \
  X(poll)                                                                                          \
  X(ppoll)                                                                                         \
  X(epoll_wait)                                                                                    \
  X(epoll_pwait)                                                                                   \
  X(epoll_pwait2)                                                                                  \
  X(syscall)                                                                                       \
  X(sem_timedwait)                                                                                 \
  X(pthread_mutex_timedlock)                                                                       \
  X(pthread_cond_timedwait)                                                                        \
  X(pthread_rwlock_timedwrlock)                                                                    \
  X(sigtimedwait)

#define DECLARE_ENTRY(name) decltype(&::name) g_##name = &::name;
SLEEP_FUNCTIONS(DECLARE_ENTRY)
#undef DECLARE_ENTRY

bool useHooks() {
  bool all = true;
#define RESOLVE_HOOK(name)                                                                         \
  g_##name = reinterpret_cast<decltype(&::name)>(dlsym(RTLD_DEFAULT, "__causal_hook_" #name));     \
  all = all && g_##name;
  SLEEP_FUNCTIONS(RESOLVE_HOOK)
#undef RESOLVE_HOOK
  return all;
}

void setUp() {
  using causal::test::InMemoryLineTable;
  g_table = std::make_unique<InMemoryLineTable>(InMemoryLineTable::singleLine(
      __start_causal_sleep_busy, uint32_t(__stop_causal_sleep_busy - __start_causal_sleep_busy),
      "sleep_busy.cpp", 5));
  __causal_register_module(g_table->start(), g_table->stop());
  __causal_register_counters(g_tick, g_tick + 1);
}

void onSignal(int) {}

void installSignalHandler() {
  struct sigaction action = {};
  action.sa_handler = onSignal; // no SA_RESTART: interrupted calls fail with EINTR
  sigaction(SIGUSR1, &action, nullptr);
}

// Sends SIGUSR1 to |target| after |ms| (another thread: the wait is under way).
std::thread interruptAfter(pthread_t target, int ms) {
  return std::thread([target, ms] {
    usleep(useconds_t(ms) * 1000);
    pthread_kill(target, SIGUSR1);
  });
}

std::atomic<bool> g_stop{false};

void busyThread() {
  while (!g_stop.load(std::memory_order_relaxed))
    busyLine(200000);
}

// ---- semantics ----------------------------------------------------------------

int g_checks = 0, g_failures = 0;

void report(const char *name, bool ok, const std::string &why) {
  ++g_checks;
  if (ok) {
    printf("ok %s\n", name);
  } else {
    ++g_failures;
    printf("FAIL %s: %s\n", name, why.c_str());
  }
}

std::string describe(long r, int e) {
  return "returned " + std::to_string(r) + ", errno " + std::to_string(e) + " (" + strerror(e) +
         ")";
}

// One call seen once by the runtime (either entry point), or not at all
// (|counted| false: a system call that is not a futex operation).
struct CallCount {
  uint64_t before = __causal_test_sync_calls();
  bool once(bool counted = true) const {
    if (before == UINT64_MAX)
      return true; // the runtime is disabled: it counts nothing
    return __causal_test_sync_calls() - before == (counted ? 1u : 0u);
  }
};

constexpr int kErrnoSentinel = 7777; // a successful call leaves errno alone

void checkNanosleep() {
  timespec req = relative(1000000), rem = {9, 9};
  errno = kErrnoSentinel;
  CallCount calls;
  int r = g_nanosleep(&req, &rem);
  report("nanosleep-expires", r == 0 && errno == kErrnoSentinel && calls.once(),
         describe(r, errno));
  req = {0, 2000000000l};
  r = g_nanosleep(&req, nullptr);
  report("nanosleep-einval", r == -1 && errno == EINVAL, describe(r, errno));
  req = relative(2000000000ull);
  std::thread interrupt = interruptAfter(pthread_self(), 50);
  r = g_nanosleep(&req, &rem);
  int e = errno;
  interrupt.join();
  uint64_t left = uint64_t(rem.tv_sec) * 1000000000ull + uint64_t(rem.tv_nsec);
  report("nanosleep-eintr-rem",
         r == -1 && e == EINTR && left > 1000000000ull && left < 2000000000ull,
         describe(r, e) + ", rem " + std::to_string(left));
}

void checkClockNanosleep() {
  timespec req = relative(1000000), rem = {9, 9};
  errno = kErrnoSentinel;
  CallCount calls;
  int r = g_clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
  report("clock_nanosleep-expires", r == 0 && errno == kErrnoSentinel && calls.once(),
         describe(r, errno));
  timespec past = {0, 1};
  r = g_clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &past, nullptr);
  report("clock_nanosleep-abstime-past", r == 0 && errno == kErrnoSentinel, describe(r, errno));
  // Errors are returned, errno stays as it was.
  r = g_clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &req, nullptr);
  report("clock_nanosleep-einval", r == EINVAL && errno == kErrnoSentinel, describe(r, errno));
  req = relative(2000000000ull);
  std::thread interrupt = interruptAfter(pthread_self(), 50);
  r = g_clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
  interrupt.join();
  uint64_t left = uint64_t(rem.tv_sec) * 1000000000ull + uint64_t(rem.tv_nsec);
  report("clock_nanosleep-eintr-rem",
         r == EINTR && errno == kErrnoSentinel && left > 1000000000ull && left < 2000000000ull,
         describe(r, errno) + ", rem " + std::to_string(left));
}

void checkUsleepAndSleep() {
  errno = kErrnoSentinel;
  CallCount calls;
  int r = g_usleep(1000);
  report("usleep-expires", r == 0 && errno == kErrnoSentinel && calls.once(), describe(r, errno));
  std::thread interrupt = interruptAfter(pthread_self(), 50);
  r = g_usleep(2000000);
  int e = errno;
  interrupt.join();
  report("usleep-eintr", r == -1 && e == EINTR, describe(r, e));

  CallCount sleep_calls;
  unsigned left = g_sleep(0);
  report("sleep-zero", left == 0 && sleep_calls.once(), "returned " + std::to_string(left));
  interrupt = interruptAfter(pthread_self(), 50);
  left = g_sleep(3);
  interrupt.join();
  report("sleep-interrupted-returns-unslept", left >= 2 && left <= 3,
         "returned " + std::to_string(left));
}

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() {
    if (pipe(fds) != 0)
      abort();
  }
  ~Pipe() {
    close(fds[0]);
    close(fds[1]);
  }
  void fill() {
    char byte = 'x';
    if (write(fds[1], &byte, 1) != 1)
      abort();
  }
};

// A descriptor number that is not open.
int closedFd() {
  int fd = dup(0);
  close(fd);
  return fd;
}

void checkSelect() {
  timeval tv = {0, 1000};
  errno = kErrnoSentinel;
  CallCount calls;
  int r = g_select(0, nullptr, nullptr, nullptr, &tv);
  report("select-timeout-updates-timeval",
         r == 0 && tv.tv_sec == 0 && tv.tv_usec == 0 && errno == kErrnoSentinel && calls.once(),
         describe(r, errno) + ", left " + std::to_string(tv.tv_usec));
  Pipe p;
  p.fill();
  fd_set readable;
  FD_ZERO(&readable);
  FD_SET(p.fds[0], &readable);
  tv = {1, 0};
  r = g_select(p.fds[0] + 1, &readable, nullptr, nullptr, &tv);
  report("select-ready", r == 1 && FD_ISSET(p.fds[0], &readable) && tv.tv_sec == 0,
         describe(r, errno));
  int bad = closedFd();
  FD_ZERO(&readable);
  FD_SET(bad, &readable);
  tv = {0, 1000};
  r = g_select(bad + 1, &readable, nullptr, nullptr, &tv);
  report("select-ebadf", r == -1 && errno == EBADF, describe(r, errno));
  tv = {2, 0};
  std::thread interrupt = interruptAfter(pthread_self(), 50);
  r = g_select(0, nullptr, nullptr, nullptr, &tv);
  int e = errno;
  interrupt.join();
  report("select-eintr-updates-timeval", r == -1 && e == EINTR && tv.tv_sec == 1,
         describe(r, e) + ", left " + std::to_string(tv.tv_sec) + " s");

  timespec ts = relative(1000000);
  errno = kErrnoSentinel;
  CallCount pcalls;
  r = g_pselect(0, nullptr, nullptr, nullptr, &ts, nullptr);
  report("pselect-timeout-keeps-timespec",
         r == 0 && ts.tv_nsec == 1000000 && errno == kErrnoSentinel && pcalls.once(),
         describe(r, errno));
  FD_ZERO(&readable);
  FD_SET(p.fds[0], &readable);
  r = g_pselect(p.fds[0] + 1, &readable, nullptr, nullptr, &ts, nullptr);
  report("pselect-ready", r == 1 && FD_ISSET(p.fds[0], &readable), describe(r, errno));
  ts = relative(2000000000ull);
  interrupt = interruptAfter(pthread_self(), 50);
  r = g_pselect(0, nullptr, nullptr, nullptr, &ts, nullptr);
  e = errno;
  interrupt.join();
  report("pselect-eintr", r == -1 && e == EINTR, describe(r, e));
}

void checkPoll() {
  errno = kErrnoSentinel;
  CallCount calls;
  int r = g_poll(nullptr, 0, 1);
  report("poll-timeout", r == 0 && errno == kErrnoSentinel && calls.once(), describe(r, errno));
  Pipe p;
  p.fill();
  pollfd fd = {p.fds[0], POLLIN, 0};
  r = g_poll(&fd, 1, 1000);
  report("poll-ready", r == 1 && fd.revents == POLLIN, describe(r, errno));
  // More descriptors than RLIMIT_NOFILE: EINVAL. The array really holds
  // them (ASan's poll interceptor reads every entry before the kernel
  // refuses), under a soft limit lowered to 64 for the call.
  rlimit limit;
  getrlimit(RLIMIT_NOFILE, &limit);
  rlimit lowered = limit;
  lowered.rlim_cur = std::min<rlim_t>(limit.rlim_cur, 64);
  setrlimit(RLIMIT_NOFILE, &lowered);
  std::vector<pollfd> tooMany(lowered.rlim_cur + 1, fd);
  r = g_poll(tooMany.data(), tooMany.size(), 0);
  int einval = errno;
  setrlimit(RLIMIT_NOFILE, &limit);
  report("poll-einval", r == -1 && einval == EINVAL, describe(r, einval));
  std::thread interrupt = interruptAfter(pthread_self(), 50);
  r = g_poll(nullptr, 0, 2000);
  int e = errno;
  interrupt.join();
  report("poll-eintr", r == -1 && e == EINTR, describe(r, e));

  timespec ts = relative(1000000);
  errno = kErrnoSentinel;
  CallCount pcalls;
  r = g_ppoll(nullptr, 0, &ts, nullptr);
  report("ppoll-timeout", r == 0 && errno == kErrnoSentinel && pcalls.once(), describe(r, errno));
  fd.revents = 0;
  r = g_ppoll(&fd, 1, &ts, nullptr);
  report("ppoll-ready", r == 1 && fd.revents == POLLIN, describe(r, errno));
  ts = relative(2000000000ull);
  interrupt = interruptAfter(pthread_self(), 50);
  r = g_ppoll(nullptr, 0, &ts, nullptr);
  e = errno;
  interrupt.join();
  report("ppoll-eintr", r == -1 && e == EINTR, describe(r, e));
}

void checkEpoll() {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event events[2];
  errno = kErrnoSentinel;
  CallCount calls;
  int r = g_epoll_wait(ep, events, 2, 1);
  report("epoll_wait-timeout", r == 0 && errno == kErrnoSentinel && calls.once(),
         describe(r, errno));
  r = g_epoll_pwait(ep, events, 2, 1, nullptr);
  report("epoll_pwait-timeout", r == 0 && errno == kErrnoSentinel, describe(r, errno));
  timespec ts = relative(1000000);
  r = g_epoll_pwait2(ep, events, 2, &ts, nullptr);
  bool pwait2 = !(r == -1 && errno == ENOSYS); // a kernel before 5.11
  report("epoll_pwait2-timeout", !pwait2 || (r == 0 && errno == kErrnoSentinel),
         describe(r, errno));

  Pipe p;
  p.fill();
  epoll_event watch = {};
  watch.events = EPOLLIN;
  watch.data.u64 = 42;
  epoll_ctl(ep, EPOLL_CTL_ADD, p.fds[0], &watch);
  r = g_epoll_wait(ep, events, 2, 1000);
  report("epoll_wait-ready", r == 1 && events[0].data.u64 == 42, describe(r, errno));
  r = g_epoll_pwait(ep, events, 2, 1000, nullptr);
  report("epoll_pwait-ready", r == 1 && events[0].data.u64 == 42, describe(r, errno));
  ts = relative(1000000000ull);
  r = g_epoll_pwait2(ep, events, 2, &ts, nullptr);
  report("epoll_pwait2-ready", !pwait2 || (r == 1 && events[0].data.u64 == 42), describe(r, errno));
  int bad = closedFd();
  r = g_epoll_wait(bad, events, 2, 0);
  report("epoll_wait-ebadf", r == -1 && errno == EBADF, describe(r, errno));

  int empty = epoll_create1(EPOLL_CLOEXEC);
  std::thread interrupt = interruptAfter(pthread_self(), 50);
  r = g_epoll_wait(empty, events, 2, 2000);
  int e = errno;
  interrupt.join();
  report("epoll_wait-eintr", r == -1 && e == EINTR, describe(r, e));
  interrupt = interruptAfter(pthread_self(), 50);
  r = g_epoll_pwait(empty, events, 2, 2000, nullptr);
  e = errno;
  interrupt.join();
  report("epoll_pwait-eintr", r == -1 && e == EINTR, describe(r, e));
  if (pwait2) {
    ts = relative(2000000000ull);
    interrupt = interruptAfter(pthread_self(), 50);
    r = g_epoll_pwait2(empty, events, 2, &ts, nullptr);
    e = errno;
    interrupt.join();
    report("epoll_pwait2-eintr", r == -1 && e == EINTR, describe(r, e));
  }
  close(empty);
  close(ep);
}

long futexCall(uint32_t *word, int op, uint32_t value, const timespec *timeout) {
  return g_syscall(SYS_futex, word, op, value, timeout, nullptr, 0);
}

void checkSyscall() {
  CallCount calls;
  long r = g_syscall(SYS_getpid);
  report("syscall-getpid", r == getpid() && calls.once(false), describe(r, errno));
  r = g_syscall(SYS_close, closedFd());
  report("syscall-errno", r == -1 && errno == EBADF, describe(r, errno));
  // Six arguments reach the kernel.
  r = g_syscall(SYS_mmap, nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                0);
  bool mapped = r != -1;
  if (mapped) {
    static_cast<volatile char *>(reinterpret_cast<void *>(r))[100] = 1;
    munmap(reinterpret_cast<void *>(r), 4096);
  }
  report("syscall-six-arguments", mapped, describe(r, errno));

  uint32_t word = 0;
  CallCount wait_calls;
  r = futexCall(&word, FUTEX_WAIT_PRIVATE, 1, nullptr);
  report("futex-wait-value-changed", r == -1 && errno == EAGAIN && wait_calls.once(),
         describe(r, errno));
  timespec ts = relative(1000000);
  r = futexCall(&word, FUTEX_WAIT_PRIVATE, 0, &ts);
  report("futex-wait-timeout", r == -1 && errno == ETIMEDOUT, describe(r, errno));
  ts = relative(1000000);
  // FUTEX_WAIT_BITSET takes an absolute time and a sixth argument.
  timespec at = deadline(CLOCK_MONOTONIC, 1000000);
  r = g_syscall(SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE, 0, &at, nullptr,
                FUTEX_BITSET_MATCH_ANY);
  report("futex-wait-bitset-timeout", r == -1 && errno == ETIMEDOUT, describe(r, errno));
  CallCount wake_calls;
  r = futexCall(&word, FUTEX_WAKE_PRIVATE, 1, nullptr);
  report("futex-wake-nobody", r == 0 && wake_calls.once(), describe(r, errno));
  std::atomic<long> waiter_result{-2};
  std::atomic<int> waiter_errno{0};
  std::thread waiter([&] {
    timespec limit = relative(5000000000ull);
    long w = futexCall(&word, FUTEX_WAIT_PRIVATE, 0, &limit);
    waiter_errno = errno;
    waiter_result = w;
  });
  long woken = 0;
  for (int i = 0; i < 500 && woken == 0; ++i) {
    usleep(2000);
    woken = futexCall(&word, FUTEX_WAKE_PRIVATE, 1, nullptr);
  }
  waiter.join();
  report("futex-woken", woken == 1 && waiter_result == 0,
         "wake " + std::to_string(woken) + ", wait " + describe(waiter_result, waiter_errno));
}

void checkTimedWaits() {
  sem_t sem;
  sem_init(&sem, 0, 0);
  timespec at = deadline(CLOCK_REALTIME, 1000000);
  CallCount calls;
  int r = g_sem_timedwait(&sem, &at);
  report("sem_timedwait-timeout", r == -1 && errno == ETIMEDOUT && calls.once(),
         describe(r, errno));

  pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
  pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
  std::atomic<int> stage{0};
  std::thread holder([&] {
    pthread_mutex_lock(&held);
    pthread_rwlock_rdlock(&rw);
    stage = 1;
    while (stage != 2)
      usleep(1000);
    pthread_rwlock_unlock(&rw);
    pthread_mutex_unlock(&held);
  });
  while (stage != 1)
    usleep(1000);
  at = deadline(CLOCK_REALTIME, 1000000);
  r = g_pthread_mutex_timedlock(&held, &at);
  report("pthread_mutex_timedlock-timeout", r == ETIMEDOUT, describe(r, errno));
  at = deadline(CLOCK_REALTIME, 1000000);
  r = g_pthread_rwlock_timedwrlock(&rw, &at);
  report("pthread_rwlock_timedwrlock-timeout", r == ETIMEDOUT, describe(r, errno));
  stage = 2;
  holder.join();

  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  pthread_mutex_lock(&m);
  at = deadline(CLOCK_REALTIME, 1000000);
  r = g_pthread_cond_timedwait(&c, &m, &at);
  int relocked = pthread_mutex_trylock(&m); // EBUSY: the wait took the mutex back
  pthread_mutex_unlock(&m);
  report("pthread_cond_timedwait-timeout", r == ETIMEDOUT && relocked == EBUSY, describe(r, errno));

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  timespec ts = relative(1000000);
  r = g_sigtimedwait(&set, nullptr, &ts);
  report("sigtimedwait-timeout", r == -1 && errno == EAGAIN, describe(r, errno));
  pthread_kill(pthread_self(), SIGUSR2);
  r = g_sigtimedwait(&set, nullptr, &ts);
  report("sigtimedwait-signal", r == SIGUSR2, describe(r, errno));
}

int semanticsMode(bool hooks) {
  if (hooks && !useHooks()) {
    printf("FAIL hooks: a __causal_hook_ function is missing\n");
    return 1;
  }
  installSignalHandler();
  // A thread in the line a test selects: with experiments on, the calls
  // below pay and are credited delays, which must change none of their
  // results.
  std::thread busy(busyThread);
  checkNanosleep();
  checkClockNanosleep();
  checkUsleepAndSleep();
  checkSelect();
  checkPoll();
  checkEpoll();
  checkSyscall();
  checkTimedWaits();
  g_stop = true;
  busy.join();
  printf("checks=%d failures=%d\n", g_checks, g_failures);
  return 0;
}

// ---- timer / woken: delays across sleeps ------------------------------------

struct Delays {
  uint64_t global = 0, local = 0, paused = 0, overshoot = 0;
  static Delays now() {
    Delays d;
    __causal_test_delays(&d.global, &d.local, &d.paused, &d.overshoot);
    return d;
  }
  // The delays paid by pausing so far: the time paused less the overshoot
  // not yet taken off a later pause (a sleep that ends late on a busy
  // machine pays no more than it was asked to).
  int64_t paid() const { return int64_t(paused) - int64_t(overshoot); }
};

// Per function: the delays inserted during the call, the time the thread
// paused inside it beyond what it owed when it began, and what it still owed
// when the call returned (paying raises its count to the global one, even
// when a pause overshoot carried from earlier pauses shortens the pause).
// A call that starts a waker thread and joins it measures the wait alone:
// it marks the moments just before the wait and just after it returns
// (markWaitStart, markWaitEnd), so that what was inserted while the waker
// started or was joined (milliseconds when the machine is busy), and paid
// at a sample then, counts as neither inserted during the wait nor paused
// in it.
struct Totals {
  uint64_t inserted = 0, paused_after = 0, owed_after = 0, calls = 0;
};

Delays g_wait_start, g_wait_end;
bool g_wait_marked = false;
void markWaitStart() { g_wait_start = Delays::now(); }
void markWaitEnd() {
  g_wait_end = Delays::now();
  g_wait_marked = true;
}

template <typename Call> void measure(const char *name, int rounds, Call call) {
  // One call first, not measured: the thread may start owing a debt from
  // before (a thread that paid P for a timer wake-up returns owing about the
  // P inserted meanwhile), which the call pays before waiting.
  call();
  Totals totals;
  for (int i = 0; i < rounds; ++i) {
    g_wait_marked = false;
    Delays before = Delays::now();
    call();
    Delays after = Delays::now();
    if (g_wait_marked) {
      before = g_wait_start;
      after = g_wait_end;
    }
    uint64_t owed_before = before.global > before.local ? before.global - before.local : 0;
    totals.inserted += after.global - before.global;
    int64_t paused = after.paid() - before.paid();
    totals.paused_after += paused > int64_t(owed_before) ? uint64_t(paused) - owed_before : 0;
    totals.owed_after += after.global > after.local ? after.global - after.local : 0;
    ++totals.calls;
  }
  printf("%s inserted=%llu paused=%llu owed_after=%llu calls=%llu\n", name,
         (unsigned long long)totals.inserted, (unsigned long long)totals.paused_after,
         (unsigned long long)totals.owed_after, (unsigned long long)totals.calls);
}

constexpr uint64_t kWaitNs = 5000000; // each wait: 5 ms
constexpr int kRounds = 8;

int timerMode() {
  std::thread busy(busyThread);
  usleep(100000); // the first experiment is running
  uint32_t word = 0;
  int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event event;
  sem_t sem;
  sem_init(&sem, 0, 0);
  measure("nanosleep", kRounds, [] {
    timespec ts = relative(kWaitNs);
    nanosleep(&ts, nullptr);
  });
  measure("clock_nanosleep", kRounds, [] {
    timespec ts = relative(kWaitNs);
    clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
  });
  measure("usleep", kRounds, [] { usleep(kWaitNs / 1000); });
  measure("select", kRounds, [] {
    timeval tv = {0, long(kWaitNs / 1000)};
    select(0, nullptr, nullptr, nullptr, &tv);
  });
  measure("pselect", kRounds, [] {
    timespec ts = relative(kWaitNs);
    pselect(0, nullptr, nullptr, nullptr, &ts, nullptr);
  });
  measure("poll", kRounds, [] { poll(nullptr, 0, kWaitNs / 1000000); });
  measure("ppoll", kRounds, [] {
    timespec ts = relative(kWaitNs);
    ppoll(nullptr, 0, &ts, nullptr);
  });
  measure("epoll_wait", kRounds, [&] { epoll_wait(ep, &event, 1, kWaitNs / 1000000); });
  measure("epoll_pwait", kRounds, [&] { epoll_pwait(ep, &event, 1, kWaitNs / 1000000, nullptr); });
  measure("futex", kRounds, [&] {
    timespec ts = relative(kWaitNs);
    syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, nullptr, 0);
  });
  measure("sem_timedwait", kRounds, [&] {
    timespec at = deadline(CLOCK_REALTIME, kWaitNs);
    sem_timedwait(&sem, &at);
  });
  measure("pthread_cond_timedwait", kRounds, [] {
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    pthread_mutex_lock(&m);
    timespec at = deadline(CLOCK_REALTIME, kWaitNs);
    pthread_cond_timedwait(&c, &m, &at);
    pthread_mutex_unlock(&m);
  });
  g_stop = true;
  busy.join();
  return 0;
}

int wokenMode() {
  installSignalHandler();
  std::thread busy(busyThread);
  usleep(100000);
  pthread_t self = pthread_self();
  Pipe p;
  uint32_t word = 0;
  sem_t sem;
  sem_init(&sem, 0, 0);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event watch = {};
  watch.events = EPOLLIN;
  epoll_ctl(ep, EPOLL_CTL_ADD, p.fds[0], &watch);
  // The waker ends each wait after kWaitNs; every wait would last 1 s.
  auto wokenBy = [](auto wake) {
    return std::thread([wake] {
      usleep(kWaitNs / 1000);
      wake();
    });
  };
  auto drain = [&] {
    char byte;
    if (read(p.fds[0], &byte, 1) != 1)
      abort();
  };
  measure("poll", kRounds, [&] {
    std::thread waker = wokenBy([&] { p.fill(); });
    pollfd fd = {p.fds[0], POLLIN, 0};
    markWaitStart();
    poll(&fd, 1, 1000);
    markWaitEnd();
    waker.join();
    drain();
  });
  measure("select", kRounds, [&] {
    std::thread waker = wokenBy([&] { p.fill(); });
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(p.fds[0], &readable);
    timeval tv = {1, 0};
    markWaitStart();
    select(p.fds[0] + 1, &readable, nullptr, nullptr, &tv);
    markWaitEnd();
    waker.join();
    drain();
  });
  measure("epoll_wait", kRounds, [&] {
    std::thread waker = wokenBy([&] { p.fill(); });
    epoll_event event;
    markWaitStart();
    epoll_wait(ep, &event, 1, 1000);
    markWaitEnd();
    waker.join();
    drain();
  });
  measure("futex", kRounds, [&] {
    word = 0;
    std::thread waker = wokenBy([&] {
      __atomic_store_n(&word, 1, __ATOMIC_RELEASE);
      syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    });
    timespec ts = relative(1000000000ull);
    markWaitStart();
    while (__atomic_load_n(&word, __ATOMIC_ACQUIRE) == 0)
      syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, nullptr, 0);
    markWaitEnd();
    waker.join();
  });
  measure("sem_timedwait", kRounds, [&] {
    std::thread waker = wokenBy([&] { sem_post(&sem); });
    timespec at = deadline(CLOCK_REALTIME, 1000000000ull);
    markWaitStart();
    sem_timedwait(&sem, &at);
    markWaitEnd();
    waker.join();
  });
  // A signal that came before the sleep began (the thread held up for
  // 5 ms on a busy machine) would leave it sleeping its whole second: the
  // waker signals again every 5 ms until the sleep has returned.
  measure("nanosleep", kRounds, [&] {
    std::atomic<bool> returned{false};
    std::thread waker = wokenBy([self, &returned] {
      while (!returned.load()) {
        pthread_kill(self, SIGUSR1);
        usleep(kWaitNs / 1000);
      }
    });
    timespec ts = relative(1000000000ull);
    markWaitStart();
    nanosleep(&ts, nullptr);
    markWaitEnd();
    returned = true;
    waker.join();
  });
  g_stop = true;
  busy.join();
  return 0;
}

// ---- signal-in-payment ------------------------------------------------------

// From /proc/self/task/TID/status, read with plain system calls: whether
// SIGUSR1 is blocked and pending in the thread.
struct ThreadSignalView {
  bool usr1_blocked = false, usr1_pending = false;
};

bool hasSignalBit(const char *status, const char *field, int signal) {
  const char *at = strstr(status, field);
  if (!at)
    return false;
  unsigned long long mask = strtoull(at + strlen(field), nullptr, 16);
  return (mask >> (signal - 1)) & 1;
}

ThreadSignalView threadSignalView(pid_t tid) {
  ThreadSignalView view;
  char path[64], text[4096];
  snprintf(path, sizeof path, "/proc/self/task/%d/status", int(tid));
  int fd = int(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY));
  if (fd < 0)
    return view;
  long n = syscall(SYS_read, fd, text, sizeof text - 1);
  syscall(SYS_close, fd);
  if (n <= 0)
    return view;
  text[n] = 0;
  view.usr1_blocked = hasSignalBit(text, "\nSigBlk:\t", SIGUSR1);
  view.usr1_pending = hasSignalBit(text, "\nSigPnd:\t", SIGUSR1);
  return view;
}

template <typename Call> void signalInPayment(const char *name, Call call) {
  Pipe p;
  std::atomic<bool> calling{false}, in_payment{false};
  // The helper's sleeps, reads and its signal are plain system calls:
  // through the hooks it would pay delays itself and the signal would come
  // late. Once the thread has begun the call, it signals as soon as it sees
  // the thread paying before it (the runtime blocks the program's signals
  // then), or 300 ms later if it never does (the debt was forgiven when an
  // experiment ended, or paid in a sample handler just before): the call's
  // own 2 s sleep is under way then. The signal came in the payment if it
  // was held back, pending and blocked, right after it was sent. Not at a
  // fixed time after the pipe's byte, nor at the first sight of the thread
  // asleep: on a loaded machine either can come before the call (in a pause
  // of the sample handler), and then no sleep is interrupted, with or
  // without the profiler.
  pid_t tid = pid_t(syscall(SYS_gettid));
  std::thread helper([&p, &calling, &in_payment, tid] {
    timespec ts = relative(100000000);
    syscall(SYS_nanosleep, &ts, nullptr);
    p.fill();
    ts = relative(100000);
    while (!calling.load())
      syscall(SYS_nanosleep, &ts, nullptr);
    for (uint64_t give_up = nowNs() + 300000000; nowNs() < give_up;) {
      if (threadSignalView(tid).usr1_blocked)
        break;
      syscall(SYS_nanosleep, &ts, nullptr);
    }
    syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
    ThreadSignalView after = threadSignalView(tid);
    in_payment.store(after.usr1_blocked && after.usr1_pending);
  });
  char byte;
  if (read(p.fds[0], &byte, 1) != 1) // waits 100 ms outside any hook: the debt grows
    abort();
  Delays before = Delays::now();
  calling.store(true);
  uint64_t start = nowNs();
  std::string result = call();
  uint64_t took = nowNs() - start;
  Delays after = Delays::now();
  helper.join();
  // paid: the pause in the call (less than the debt when an earlier pause
  // overshot: the overshoot is carried over).
  printf("%s owed=%llu paid=%llu took=%llu in_payment=%d %s\n", name,
         (unsigned long long)(before.global > before.local ? before.global - before.local : 0),
         (unsigned long long)(after.paused - before.paused), (unsigned long long)took,
         in_payment.load() ? 1 : 0, result.c_str());
}

int signalInPaymentMode() {
  installSignalHandler();
  std::thread busy(busyThread);
  usleep(100000);
  signalInPayment("nanosleep", [] {
    timespec req = relative(2000000000ull), rem = {0, 0};
    int r = nanosleep(&req, &rem);
    int e = errno;
    return "result=" + std::to_string(r) + " eintr=" + std::to_string(e == EINTR) +
           " rem_full=" + std::to_string(rem.tv_sec == 2 && rem.tv_nsec == 0);
  });
  signalInPayment("poll", [] {
    int r = poll(nullptr, 0, 2000);
    int e = errno;
    return "result=" + std::to_string(r) + " eintr=" + std::to_string(e == EINTR);
  });
  signalInPayment("select", [] {
    Pipe idle;
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(idle.fds[0], &readable);
    timeval tv = {2, 0};
    int r = select(idle.fds[0] + 1, &readable, nullptr, nullptr, &tv);
    int e = errno;
    return "result=" + std::to_string(r) + " eintr=" + std::to_string(e == EINTR) +
           " sets_kept=" + std::to_string(FD_ISSET(idle.fds[0], &readable) != 0);
  });
  g_stop = true;
  busy.join();
  return 0;
}

// ---- pause-span: a pause counts all of its time ---------------------------------

// The value |percent| % of the way up the sorted |values|.
uint64_t percentile(std::vector<uint64_t> values, size_t percent) {
  if (values.empty())
    return 0;
  size_t at = values.size() * percent / 100;
  std::nth_element(values.begin(), values.begin() + at, values.end());
  return values[at];
}

int pauseSpanMode() {
  std::thread busy(busyThread);
  usleep(100000); // the first experiment is running
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  std::vector<uint64_t> uncounted, plain;
  for (int i = 0; i < 200 && uncounted.size() < 60; ++i) {
    // 2 ms outside any hook: the busy thread's samples at 10 % make a debt
    // of about 0.2 ms, less than CAUSAL_PAUSE_SPIN_NS, so the pause spins
    // (with its sampler suspended and resumed) when a CPU is free for it.
    timespec ts = relative(2000000);
    syscall(SYS_nanosleep, &ts, nullptr);
    Delays before = Delays::now();
    uint64_t start = nowNs();
    pthread_cond_signal(&cond); // no waiter: a waking hook that pays first
    uint64_t took = nowNs() - start;
    Delays after = Delays::now();
    uint64_t paused = after.paused - before.paused;
    if (paused > 0)
      uncounted.push_back(took > paused ? took - paused : 0);
    start = nowNs();
    pthread_cond_signal(&cond); // nothing owed now
    plain.push_back(nowNs() - start);
  }
  g_stop = true;
  busy.join();
  printf("pauses=%zu uncounted_p10_ns=%llu uncounted_median_ns=%llu plain_p10_ns=%llu "
         "plain_median_ns=%llu\n",
         uncounted.size(), (unsigned long long)percentile(uncounted, 10),
         (unsigned long long)percentile(uncounted, 50), (unsigned long long)percentile(plain, 10),
         (unsigned long long)percentile(plain, 50));
  return 0;
}

// ---- idle-pause: spin while no other thread could use the CPU ----------------

void spinOutsideBusyLine() {
  while (!g_stop.load(std::memory_order_relaxed))
    causal::test::burnCpu(200000, 64);
}

// How each pause of about 1.5 ms was paid, from what the kernel says of the
// thread: spun through (it never blocked: no voluntary context switch;
// sched_yield is not one), slept and then spun its last part (a switch, and
// CPU time), or slept (a switch, next to no CPU time: on a loaded machine
// the pauses sleep, as they should when other processes would take the CPU).
struct PauseKinds {
  int through = 0, tail = 0, slept = 0;
};

long voluntarySwitches() {
  rusage usage;
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nvcsw;
}

void idlePayer(PauseKinds *kinds) {
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  for (int i = 0; i < 600 && kinds->through + kinds->tail < 40; ++i) {
    // 2 ms outside any hook: the busy thread's samples at 75 % make a debt
    // of about 1.5 ms, paid in the waking hook below.
    timespec ts = relative(2000000);
    syscall(SYS_nanosleep, &ts, nullptr);
    Delays before = Delays::now();
    long switches = voluntarySwitches();
    uint64_t cpu = causal::test::threadCpuNs();
    pthread_cond_signal(&cond);
    cpu = causal::test::threadCpuNs() - cpu;
    switches = voluntarySwitches() - switches;
    if (Delays::now().paused - before.paused < 500000)
      continue;
    if (switches == 0)
      ++kinds->through;
    else if (cpu >= 50000)
      ++kinds->tail;
    else
      ++kinds->slept;
  }
}

int idlePauseMode(bool wanted) {
  std::thread busy(busyThread);
  std::thread other;
  if (wanted)
    other = std::thread(spinOutsideBusyLine);
  usleep(100000); // the first experiment is running
  PauseKinds kinds;
  std::thread payer(idlePayer, &kinds);
  payer.join(); // main waits in a blocking call meanwhile
  g_stop = true;
  busy.join();
  if (wanted)
    other.join();
  printf("through=%d tail=%d slept=%d\n", kinds.through, kinds.tail, kinds.slept);
  return 0;
}

// ---- progress: settle before counting -------------------------------------------

// What the pass emits before a progress point's increment (abi.h).
inline void visitAsThePassEmitsIt(causal_counter &counter) {
  if (__atomic_load_n(&__causal_delays_active, __ATOMIC_RELAXED))
    __causal_progress_visit(&counter);
  __atomic_add_fetch(&counter.count, 1, __ATOMIC_RELAXED);
}

int progressMode(uint64_t ms) {
  std::thread busy(busyThread);
  uint64_t end = nowNs() + ms * 1000000ull;
  uint64_t visits = 0, owing = 0, unpaid = 0;
  while (nowNs() < end) {
    // Short work: the thread's own samples (which also pay) come rarely
    // compared with the busy thread's delays.
    uint64_t start = nowNs(CLOCK_THREAD_CPUTIME_ID);
    while (nowNs(CLOCK_THREAD_CPUTIME_ID) - start < 50000)
      ;
    Delays before = Delays::now();
    bool active = __atomic_load_n(&__causal_delays_active, __ATOMIC_RELAXED) != 0;
    visitAsThePassEmitsIt(g_tick[0]);
    Delays after = Delays::now();
    ++visits;
    if (active && before.global > before.local) {
      ++owing;
      // Counted only after paying at least what it owed before the check
      // (an experiment that ended meanwhile forgives instead).
      if (after.local < before.global && __atomic_load_n(&__causal_delays_active, __ATOMIC_RELAXED))
        ++unpaid;
    }
  }
  g_stop = true;
  busy.join();
  printf("visits=%llu owing=%llu unpaid=%llu\n", (unsigned long long)visits,
         (unsigned long long)owing, (unsigned long long)unpaid);
  return 0;
}

// ---- latency-edges: a window's requests, whole, whatever races its edges --------

causal_counter g_request[] = {{0, "req", CAUSAL_COUNTER_BEGIN, 0},
                              {0, "req", CAUSAL_COUNTER_END, 0}};

void spinUntil(uint64_t at) {
  while (nowNs() < at)
    ;
}

int latencyEdgesMode(uint64_t ms) {
  __causal_register_counters(g_request, g_request + 2);
  uint64_t end = nowNs() + ms * 1000000ull;
  uint64_t requests = 0;
  while (nowNs() < end) {
    // A visit every 30 us: visits come near each edge of every window, where
    // the profiler takes the visits' sums and reads the counters.
    visitAsThePassEmitsIt(g_request[0]);
    spinUntil(nowNs() + 30000);
    visitAsThePassEmitsIt(g_request[1]);
    visitAsThePassEmitsIt(g_tick[0]); // every point visited: experiments stay short
    spinUntil(nowNs() + 30000);
    ++requests;
  }
  printf("requests=%llu\n", (unsigned long long)requests);
  return 0;
}

// ---- late-debt: visits made by a thread that still owes -------------------------

int lateDebtMode(uint64_t ms) {
  __causal_register_counters(g_request, g_request + 2);
  std::thread busy(busyThread);
  uint64_t end = nowNs() + ms * 1000000ull;
  uint64_t requests = 0, owing = 0;
  const struct timespec think = {0, 4000000};
  while (nowNs() < end) {
    nanosleep(&think, nullptr); // interposed: pays on waking, the line runs meanwhile
    for (causal_counter *visit : {&g_request[0], &g_request[1]}) {
      visitAsThePassEmitsIt(*visit);
      Delays after = Delays::now(); // owed: inserted while it paid at the visit
      owing += after.global > after.local;
      if (visit == &g_request[0])
        spinUntil(nowNs() + 100000);
    }
    ++requests;
  }
  g_stop = true;
  busy.join();
  printf("requests=%llu owing=%llu\n", (unsigned long long)requests, (unsigned long long)owing);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  if (argc < 2)
    return 2;
  alarm(120); // a lost wake-up fails the test instead of hanging it
  setUp();
  const char *mode = argv[1];
  if (!strcmp(mode, "semantics"))
    return semanticsMode(argc > 2 && !strcmp(argv[2], "1"));
  if (!strcmp(mode, "timer"))
    return timerMode();
  if (!strcmp(mode, "woken"))
    return wokenMode();
  if (!strcmp(mode, "signal-in-payment"))
    return signalInPaymentMode();
  if (!strcmp(mode, "pause-span"))
    return pauseSpanMode();
  if (!strcmp(mode, "progress"))
    return progressMode(argc > 2 ? strtoull(argv[2], nullptr, 10) : 500);
  if (!strcmp(mode, "latency-edges"))
    return latencyEdgesMode(argc > 2 ? strtoull(argv[2], nullptr, 10) : 1500);
  if (!strcmp(mode, "late-debt"))
    return lateDebtMode(argc > 2 ? strtoull(argv[2], nullptr, 10) : 1500);
  if (!strcmp(mode, "idle-pause"))
    return idlePauseMode(argc > 2 && !strcmp(argv[2], "wanted"));
  return 2;
}
