//===- test/unit/runtime/sample_target.cpp - Program profiled by the tests -===//
//
// Linked with libcausal_rt.so exactly as causal-ld links programs. Registers
// line tables built in memory for two of its own functions (the test's
// stand-in for an instrumented image), then does what argv[1] says:
//   spin MS      main thread burns MS ms of CPU in spinFor (line 10)
//   thread MS    a std::thread created after start-up does the same
//   dlopen MS P  dlopens plugin P, spins MS ms in it (line 30), dlcloses it
//   leaf MS      callLeafFor (line 20) spends MS ms mostly inside libc's memchr
//   stale-frame-page MS
//                a thread spins MS ms with RBP at a readable page off its
//                stack (a frame-pointer walk reads it), the page is unmapped,
//                and it spins MS ms more
//   unloading MS P
//                dlopens plugin P, makes the page of its unwind table's
//                header unreadable and says through r_debug that the loader
//                is removing images (what a sample inside dlclose meets
//                between its munmap and the update of _dl_find_object),
//                spins MS ms in the plugin's uninstrumented pluginPlainSpin,
//                restores both and dlcloses the plugin
//   fork MS      parent spins 2*MS while another thread runs, forks; the
//                child spins MS, prints its perf_event descriptors, exits
//   status N     prints a line and the SIGPROF disposition, exits with N
//   churn N      creates N short threads (ending by return, pthread_exit
//                and cancellation, some concurrently), forks on the way,
//                and exits while a detached thread still spins
//   exitnow N    a detached thread spins; main spins 20 ms, prints, and
//                ends with _exit(N) (_Exit if N is odd)
//   atexitexit N main spins 20 ms and returns 0; an atexit handler of the
//                program calls _exit(N)
//   signal N     main spins 20 ms, then sends itself signal N (kill)
//   alarm        main spins until a 30 ms ITIMER_REAL timer's SIGALRM ends it
//   quickexit N  main spins 20 ms and ends with quick_exit(N)
//   handoff N    two threads hand a token to each other N times through two
//                semaphores, each spinning 50 us in spinFor (line 10) before
//                it passes the token on: a context switch per 50 us of CPU
//   handoffspin N  the same with spins of 10 us asked (kShortSpinSteps:
//                about 20 us), then each thread spins 150 ms alone: it
//                switches often, then hardly at all
//   sleepy N     N rounds of: spin ~0.3 ms, nanosleep 50 us, poll 50 us;
//                prints how many calls failed with EINTR
//   overhead MS  callRuntimeFor (line 20) spends MS ms inside the runtime
//   limit MS     main blocks every signal, spins MS ms, has its sampler
//                suspended and resumed (as a pause's spin does), spins MS ms
//                more; prints how many sample signals were queued
//   guardcheck   allocates with SIGPROF blocked (tests the malloc guard)
//   notable      registers null bounds (an image linked without causal-ld)
//   noop         returns 0 at once (start-up time measurement)
// Prints "cpu_ns=<CPU time of the spinning thread>" (fork: "parent_cpu_ns"
// and "child_cpu_ns").
//
//===----------------------------------------------------------------------===//

#include "TargetSupport.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>

extern "C" void __causal_register_module(const void *start, const void *stop);
extern "C" void __causal_test_suspend_and_resume_sampling();

extern "C" const char __start_causal_test_spin[], __stop_causal_test_spin[];
extern "C" const char __start_causal_test_leaf[], __stop_causal_test_leaf[];

namespace {

using causal::test::threadCpuNs;

} // namespace

// Burns |cpu_ns| of this thread's CPU time in its own code, reading the
// thread's clock (a system call, kept out of the line) every |steps| steps:
// at the default it burns at least 0.1-0.2 ms on these VMs whatever it is
// asked; kShortSpinSteps suits spins of tens of us (asked 10 us, it burnt
// 20 us on an Intel VM where the default burnt 190).
constexpr int kShortSpinSteps = 10000;
__attribute__((noinline, section("causal_test_spin"))) uint64_t spinFor(uint64_t cpu_ns,
                                                                        int steps = 200000) {
  return causal::test::burnCpu(cpu_ns, steps);
}

static char g_zeros[1 << 20];
const void *(*volatile g_memchr)(const void *, int, size_t) = memchr;

// Spends |cpu_ns| mostly inside memchr, a frameless libc leaf: its samples
// must be charged here, to the caller (a frame-pointer chain would skip this
// frame).
__attribute__((noinline, section("causal_test_leaf"))) uint64_t callLeafFor(uint64_t cpu_ns) {
  uint64_t start = threadCpuNs();
  uint64_t found = 0;
  while (threadCpuNs() - start < cpu_ns)
    for (int i = 0; i < 16; ++i)
      found += g_memchr(g_zeros, 1, sizeof(g_zeros)) != nullptr;
  return found;
}

// Spends |cpu_ns| inside the runtime (rejecting a bogus line table over and
// over): those samples are profiler overhead, not this line's time.
__attribute__((noinline, section("causal_test_leaf"))) void callRuntimeFor(uint64_t cpu_ns) {
  static const uint64_t bogus[16] = {};
  uint64_t start = threadCpuNs();
  while (threadCpuNs() - start < cpu_ns)
    for (int i = 0; i < 1000; ++i)
      __causal_register_module(bogus, bogus + 16);
}

// Spins |iterations| with RBP at |frame| instead of a frame of this thread.
__attribute__((noinline)) void spinWithBasePointer(uintptr_t frame, uint64_t iterations) {
  asm volatile("push %%rbp\n\t"
               "mov %0, %%rbp\n"
               "1:\n\t"
               "dec %1\n\t"
               "jnz 1b\n\t"
               "pop %%rbp"
               : "+D"(frame), "+S"(iterations)
               :
               : "cc", "memory");
}

namespace {

struct StaleFrameRun {
  uintptr_t frame_page;
  uint64_t cpu_ns_each;
  uint64_t used_ns;
};

void spinOnFramePage(StaleFrameRun *run) {
  uint64_t start = threadCpuNs();
  while (threadCpuNs() - start < run->cpu_ns_each)
    spinWithBasePointer(run->frame_page, 100000);
  run->used_ns += threadCpuNs() - start;
}

void *staleFrameThread(void *argument) {
  auto *run = static_cast<StaleFrameRun *>(argument);
  spinOnFramePage(run); // samples read the page: it is readable
  munmap(reinterpret_cast<void *>(run->frame_page), size_t(sysconf(_SC_PAGESIZE)));
  spinOnFramePage(run); // the same address, unmapped
  return nullptr;
}

// The frame walk accepts only frames above the stack pointer: the page must
// lie above the spinning thread's stack, which is mapped after it (mmap
// hands out lower addresses first).
int staleFramePage(uint64_t ms) {
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  void *frame_page =
      mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  size_t stack_size = 1 << 20;
  void *stack =
      mmap(nullptr, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (frame_page == MAP_FAILED || stack == MAP_FAILED)
    return 3;
  if (uintptr_t(stack) + stack_size > uintptr_t(frame_page)) {
    fprintf(stderr, "stale-frame-page: the page is not above the thread's stack\n");
    return 3;
  }
  memset(frame_page, 0, page); // a frame: caller 0, return address 0
  StaleFrameRun run = {uintptr_t(frame_page), ms * 1000000, 0};
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstack(&attributes, stack, stack_size);
  pthread_t thread;
  if (pthread_create(&thread, &attributes, staleFrameThread, &run))
    return 3;
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attributes);
  printf("cpu_ns=%llu\n", (unsigned long long)run.used_ns);
  return 0;
}

int unloading(uint64_t ms, const char *plugin_path) {
  void *plugin = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  auto spin = reinterpret_cast<uint64_t (*)(uint64_t)>(dlsym(plugin, "pluginPlainSpin"));
  dl_find_object image;
  if (!spin || _dl_find_object(reinterpret_cast<void *>(spin), &image) != 0 || !image.dlfo_eh_frame)
    return 3;
  uintptr_t page_size = uintptr_t(sysconf(_SC_PAGESIZE));
  void *header_page = reinterpret_cast<void *>(uintptr_t(image.dlfo_eh_frame) & ~(page_size - 1));
  uintptr_t code_page = uintptr_t(spin) & ~(page_size - 1);
  if (uintptr_t(header_page) == code_page) {
    fprintf(stderr, "unloading: the plugin's unwind table shares a page with its code\n");
    return 3;
  }
  if (mprotect(header_page, page_size, PROT_NONE) != 0)
    return 3;
  // The loader's own r_debug, as debuggers (and the runtime) find it: the
  // symbol _r_debug would be this program's copy, which ld.so never updates.
  r_debug *loader_state = nullptr;
  for (const ElfW(Dyn) *entry = _DYNAMIC; entry->d_tag != DT_NULL; ++entry)
    if (entry->d_tag == DT_DEBUG)
      loader_state = reinterpret_cast<r_debug *>(entry->d_un.d_ptr);
  if (!loader_state || loader_state->r_state != r_debug::RT_CONSISTENT) {
    fprintf(stderr, "unloading: no r_debug through DT_DEBUG, or the loader is busy\n");
    return 3;
  }
  loader_state->r_state = r_debug::RT_DELETE;
  uint64_t start = threadCpuNs();
  while (threadCpuNs() - start < ms * 1000000)
    spin(1000000);
  uint64_t used = threadCpuNs() - start;
  loader_state->r_state = r_debug::RT_CONSISTENT;
  mprotect(header_page, page_size, PROT_READ);
  dlclose(plugin);
  printf("cpu_ns=%llu\n", (unsigned long long)used);
  return 0;
}

// Never destroyed: the runtime writes the profile from its exit destructor,
// which runs after static destructors and still reads the registered tables.
std::unique_ptr<causal::test::InMemoryLineTable> &g_spin_table =
    *new std::unique_ptr<causal::test::InMemoryLineTable>;
std::unique_ptr<causal::test::InMemoryLineTable> &g_leaf_table =
    *new std::unique_ptr<causal::test::InMemoryLineTable>;

void registerTables() {
  using causal::test::registerSectionLine;
  g_spin_table = registerSectionLine(__start_causal_test_spin, __stop_causal_test_spin,
                                     "causal_test_spin.cpp", 10);
  g_leaf_table = registerSectionLine(__start_causal_test_leaf, __stop_causal_test_leaf,
                                     "causal_test_leaf.cpp", 20);
}

// Descriptors of this process that are perf_event counters.
int countPerfFds() {
  int count = 0;
  DIR *dir = opendir("/proc/self/fd");
  if (!dir)
    return -1;
  while (struct dirent *entry = readdir(dir)) {
    char link[300], target[256];
    snprintf(link, sizeof(link), "/proc/self/fd/%s", entry->d_name);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0)
      continue;
    target[n] = 0;
    count += strstr(target, "perf_event") != nullptr;
  }
  closedir(dir);
  return count;
}

void *spinThread(void *arg) {
  uint64_t ns = *static_cast<uint64_t *>(arg);
  spinFor(ns);
  *static_cast<uint64_t *>(arg) = threadCpuNs();
  return nullptr;
}

void *churnWorker(void *arg) {
  long kind = reinterpret_cast<long>(arg);
  spinFor(200000); // 0.2 ms
  if (kind % 3 == 1)
    pthread_exit(nullptr);
  if (kind % 3 == 2)
    for (;;) {
      pthread_testcancel();
      spinFor(100000);
    }
  return nullptr;
}

void *detachedSpinner(void *) {
  for (;;)
    spinFor(1000000);
  return nullptr;
}

int churn(uint64_t threads) {
  for (uint64_t i = 0; i < threads; i += 4) {
    pthread_t batch[4];
    for (long k = 0; k < 4; ++k)
      if (pthread_create(&batch[k], nullptr, churnWorker, reinterpret_cast<void *>(long(i) + k)))
        return 3;
    for (long k = 0; k < 4; ++k) {
      if ((long(i) + k) % 3 == 2)
        pthread_cancel(batch[k]);
      pthread_join(batch[k], nullptr);
    }
    if (i % 64 == 0) {
      fflush(stdout);
      pid_t child = fork();
      if (child == 0) {
        spinFor(1000000);
        _exit(0); // skips atexit; the runtime writes the child's profile all the same
      }
      int status = 0;
      waitpid(child, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 4;
    }
  }
  pthread_t spinner;
  if (pthread_create(&spinner, nullptr, detachedSpinner, nullptr))
    return 3;
  pthread_detach(spinner);
  spinFor(20000000); // let the spinner run, then exit under its feet
  printf("churn done\n");
  return 0;
}

int sleepy(uint64_t rounds) {
  int eintr = 0;
  for (uint64_t i = 0; i < rounds; ++i) {
    spinFor(300000);
    struct timespec ts = {0, 50000};
    if (nanosleep(&ts, nullptr) != 0 && errno == EINTR)
      ++eintr;
    if (poll(nullptr, 0, 0) < 0 && errno == EINTR)
      ++eintr;
    int fds[2];
    if (pipe(fds) == 0) {
      char c = 'x';
      if (write(fds[1], &c, 1) < 0 && errno == EINTR)
        ++eintr;
      if (read(fds[0], &c, 1) < 0 && errno == EINTR)
        ++eintr;
      close(fds[0]);
      close(fds[1]);
    }
  }
  printf("eintr=%d\n", eintr);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  const char *mode = argv[1];
  uint64_t ms = argc > 2 ? strtoull(argv[2], nullptr, 10) : 0;
  if (!strcmp(mode, "noop"))
    return 0;
  if (!strcmp(mode, "status")) {
    // SIGPROF stays the program's; the runtime samples with the highest
    // real-time signal the program left alone (SIGRTMAX here).
    struct sigaction prof, current;
    sigaction(SIGPROF, nullptr, &prof);
    sigaction(SIGRTMAX, nullptr, &current);
    bool prof_handler =
        (prof.sa_flags & SA_SIGINFO) ? prof.sa_sigaction != nullptr : prof.sa_handler != SIG_DFL;
    bool handler = (current.sa_flags & SA_SIGINFO) ? current.sa_sigaction != nullptr
                                                   : current.sa_handler != SIG_DFL;
    // Whether libunwind was loaded (the runtime loads it only to profile).
    bool unwinder = false;
    if (FILE *maps = fopen("/proc/self/maps", "r")) {
      char line[512];
      while (fgets(line, sizeof(line), maps))
        unwinder |= strstr(line, "libunwind") != nullptr;
      fclose(maps);
    }
    printf("hello from the target\nsigprof=%s sigrtmax=%s restart=%d libunwind=%d\n",
           prof_handler ? "handler" : "default", handler ? "handler" : "default",
           (current.sa_flags & SA_RESTART) ? 1 : 0, unwinder ? 1 : 0);
    return int(ms);
  }
  if (!strcmp(mode, "guardcheck")) {
    // Allocates with the sample signal blocked: malloc_guard must report it.
    sigset_t block, previous;
    sigemptyset(&block);
    sigaddset(&block, SIGRTMAX);
    pthread_sigmask(SIG_BLOCK, &block, &previous);
    void *volatile block_memory = malloc(32); // volatile: not elided
    free(block_memory);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return 0;
  }
  if (!strcmp(mode, "notable")) {
    __causal_register_module(nullptr, nullptr); // as an image linked without causal-ld
    return 0;
  }
  registerTables();
  if (!strcmp(mode, "spin")) {
    spinFor(ms * 1000000);
    printf("cpu_ns=%llu\nspin_range=%llx-%llx\n", (unsigned long long)threadCpuNs(),
           (unsigned long long)(uintptr_t)__start_causal_test_spin,
           (unsigned long long)(uintptr_t)__stop_causal_test_spin);
    return 0;
  }
  if (!strcmp(mode, "leaf")) {
    callLeafFor(ms * 1000000);
    printf("cpu_ns=%llu\n", (unsigned long long)threadCpuNs());
    return 0;
  }
  if (!strcmp(mode, "overhead")) {
    callRuntimeFor(ms * 1000000);
    printf("cpu_ns=%llu\n", (unsigned long long)threadCpuNs());
    return 0;
  }
  if (!strcmp(mode, "limit")) {
    // A thread that blocks every signal (many servers' workers do): the
    // sample signals queue, and the sampler stops itself after a few of
    // them. A pause that spins suspends and resumes the sampler meanwhile,
    // which must not start it again without that limit. Counted with the
    // signals still blocked, by taking them (the raw call: no hook).
    sigset_t all, previous, sample;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    spinFor(ms * 1000000);
    __causal_test_suspend_and_resume_sampling();
    spinFor(ms * 1000000);
    sigemptyset(&sample);
    sigaddset(&sample, SIGRTMAX);
    struct timespec zero = {0, 0};
    int queued = 0;
    while (syscall(SYS_rt_sigtimedwait, &sample, nullptr, &zero, _NSIG / 8) == SIGRTMAX)
      ++queued;
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    printf("queued=%d\n", queued);
    return 0;
  }
  if (!strcmp(mode, "handoff") || !strcmp(mode, "handoffspin")) {
    static sem_t turns[2];
    static uint64_t rounds, cpu[2];
    static bool then_spin;
    sem_init(&turns[0], 0, 1);
    sem_init(&turns[1], 0, 0);
    rounds = ms;
    then_spin = !strcmp(mode, "handoffspin");
    auto player = [](void *arg) -> void * {
      int me = int(uintptr_t(arg));
      for (uint64_t i = 0; i < rounds; ++i) {
        sem_wait(&turns[me]);
        if (then_spin)
          spinFor(10000, kShortSpinSteps);
        else
          spinFor(50000);
        sem_post(&turns[1 - me]);
      }
      if (then_spin)
        spinFor(150000000);
      cpu[me] = threadCpuNs();
      return nullptr;
    };
    pthread_t threads[2];
    for (uintptr_t i = 0; i < 2; ++i)
      pthread_create(&threads[i], nullptr, player, reinterpret_cast<void *>(i));
    for (pthread_t thread : threads)
      pthread_join(thread, nullptr);
    printf("cpu_ns=%llu\n", (unsigned long long)(cpu[0] + cpu[1]));
    return 0;
  }
  if (!strcmp(mode, "thread")) {
    // std::thread: pthread_create is called from libstdc++.so, not from
    // this program, and must reach the runtime's interposer all the same.
    uint64_t value = ms * 1000000;
    std::thread thread(spinThread, &value);
    thread.join();
    printf("cpu_ns=%llu\n", (unsigned long long)value);
    return 0;
  }
  if (!strcmp(mode, "dlopen")) {
    void *plugin = dlopen(argc > 3 ? argv[3] : "", RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      return 3;
    }
    auto spin = reinterpret_cast<uint64_t (*)(uint64_t)>(dlsym(plugin, "pluginSpinFor"));
    if (!spin)
      return 3;
    uint64_t before = threadCpuNs();
    spin(ms * 1000000);
    uint64_t used = threadCpuNs() - before;
    dlclose(plugin); // unregisters the plugin's table: its counts must survive
    printf("cpu_ns=%llu\n", (unsigned long long)used);
    return 0;
  }
  if (!strcmp(mode, "stale-frame-page"))
    return staleFramePage(ms);
  if (!strcmp(mode, "unloading"))
    return unloading(ms, argc > 3 ? argv[3] : "");
  if (!strcmp(mode, "exitnow")) {
    pthread_t spinner;
    if (pthread_create(&spinner, nullptr, detachedSpinner, nullptr))
      return 3;
    spinFor(20000000);
    printf("ending with %s(%d)\n", ms % 2 ? "_Exit" : "_exit", int(ms));
    fflush(stdout);
    if (ms % 2)
      _Exit(int(ms));
    _exit(int(ms));
  }
  if (!strcmp(mode, "atexitexit")) {
    static int code = int(ms);
    atexit([] { _exit(code); });
    spinFor(20000000);
    return 0;
  }
  if (!strcmp(mode, "signal")) {
    spinFor(20000000);
    kill(getpid(), int(ms));
    return 0; // not reached for a signal whose default action ends the process
  }
  if (!strcmp(mode, "alarm")) {
    struct itimerval timer = {{0, 0}, {0, 30000}};
    setitimer(ITIMER_REAL, &timer, nullptr);
    for (;;)
      spinFor(1000000);
  }
  if (!strcmp(mode, "quickexit")) {
    spinFor(20000000);
    quick_exit(int(ms));
  }
  if (!strcmp(mode, "churn"))
    return churn(ms);
  if (!strcmp(mode, "sleepy"))
    return sleepy(ms);
  if (!strcmp(mode, "fork")) {
    // Another thread is running (and sampled) when the main thread forks.
    std::atomic<bool> stop{false};
    std::thread other([&] {
      while (!stop.load())
        spinFor(100000);
    });
    spinFor(2 * ms * 1000000);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
      return 4;
    if (child == 0) {
      uint64_t before = threadCpuNs();
      spinFor(ms * 1000000);
      printf("child_cpu_ns=%llu\nchild_perf_fds=%d\n", (unsigned long long)(threadCpuNs() - before),
             countPerfFds());
      exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    stop.store(true);
    other.join();
    printf("parent_cpu_ns=%llu\n", (unsigned long long)threadCpuNs());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 5;
  }
  return 2;
}
