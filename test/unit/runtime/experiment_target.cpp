//===- test/unit/runtime/experiment_target.cpp - Program for experiment tests -===//
//
// Linked with libcausal_rt.so like sample_target. Registers in-memory line
// tables for two of its functions: workUnit ("exp_work.cpp:10", the
// program's own source) and systemWork ("/usr/include/exp_system.h:20", out
// of the default scope), and progress counters through
// __causal_register_counters and through Coz's coz.h. argv[1]:
//   progress MS   one thread loops workUnit for MS ms of wall time, visiting
//                 throughput point "work" (two images' counters, merged),
//                 latency point "req" and the coz.h points "coz-work",
//                 "coz-req"; prints the visit totals
//   delays MS T   T threads: one loops workUnit (visits "work"), the others
//                 systemWork, for MS ms
//   oversub MS T  the process pins itself to one CPU; T threads loop
//                 workUnitInUserMode (each visits "work") for MS ms
//   oversubkernel MS T  as oversub, each thread alternating 200 us of
//                 workUnitInUserMode with 200 us of kernel time (reads of
//                 /dev/zero, outside any line)
//   foreign MS H  the process pins itself to one CPU and spawns H busy
//                 processes there (not the program's); one thread loops
//                 workUnit (visits "work") for MS ms
//   sync N        producer/consumer (mutex + condition variable, semaphores,
//                 rwlock, barrier, std::condition_variable, joins of every
//                 kind) moving N items; prints sum and expected
//   hookcount N   N calls of lock/unlock through the hooks and N through the
//                 interposed functions; prints the runtime's call count
//   crash KIND    works 150 ms, then dies by abort or segv
//   exec          works 100 ms, then execs /bin/true
//   mainexit      main calls pthread_exit while a worker runs 150 ms
//   forkexp MS    progress loop, fork, both loop MS ms more, child exits
//   spin MS       workUnit for MS ms, no progress point
//   pausing MS    two threads on CPUs of their own (the first two the
//                 process may use; exits 3 if it has fewer): one loops
//                 workUnit (visits "work"), the other systemWork, for MS ms;
//                 the second pays the first's delays and does nothing else
//                 that switches
//   symbols       checks that every sync function has a hook and is interposed
//   spinlocks N   N rounds of spin lock, trylock and unlock through the hooks
//                 and the interposed functions; prints the runtime's call count
//   lockbench N   times N uncontended lock+unlock pairs (prints ns_per_pair)
//
//===----------------------------------------------------------------------===//

#include "Sanitizers.h"
#include "TargetSupport.h"

#include "causal/abi.h"

#ifdef CAUSAL_HAVE_COZ_H
#include <coz.h>
#endif

#include <condition_variable>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

extern "C" void __causal_register_module(const void *start, const void *stop);
extern "C" void __causal_register_counters(causal_counter *start, causal_counter *stop);
extern "C" uint64_t __causal_test_sync_calls();
#define CAUSAL_DECLARE_HOOK(name) extern "C" decltype(name) __causal_hook_##name;
CAUSAL_DECLARE_HOOK(pthread_mutex_lock)
CAUSAL_DECLARE_HOOK(pthread_mutex_unlock)

extern "C" const char __start_causal_exp_work[], __stop_causal_exp_work[];
extern "C" const char __start_causal_exp_system[], __stop_causal_exp_system[];

using causal::test::nowNs;

__attribute__((noinline, section("causal_exp_work"))) uint64_t workUnit(uint64_t cpu_ns) {
  return causal::test::burnCpu(cpu_ns, 2000);
}

// The same line, in user mode nearly all the time: a clock read (a system
// call on these VMs, about 1 us) every ~100 us of work instead of every ~2
// us. perf samples user mode only, and how the kernel splits a thread's CPU
// time into user and system time (by ticks) is too rough to correct for a
// line that spends a quarter of its time in system calls.
__attribute__((noinline, section("causal_exp_work"))) uint64_t workUnitInUserMode(uint64_t cpu_ns) {
  return causal::test::burnCpu(cpu_ns, 200000);
}

__attribute__((noinline, section("causal_exp_system"))) uint64_t systemWork(uint64_t cpu_ns) {
  return causal::test::burnCpu(cpu_ns, 2000);
}

namespace {

// Never destroyed: the runtime writes the profile from its exit destructor,
// which runs after static destructors and still reads the registered tables.
std::unique_ptr<causal::test::InMemoryLineTable> &g_work_table =
    *new std::unique_ptr<causal::test::InMemoryLineTable>;
std::unique_ptr<causal::test::InMemoryLineTable> &g_system_table =
    *new std::unique_ptr<causal::test::InMemoryLineTable>;

// Two "images" with a counter of the same throughput point.
causal_counter g_image_a[] = {
    {0, "work", CAUSAL_COUNTER_THROUGHPUT, 0},
    {0, "req", CAUSAL_COUNTER_BEGIN, 0},
    {0, "req", CAUSAL_COUNTER_END, 0},
};
causal_counter g_image_b[] = {{0, "work", CAUSAL_COUNTER_THROUGHPUT, 0}};

void setUp() {
  using causal::test::registerSectionLine;
  g_work_table =
      registerSectionLine(__start_causal_exp_work, __stop_causal_exp_work, "exp_work.cpp", 10);
  g_system_table = registerSectionLine(__start_causal_exp_system, __stop_causal_exp_system,
                                       "/usr/include/exp_system.h", 20);
  __causal_register_counters(g_image_a, g_image_a + 3);
  __causal_register_counters(g_image_a, g_image_a + 3); // idempotent
  __causal_register_counters(g_image_b, g_image_b + 1);
}

void visit(causal_counter &counter) { __atomic_add_fetch(&counter.count, 1, __ATOMIC_RELAXED); }

uint64_t g_coz_work = 0;

void progressLoop(uint64_t ms) {
  uint64_t end = nowNs() + ms * 1000000ull;
  while (nowNs() < end) {
    visit(g_image_a[1]);
#ifdef CAUSAL_HAVE_COZ_H
    COZ_BEGIN("coz-req");
#endif
    workUnit(200000);
    visit(g_image_a[0]);
    visit(g_image_b[0]);
#ifdef CAUSAL_HAVE_COZ_H
    COZ_PROGRESS_NAMED("coz-work");
    COZ_END("coz-req");
#endif
    ++g_coz_work;
    visit(g_image_a[2]);
  }
}

int progressMode(uint64_t ms) {
  progressLoop(ms);
  printf("work=%llu coz=%llu\n", (unsigned long long)(g_image_a[0].count + g_image_b[0].count),
         (unsigned long long)g_coz_work);
#ifdef CAUSAL_HAVE_COZ_H
  // The runtime hands out one counter per (type, name).
  auto get = reinterpret_cast<coz_counter_t *(*)(int, const char *)>(
      dlsym(RTLD_DEFAULT, "_coz_get_counter"));
  bool same = get && get(1, "coz-work") == get(1, "coz-work") &&
              get(2, "coz-req") != get(3, "coz-req") && get(9, "x") == nullptr &&
              get(1, "coz-work")->count == g_coz_work;
  printf("coz_api=%d\n", same ? 1 : 0);
#endif
  return 0;
}

int delaysMode(uint64_t ms, int threads) {
  std::vector<std::thread> workers;
  uint64_t end = nowNs() + ms * 1000000ull;
  workers.emplace_back([end] {
    while (nowNs() < end) {
      workUnit(200000);
      visit(g_image_a[0]);
    }
  });
  for (int i = 1; i < threads; ++i)
    workers.emplace_back([end] {
      while (nowNs() < end)
        systemWork(200000);
    });
  for (std::thread &t : workers)
    t.join();
  printf("done\n");
  return 0;
}

// More runnable threads than CPUs: every thread runs the selected line.
// The calling thread (and the threads it creates later, which inherit it)
// on the first CPU it may use; false if that cannot be done.
bool pinToOneCpu() {
  cpu_set_t allowed, one;
  CPU_ZERO(&one);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return false;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) {
      CPU_SET(cpu, &one);
      break;
    }
  return sched_setaffinity(0, sizeof one, &one) == 0;
}

// Kernel time outside any instrumented line: reads of /dev/zero (the kernel
// fills the buffer) until |cpu_ns| of the thread's CPU time went by.
__attribute__((noinline)) void kernelWork(int zero, uint64_t cpu_ns) {
  static thread_local char buffer[65536];
  uint64_t start = causal::test::threadCpuNs();
  while (causal::test::threadCpuNs() - start < cpu_ns)
    if (read(zero, buffer, sizeof buffer) < 0)
      break;
}

// |with_kernel_time|: each thread alternates the selected line with as much
// kernel time outside it.
int oversubMode(uint64_t ms, int threads, bool with_kernel_time) {
  int zero = with_kernel_time ? open("/dev/zero", O_RDONLY | O_CLOEXEC) : -1;
  if ((with_kernel_time && zero < 0) || !pinToOneCpu())
    return 1;
  std::vector<std::thread> workers;
  uint64_t end = nowNs() + ms * 1000000ull;
  for (int i = 0; i < threads; ++i)
    workers.emplace_back([end, zero] {
      while (nowNs() < end) {
        // In user mode: perf samples only that, and the shared-CPU delay
        // divides by CPU time, system time included (docs/runtime.md).
        workUnitInUserMode(200000);
        if (zero >= 0)
          kernelWork(zero, 200000);
        visit(g_image_a[0]);
      }
    });
  for (std::thread &t : workers)
    t.join();
  if (zero >= 0)
    close(zero);
  printf("done\n");
  return 0;
}

// One CPU shared with |hogs| busy processes that are not the program's
// (shells spinning, spawned after the pinning so they inherit it), and one
// thread in the selected line.
int foreignMode(uint64_t ms, int hogs) {
  if (!pinToOneCpu())
    return 1;
  std::vector<pid_t> children;
  for (int i = 0; i < hogs; ++i) {
    char *args[] = {const_cast<char *>("sh"), const_cast<char *>("-c"),
                    const_cast<char *>("while :; do :; done"), nullptr};
    pid_t pid;
    if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, args, environ) != 0)
      return 1;
    children.push_back(pid);
  }
  uint64_t end = nowNs() + ms * 1000000ull;
  std::thread worker([end] {
    while (nowNs() < end) {
      workUnitInUserMode(200000);
      visit(g_image_a[0]);
    }
  });
  worker.join();
  for (pid_t pid : children) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  printf("done\n");
  return 0;
}

// One CPU, kept busy by one thread in the selected line, beside a thread
// that sleeps 1 ms at a time (and pays what it owes on waking).
// The first |n| CPUs the process may use, or fewer.
std::vector<int> firstCpus(int n) {
  std::vector<int> cpus;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && int(cpus.size()) < n; ++cpu)
    if (CPU_ISSET(cpu, &allowed))
      cpus.push_back(cpu);
  return cpus;
}

bool pinTo(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

int pausingMode(uint64_t ms) {
  std::vector<int> cpus = firstCpus(2);
  if (cpus.size() < 2)
    return 3;
  uint64_t end = nowNs() + ms * 1000000ull;
  std::thread line([end, cpu = cpus[0]] {
    if (!pinTo(cpu))
      exit(1);
    while (nowNs() < end) {
      workUnit(200000);
      visit(g_image_a[0]);
    }
  });
  std::thread payer([end, cpu = cpus[1]] {
    if (!pinTo(cpu))
      exit(1);
    while (nowNs() < end)
      systemWork(200000);
  });
  line.join();
  payer.join();
  printf("done\n");
  return 0;
}

int heartbeatMode(uint64_t ms) {
  if (!pinToOneCpu())
    return 1;
  uint64_t end = nowNs() + ms * 1000000ull;
  std::thread worker([end] {
    while (nowNs() < end) {
      workUnit(200000);
      visit(g_image_a[0]);
    }
  });
  std::thread beat([end] {
    struct timespec period = {0, 1000000};
    while (nowNs() < end)
      nanosleep(&period, nullptr);
  });
  worker.join();
  beat.join();
  printf("done\n");
  return 0;
}

// ---- sync: every kind of blocking and waking call -------------------------

constexpr int kQueue = 8;
int g_items[kQueue];
int g_head = 0, g_tail = 0, g_size = 0;
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_not_empty = PTHREAD_COND_INITIALIZER, g_not_full = PTHREAD_COND_INITIALIZER;

void *producer(void *arg) {
  int n = *static_cast<int *>(arg);
  for (int i = 1; i <= n; ++i) {
    workUnit(20000);
    pthread_mutex_lock(&g_lock);
    while (g_size == kQueue)
      pthread_cond_wait(&g_not_full, &g_lock);
    g_items[g_tail] = i;
    g_tail = (g_tail + 1) % kQueue;
    ++g_size;
    pthread_cond_signal(&g_not_empty);
    pthread_mutex_unlock(&g_lock);
    visit(g_image_a[0]);
  }
  return nullptr;
}

void *consumer(void *arg) {
  int n = *static_cast<int *>(arg);
  long long sum = 0;
  for (int i = 0; i < n; ++i) {
    pthread_mutex_lock(&g_lock);
    while (g_size == 0) {
      struct timespec deadline = causal::test::realtimeIn(1000000);
      if (i % 2)
        pthread_cond_timedwait(&g_not_empty, &g_lock, &deadline);
      else
        pthread_cond_wait(&g_not_empty, &g_lock);
    }
    sum += g_items[g_head];
    g_head = (g_head + 1) % kQueue;
    --g_size;
    pthread_cond_broadcast(&g_not_full);
    pthread_mutex_unlock(&g_lock);
    workUnit(10000);
  }
  return reinterpret_cast<void *>(sum);
}

sem_t g_ping, g_pong;
pthread_rwlock_t g_rwlock = PTHREAD_RWLOCK_INITIALIZER;
long long g_shared = 0;

void *pinger(void *arg) {
  int n = *static_cast<int *>(arg);
  for (int i = 0; i < n; ++i) {
    while (sem_trywait(&g_ping) != 0) {
      struct timespec deadline = causal::test::realtimeIn(500000);
      if (sem_timedwait(&g_ping, &deadline) == 0)
        break;
    }
    pthread_rwlock_wrlock(&g_rwlock);
    g_shared += 1;
    pthread_rwlock_unlock(&g_rwlock);
    sem_post(&g_pong);
  }
  return nullptr;
}

int syncMode(int n) {
  alarm(120); // bounded: a lost wake-up fails the test instead of hanging it
  pthread_t p, c;
  pthread_create(&p, nullptr, producer, &n);
  pthread_create(&c, nullptr, consumer, &n);

  sem_init(&g_ping, 0, 0);
  sem_init(&g_pong, 0, 0);
  pthread_t ping;
  pthread_create(&ping, nullptr, pinger, &n);
  long long seen = 0;
  for (int i = 0; i < n; ++i) {
    sem_post(&g_ping);
    sem_wait(&g_pong);
    pthread_rwlock_rdlock(&g_rwlock);
    seen = g_shared;
    pthread_rwlock_unlock(&g_rwlock);
  }

  // Barrier rounds with std::thread + std::condition_variable (libstdc++
  // calls pthread from its own code: the interposed path).
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, nullptr, 3);
  std::mutex m;
  std::condition_variable cv;
  int turn = 0;
  const int rounds = n / 10 + 1;
  auto member = [&](int id) {
    for (int r = 0; r < rounds; ++r) {
      workUnit(5000);
      pthread_barrier_wait(&barrier);
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [&] { return turn % 3 == id; });
      ++turn;
      cv.notify_all();
    }
  };
  std::thread m1(member, 1), m2(member, 2);
  member(0);
  m1.join();
  m2.join();

  void *sum = nullptr;
  pthread_join(p, nullptr);
  while (pthread_tryjoin_np(c, &sum) == EBUSY) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 1;
    if (pthread_timedjoin_np(c, &sum, &deadline) == 0)
      break;
  }
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += 60;
  int joined = pthread_clockjoin_np(ping, nullptr, CLOCK_MONOTONIC, &deadline);
  printf("sum=%lld expected=%lld pings=%lld turns=%d joined=%d\n",
         (long long)reinterpret_cast<intptr_t>(sum), (long long)n * (n + 1) / 2, seen, turn,
         joined);
  return 0;
}

int hookCountMode(int n) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  uint64_t before = __causal_test_sync_calls();
  for (int i = 0; i < n; ++i) {
    __causal_hook_pthread_mutex_lock(&m);
    __causal_hook_pthread_mutex_unlock(&m);
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
  }
  uint64_t after = __causal_test_sync_calls();
  // The hook really locked: a second lock from another thread must fail.
  __causal_hook_pthread_mutex_lock(&m);
  int busy = 0;
  std::thread([&] { busy = pthread_mutex_trylock(&m) == EBUSY; }).join();
  __causal_hook_pthread_mutex_unlock(&m);
  printf("calls=%llu busy=%d\n", (unsigned long long)(after - before), busy);
  return 0;
}

// pthread_spin_lock (blocking), pthread_spin_trylock (trying) and
// pthread_spin_unlock (waking) through both entry points.
int spinlocksMode(int n) {
  using SpinFn = int (*)(pthread_spinlock_t *);
  auto hook = [](const char *name) { return reinterpret_cast<SpinFn>(dlsym(RTLD_DEFAULT, name)); };
  SpinFn lock = hook("__causal_hook_pthread_spin_lock");
  SpinFn trylock = hook("__causal_hook_pthread_spin_trylock");
  SpinFn unlock = hook("__causal_hook_pthread_spin_unlock");
  if (!lock || !trylock || !unlock) {
    printf("hooks=0\n");
    return 0;
  }
  pthread_spinlock_t s;
  pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
  uint64_t before = __causal_test_sync_calls();
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    failed += lock(&s) != 0;
    failed += unlock(&s) != 0;
    failed += trylock(&s) != 0;
    failed += unlock(&s) != 0;
    failed += pthread_spin_lock(&s) != 0;
    failed += pthread_spin_unlock(&s) != 0;
  }
  uint64_t after = __causal_test_sync_calls();
  // The hook really locked: a try from another thread must fail.
  lock(&s);
  int busy = 0;
  std::thread([&] { busy = pthread_spin_trylock(&s) == EBUSY; }).join();
  unlock(&s);
  pthread_spin_destroy(&s);
  printf("hooks=1 calls=%llu failed=%d busy=%d\n", (unsigned long long)(after - before), failed,
         busy);
  return 0;
}

// Every CAUSAL_HOOK function of causal/hooks.def has its hook, and the
// program's own calls of it, and of every CAUSAL_INTERPOSER function, reach
// the runtime (interposed).
// Where the image loaded at |base| (dladdr's dli_fbase) is in the load order (the order of the
// global symbol scope), -1 if it is not loaded.
int loadOrder(const void *base) {
  struct Search {
    const void *base;
    int index = 0, found = -1;
  } search{base};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *s = static_cast<Search *>(data);
        uintptr_t base = reinterpret_cast<uintptr_t>(s->base);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &segment = info->dlpi_phdr[i];
          uintptr_t start = info->dlpi_addr + segment.p_vaddr;
          if (segment.p_type == PT_LOAD && base >= (start & ~uintptr_t(4095)) &&
              base < start + segment.p_memsz) {
            s->found = s->index;
            return 1;
          }
        }
        ++s->index;
        return 0;
      },
      &search);
  return search.found;
}

// Under a sanitizer its interceptor is the process's definition of many of
// these functions; it calls the next one (RTLD_NEXT), which must be the
// runtime's: the runtime defines the function itself and the interceptor's
// image is loaded ahead of the runtime's (the first libraries loaded are the
// sanitizer's, then the runtime, which causal-ld places before libc).
int symbolsMode() {
  int missing = 0;
  Dl_info runtime, sanitizer = {};
  dladdr(dlsym(RTLD_DEFAULT, "__causal_register_module"), &runtime);
  void *runtime_handle = dlopen(runtime.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (causal::test::kSanitized &&
      !dladdr(dlsym(RTLD_DEFAULT, "__sanitizer_print_stack_trace"), &sanitizer)) {
    printf("the sanitizer's runtime was not found\n");
    return 1;
  }
  bool sanitizer_first = causal::test::kSanitized && loadOrder(sanitizer.dli_fbase) >= 0 &&
                         loadOrder(sanitizer.dli_fbase) < loadOrder(runtime.dli_fbase);
  auto in_image = [](void *symbol, const Dl_info &image) {
    Dl_info info;
    return symbol && dladdr(symbol, &info) && info.dli_fbase == image.dli_fbase;
  };
  auto check = [&](const char *name, bool has_hook) {
    std::string hook_name = std::string("__causal_hook_") + name;
    void *hook = dlsym(RTLD_DEFAULT, hook_name.c_str());
    void *interposed = dlsym(RTLD_DEFAULT, name);
    bool reaches_runtime = in_image(interposed, runtime) ||
                           (sanitizer_first && in_image(interposed, sanitizer) && runtime_handle &&
                            in_image(dlsym(runtime_handle, name), runtime));
    if ((has_hook && !hook) || !reaches_runtime) {
      printf("missing: %s\n", name);
      ++missing;
    }
  };
#define CAUSAL_HOOK(kind, outcome, ret, name, params, args, version) check(#name, true);
#define CAUSAL_INTERPOSER(kind, outcome, ret, name, params, args, version) check(#name, false);
#include "causal/hooks.def"
  printf("missing=%d\n", missing);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  if (argc < 2)
    return 2;
  setUp();
  const char *mode = argv[1];
  uint64_t arg = argc > 2 ? strtoull(argv[2], nullptr, 10) : 0;
  if (!strcmp(mode, "progress"))
    return progressMode(arg);
  if (!strcmp(mode, "spin")) {
    uint64_t end = nowNs() + arg * 1000000ull;
    while (nowNs() < end)
      workUnit(1000000);
    printf("done\n");
    return 0;
  }
  if (!strcmp(mode, "delays"))
    return delaysMode(arg, argc > 3 ? atoi(argv[3]) : 2);
  if (!strcmp(mode, "oversub") || !strcmp(mode, "oversubkernel"))
    return oversubMode(arg, argc > 3 ? atoi(argv[3]) : 4, !strcmp(mode, "oversubkernel"));
  if (!strcmp(mode, "heartbeat"))
    return heartbeatMode(arg);
  if (!strcmp(mode, "pausing"))
    return pausingMode(arg);
  if (!strcmp(mode, "foreign"))
    return foreignMode(arg, argc > 3 ? atoi(argv[3]) : 2);
  if (!strcmp(mode, "sync"))
    return syncMode(int(arg));
  if (!strcmp(mode, "lockbench")) {
    // Uncontended lock+unlock pairs on the main thread while an idle second
    // thread exists (so libc takes its multi-threaded path in every
    // configuration); with a fixed line an experiment runs meanwhile.
    std::thread idle([] { sleep(3600); });
    idle.detach();
    visit(g_image_a[0]);
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    uint64_t pairs = arg ? arg : 2000000;
    usleep(50000); // let the first experiment start
    // The fastest of 7 rounds, in this thread's CPU time: the VMs are shared,
    // preemption and frequency swings only ever make a round slower.
    double best = 1e9;
    for (int round = 0; round < 7; ++round) {
      uint64_t start = nowNs(CLOCK_THREAD_CPUTIME_ID);
      for (uint64_t i = 0; i < pairs; ++i) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
      }
      double ns = double(nowNs(CLOCK_THREAD_CPUTIME_ID) - start) / double(pairs);
      best = ns < best ? ns : best;
    }
    printf("ns_per_pair=%.2f\n", best);
    return 0;
  }
  if (!strcmp(mode, "symbols"))
    return symbolsMode();
  if (!strcmp(mode, "spinlocks"))
    return spinlocksMode(int(arg));
  if (!strcmp(mode, "hookcount"))
    return hookCountMode(int(arg));
  if (!strcmp(mode, "crash")) {
    progressLoop(150);
    if (argc > 2 && !strcmp(argv[2], "segv")) {
      // A store to a page that forbids it: a real fault (a null store would
      // be UBSan's finding, not a SIGSEGV, in the sanitizer build).
      void *page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (page == MAP_FAILED)
        return 3;
      *static_cast<volatile int *>(page) = 1;
    }
    abort();
  }
  if (!strcmp(mode, "exec")) {
    progressLoop(100);
    execl("/bin/true", "true", (char *)nullptr);
    return 99;
  }
  if (!strcmp(mode, "mainexit")) {
    std::thread([] { progressLoop(150); }).detach();
    pthread_exit(nullptr);
  }
  if (!strcmp(mode, "forkexp")) {
    progressLoop(arg);
    pid_t child = fork();
    progressLoop(arg);
    if (child == 0)
      exit(0);
    int status = 0;
    waitpid(child, &status, 0);
    printf("child_status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
  }
  return 2;
}
