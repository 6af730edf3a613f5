//===- test/unit/runtime/paths_target.cpp - Chosen functions, by hand -----===//
//
// The program PathsTest runs: it declares causal_path_fn descriptors in the
// section the pass uses, registers them from a constructor as the pass's
// module constructor does, and calls __causal_path_enter/__causal_path_exit
// in the pattern the pass emits. Its functions live in one code section
// that a line table built in memory describes, one line per function, so
// that the paths' frames have names and FILE:LINE locations.
//
//   paths_target MODE   (stdout: what the test checks besides PROFILE.paths)
//     callers    helper() from callerA/B/C 1:2:7 times (1 ms of CPU each
//                call, interleaved), and once inlined (an inlined_at string)
//     recursion  recurse(5) three times: 3 outermost calls, 15 recursive
//     longjmp    jumper() left by longjmp five times, then helper() 3 times
//     threads    32 threads, each helper() 10 times from callerA
//     fork       helper() twice, then a fork inside forker(): the child calls
//                helper() three times, the parent once
//     blocked    sleeper(): nanosleep 5 x 20 ms, a 20 ms timed-out condition
//                wait; helper() once; locker() 1000 times, each locking a
//                mutex no other thread holds, then once waiting 60 ms for a
//                mutex another thread holds
//     alternating  helper() from callerA 40,000 times, its work 2 and 18 us
//                in turn (a stride that times every 16th call would see
//                only the short ones)
//     even       helper() from callerA and callerB in turn, 1,000 times
//                each, a multiply chain of the same length every call
//     two-parents  helper() from one call site in middle(), which parentP()
//                and parentQ() call in turn, 50 times each: the stack above
//                the site alternates between two paths
//     ids        prints each descriptor's enabled flag and id
//     signal-term, signal-int
//                a thread enters holder() (it sleeps there); helper() 3
//                times from callerA; then signaller() sleeps 50 ms, prints
//                "calls=3" and raises SIGTERM (SIGINT) on itself, inside
//     paused     a thread spins in spinner() (the line an experiment speeds
//                up); helper() 300 times from callerA, 2 ms of work each
//                and a throughput point's visit after each: this thread
//                pays the delays inside helper(); prints callerA's own timing
//                of its helper() calls
//     exit-inside a thread sleeps in holder(), another spins in spinner();
//                100 ms after both are in, main calls exit(0)
//     flush      a throughput point (the profiler thread runs) visited after
//                each helper() call from callerA, for 2.5 s; prints the calls
//                and how many part files of the sidecar there are, the one
//                found copied to part-copy.paths (the exit removes it)
//     live       its own client of live control (causal/paths_control.h):
//                helper() once, then enables "helper*,nosuch" through the
//                control file, calls helper() 4 times, asks for a flush,
//                disables helper(int) and calls it 3 times more; prints the
//                acknowledgements (or "no control file") and the part files
//                after the flush
//
//===----------------------------------------------------------------------===//

#include "TargetSupport.h"

#include "causal/abi.h"
#include "causal/paths_control.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

extern "C" void __causal_register_module(const void *start, const void *stop);
extern "C" void __causal_register_counters(causal_counter *start, causal_counter *stop);

namespace {
causal_counter g_point[] = {{0, "paths-work", CAUSAL_COUNTER_THROUGHPUT, 0}};
} // namespace

// ---- Descriptors, as the pass emits them ------------------------------------

#define CAUSAL_TEST_DESCRIPTOR(var, symbol, name)                                                  \
  __attribute__((section(CAUSAL_PATH_FN_SECTION), used, aligned(8)))                               \
  causal_path_fn var = {0, {0, 0, 0}, 0, symbol, name};

CAUSAL_TEST_DESCRIPTOR(g_helper_fn, "_Z6helperi", "helper(int)")
CAUSAL_TEST_DESCRIPTOR(g_recurse_fn, "_Z7recursei", "recurse(int)")
CAUSAL_TEST_DESCRIPTOR(g_jumper_fn, "_Z6jumperv", "jumper()")
CAUSAL_TEST_DESCRIPTOR(g_sleeper_fn, "_Z7sleeperv", "sleeper()")
CAUSAL_TEST_DESCRIPTOR(g_locker_fn, "_Z6lockerP15pthread_mutex_t", "locker(pthread_mutex_t*)")
CAUSAL_TEST_DESCRIPTOR(g_forker_fn, "_Z6forkerv", "forker()")
CAUSAL_TEST_DESCRIPTOR(g_holder_fn, "_Z6holderP5sem_t", "holder(sem_t*)")
CAUSAL_TEST_DESCRIPTOR(g_spinner_fn, "_Z7spinnerP5sem_t", "spinner(sem_t*)")
CAUSAL_TEST_DESCRIPTOR(g_signaller_fn, "_Z9signalleri", "signaller(int)")
// Another image's copy of helper's descriptor (an inline function's): one id.
CAUSAL_TEST_DESCRIPTOR(g_helper_copy_fn, "_Z6helperi", "helper(int)")

extern "C" causal_path_fn __start_causal_path_fns[];
extern "C" causal_path_fn __stop_causal_path_fns[];

// The module constructor's call (after the counters', which this program has none of).
__attribute__((constructor)) void registerPathFns() {
  __causal_register_path_fns(__start_causal_path_fns, __stop_causal_path_fns);
  __causal_register_path_fns(__start_causal_path_fns, __stop_causal_path_fns); // idempotent
}

// The code the pass puts at F's entry (with the module's counter,
// causal.path.count, written out in F) and at its ways out.
extern "C" __thread int32_t *__causal_path_countdowns __attribute__((tls_model("initial-exec")));
#define PATH_ENTER(fn, inlined_at)                                                                 \
  uint32_t path_token = 0;                                                                         \
  if (uint8_t path_on = __atomic_load_n(&(fn).enabled, __ATOMIC_RELAXED);                          \
      __builtin_expect(path_on != 0, 0)) {                                                         \
    int32_t *path_counts = path_on == CAUSAL_PATH_FN_COUNTED ? __causal_path_countdowns : nullptr; \
    int32_t *path_slot =                                                                           \
        path_counts ? path_counts + __atomic_load_n(&(fn).id, __ATOMIC_RELAXED) : nullptr;         \
    int32_t path_left = path_slot ? __atomic_load_n(path_slot, __ATOMIC_RELAXED) - 1 : -1;         \
    if (path_slot)                                                                                 \
      __atomic_store_n(path_slot, path_left, __ATOMIC_RELAXED);                                    \
    if (path_left < 0)                                                                             \
      path_token = __causal_path_enter(&(fn), inlined_at);                                         \
  }
#define PATH_EXIT(fn)                                                                              \
  do {                                                                                             \
    if (path_token != 0)                                                                           \
      __causal_path_exit(&(fn), path_token);                                                       \
  } while (0)

#define CODE __attribute__((noinline, section("causal_test_paths")))

extern "C" const char __start_causal_test_paths[];
extern "C" const char __stop_causal_test_paths[];

namespace {

uint64_t g_work_ns = 1000000; // CPU time of one helper() call
// Not 0: helper() runs a multiply chain of this many steps instead (the same
// instructions every call, where the CPU clock's own reads vary).
volatile uint64_t g_work_steps = 0;
// Loop counts the compiler cannot unroll: each call site is a path of its own.
volatile int g_two = 2, g_three = 3, g_five = 5, g_seven = 7, g_ten = 10;
jmp_buf g_jump;

} // namespace

// ---- The program's functions (one line each in the table) -----------------

__attribute__((noinline)) uint64_t multiplyChain(uint64_t steps) {
  uint64_t x = steps;
  for (uint64_t i = 0; i < steps; ++i)
    x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

CODE int helper(int salt) {
  PATH_ENTER(g_helper_fn, nullptr);
  uint64_t sink =
      g_work_steps ? multiplyChain(g_work_steps) : causal::test::burnCpu(g_work_ns, 100 + salt % 3);
  PATH_EXIT(g_helper_fn);
  return int(sink & 1);
}

// Each caller also times its calls of helper() itself (the truth the paths'
// wall times are compared with: the same preemptions hit both).
uint64_t g_wall_ns[3];
#define TIMED(index, call)                                                                         \
  uint64_t start = causal::test::nowNs();                                                          \
  int r = call;                                                                                    \
  __atomic_fetch_add(&g_wall_ns[index], causal::test::nowNs() - start, __ATOMIC_RELAXED);          \
  return r

CODE int callerA() { TIMED(0, helper(1) + 1); }
CODE int callerB() { TIMED(1, helper(2) + 2); }
CODE int callerC() { TIMED(2, helper(3) + 3); }

// helper() inlined into wrapper() inlined into callerD(): the entry call sits
// in callerD's code, with the string naming the frames inlining removed.
CODE int callerD() {
  PATH_ENTER(g_helper_fn, "wrapper(int)\tinlined.cpp:7\ncallerD()\tpaths_target.cpp:400\n");
  uint64_t sink = causal::test::burnCpu(g_work_ns, 100);
  PATH_EXIT(g_helper_fn);
  return int(sink & 1) + 4;
}

// One call site of helper() under two callers.
CODE int middle() { return helper(5) + 5; }
CODE int parentP() { return middle() + 1; }
CODE int parentQ() { return middle() + 2; }

CODE int recurse(int n) {
  PATH_ENTER(g_recurse_fn, nullptr);
  int r = n <= 0 ? int(causal::test::burnCpu(100000, 100) & 1) : recurse(n - 1) + 1;
  PATH_EXIT(g_recurse_fn);
  return r;
}

CODE void jumper() {
  PATH_ENTER(g_jumper_fn, nullptr);
  (void)path_token;
  longjmp(g_jump, 1); // leaves without the exit
}

CODE void sleeper() {
  PATH_ENTER(g_sleeper_fn, nullptr);
  for (int i = 0; i < g_five; ++i) {
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, nullptr);
  }
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  pthread_mutex_lock(&mutex);
  struct timespec deadline = causal::test::realtimeIn(20000000);
  pthread_cond_timedwait(&cond, &mutex, &deadline);
  pthread_mutex_unlock(&mutex);
  PATH_EXIT(g_sleeper_fn);
}

CODE void locker(pthread_mutex_t *mutex) {
  PATH_ENTER(g_locker_fn, nullptr);
  pthread_mutex_lock(mutex);
  pthread_mutex_unlock(mutex);
  PATH_EXIT(g_locker_fn);
}

pthread_mutex_t g_held = PTHREAD_MUTEX_INITIALIZER;
void *holdFor60ms(void *started) {
  pthread_mutex_lock(&g_held);
  sem_post(static_cast<sem_t *>(started));
  struct timespec ts = {0, 60000000};
  nanosleep(&ts, nullptr);
  pthread_mutex_unlock(&g_held);
  return nullptr;
}

CODE int forker() {
  PATH_ENTER(g_forker_fn, nullptr);
  pid_t child = fork();
  int result = 0;
  if (child == 0) {
    for (int i = 0; i < g_three; ++i)
      result += callerA();
  } else {
    result = callerB();
    int status = 0;
    waitpid(child, &status, 0);
    printf("child %d status %d\n", int(child), status);
  }
  PATH_EXIT(g_forker_fn);
  return child == 0 ? -1 : result;
}

// Entered by a thread that stays inside until the process ends.
CODE void holder(sem_t *inside) {
  PATH_ENTER(g_holder_fn, nullptr);
  sem_post(inside);
  for (;;) {
    struct timespec ts = {1, 0};
    nanosleep(&ts, nullptr);
  }
  PATH_EXIT(g_holder_fn);
}
CODE void spinner(sem_t *inside) {
  PATH_ENTER(g_spinner_fn, nullptr);
  sem_post(inside);
  for (;;)
    causal::test::burnCpu(1000000, 100);
  PATH_EXIT(g_spinner_fn);
}
void *holderMain(void *inside) {
  holder(static_cast<sem_t *>(inside));
  return nullptr;
}
void *spinnerMain(void *inside) {
  spinner(static_cast<sem_t *>(inside));
  return nullptr;
}

// Raises |signal| from inside a chosen function, 50 ms after its entry.
CODE void signaller(int signal) {
  PATH_ENTER(g_signaller_fn, nullptr);
  struct timespec ts = {0, 50000000};
  nanosleep(&ts, nullptr);
  printf("calls=3\n");
  fflush(stdout);
  raise(signal);
  PATH_EXIT(g_signaller_fn);
}

CODE void *threadMain(void *) {
  int sum = 0;
  for (int i = 0; i < g_ten; ++i)
    sum += callerA();
  return reinterpret_cast<void *>(intptr_t(sum));
}

// Runs |count| threads of |main| (at most 32) and waits for them.
void runThreads(int count, void *(*main)(void *)) {
  pthread_t threads[32];
  for (int i = 0; i < count && i < 32; ++i)
    pthread_create(&threads[i], nullptr, main, nullptr);
  for (int i = 0; i < count && i < 32; ++i)
    pthread_join(threads[i], nullptr);
}

CODE void *hotThreadMain(void *) {
  int sum = 0;
  for (int i = 0; i < 1000; ++i) {
    sum += callerA();
    for (int j = 0; j < g_three; ++j)
      sum += callerB();
  }
  return reinterpret_cast<void *>(intptr_t(sum));
}

// The part files of the sidecar (profile.coz.paths.part-RUN, in the working
// directory), the last one found copied to |copy| if not null.
unsigned partFiles(const char *copy) {
  unsigned parts = 0;
  DIR *dir = opendir(".");
  while (const dirent *entry = dir ? readdir(dir) : nullptr) {
    const char *name = entry->d_name;
    size_t length = strlen(name);
    if (strncmp(name, "profile.coz.paths.part-", 23) != 0 ||
        (length > 4 && !strcmp(name + length - 4, ".tmp")))
      continue;
    ++parts;
    FILE *from = copy ? fopen(name, "rb") : nullptr;
    FILE *to = from ? fopen(copy, "wb") : nullptr;
    char buffer[4096];
    for (size_t n; to && (n = fread(buffer, 1, sizeof buffer, from)) > 0;)
      fwrite(buffer, 1, n, to);
    if (to)
      fclose(to);
    if (from)
      fclose(from);
  }
  if (dir)
    closedir(dir);
  return parts;
}

// ---- Live control, as a client does it ---------------------------------------

namespace pc = causal::paths_control;

char g_control_file[512];

// This process's control block, as its runtime made it; null if none.
pc::Block *openControl() {
  const char *directories[] = {pc::kDirectory, pc::kFallbackDirectory};
  for (const char *directory : directories) {
    snprintf(g_control_file, sizeof(g_control_file), "%s/%s%u-%d%s", directory, pc::kPrefix,
             unsigned(getuid()), int(getpid()), pc::kSuffix);
    int fd = open(g_control_file, O_RDWR | O_CLOEXEC);
    if (fd < 0)
      continue;
    void *memory = mmap(nullptr, sizeof(pc::Block), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return memory == MAP_FAILED ? nullptr : static_cast<pc::Block *>(memory);
  }
  return nullptr;
}

// Sends a command and waits (at most 20 s) for its acknowledgement; prints it.
bool controlCommand(pc::Block *block, uint32_t op, const char *patterns) {
  uint64_t sequence = block->command.sequence + 1;
  block->command.op = op;
  snprintf(block->command.patterns, sizeof(block->command.patterns), "%s", patterns);
  __atomic_store_n(&block->command.sequence, sequence, __ATOMIC_RELEASE);
  uint64_t deadline = causal::test::nowNs() + 20000000000ull;
  while (__atomic_load_n(&block->ack.sequence, __ATOMIC_ACQUIRE) != sequence) {
    if (causal::test::nowNs() > deadline) {
      printf("no answer to op %u\n", op);
      return false;
    }
    usleep(1000);
  }
  const pc::Ack &ack = block->ack;
  std::string unmatched = ack.unmatched;
  for (char &c : unmatched)
    c = c == '\n' ? ';' : c;
  printf("op %u: status %u matched %u changed %u functions %u enabled %u generation %llu "
         "unmatched [%s] state %u\n",
         op, ack.status, ack.matched, ack.changed, ack.functions, ack.enabled,
         (unsigned long long)ack.flush_generation, unmatched.c_str(),
         __atomic_load_n(&block->state, __ATOMIC_ACQUIRE));
  return true;
}

CODE int runMode(const char *mode) {
  int sum = 0;
  if (!strcmp(mode, "callers")) {
    for (int round = 0; round < g_ten; ++round) { // interleaved: the machine's load hits all alike
      sum += callerA();
      for (int i = 0; i < g_two; ++i)
        sum += callerB();
      for (int i = 0; i < g_seven; ++i)
        sum += callerC();
    }
    sum += callerD();
    printf("wall_a=%llu wall_b=%llu wall_c=%llu\n",
           (unsigned long long)__atomic_load_n(&g_wall_ns[0], __ATOMIC_RELAXED),
           (unsigned long long)__atomic_load_n(&g_wall_ns[1], __ATOMIC_RELAXED),
           (unsigned long long)__atomic_load_n(&g_wall_ns[2], __ATOMIC_RELAXED));
  } else if (!strcmp(mode, "alternating")) {
    for (int i = 0; i < 40000; ++i) {
      g_work_ns = i & 1 ? 18000 : 2000;
      sum += callerA();
    }
  } else if (!strcmp(mode, "even")) {
    g_work_steps = 20000;
    for (int i = 0; i < 1000; ++i)
      sum += callerA() + callerB();
  } else if (!strcmp(mode, "two-parents")) {
    g_work_ns = 10000;
    for (int i = 0; i < 100; ++i)
      sum += i & 1 ? parentQ() : parentP();
  } else if (!strcmp(mode, "recursion")) {
    for (int i = 0; i < g_three; ++i)
      sum += recurse(5);
  } else if (!strcmp(mode, "recursion-many")) {
    // 2,000 outermost calls of recurse(), each 5 deep (100 us at the
    // bottom): for sampled walks of a recursive function.
    for (int i = 0; i < 2000; ++i)
      sum += recurse(5);
  } else if (!strcmp(mode, "longjmp")) {
    for (int i = 0; i < g_five; ++i)
      if (!setjmp(g_jump))
        jumper();
    g_work_ns = 10000000; // 10 ms: the time a stale jumper() entry would take in
    for (int i = 0; i < g_three; ++i)
      sum += callerA();
  } else if (!strcmp(mode, "threads")) {
    g_work_ns = 100000;
    runThreads(32, threadMain);
  } else if (!strcmp(mode, "hot-threads")) {
    // Many short calls in 8 threads, 1:3 from callerA and callerB (in turn),
    // for sampled walks (--paths-walk-one-in).
    g_work_ns = 0;
    g_work_steps = 200;
    runThreads(8, hotThreadMain);
  } else if (!strcmp(mode, "hot-one-thread")) {
    // 2,000,000 short calls, 1:3 from callerA and callerB, then 3 calls of
    // recurse() (which recurses 5 deep): for --paths-walk-one-in 0 (auto).
    g_work_ns = 0;
    g_work_steps = 50;
    for (int i = 0; i < 500000; ++i) {
      sum += callerA();
      for (int j = 0; j < g_three; ++j)
        sum += callerB();
    }
    for (int i = 0; i < g_three; ++i)
      sum += recurse(5);
  } else if (!strcmp(mode, "fork")) {
    g_work_ns = 100000;
    for (int i = 0; i < g_two; ++i)
      sum += callerA();
    if (forker() < 0) {
      fflush(stdout);
      exit(0); // the child: its profile and paths at its exit
    }
    sum += callerC();
  } else if (!strcmp(mode, "blocked")) {
    sleeper();
    sum += callerA();
    pthread_mutex_t free_mutex = PTHREAD_MUTEX_INITIALIZER;
    for (int i = 0; i < 1000; ++i)
      locker(&free_mutex);
    sem_t started;
    sem_init(&started, 0, 0);
    pthread_t holder;
    pthread_create(&holder, nullptr, holdFor60ms, &started);
    sem_wait(&started);
    locker(&g_held);
    pthread_join(holder, nullptr);
  } else if (!strcmp(mode, "flush")) {
    g_work_ns = 200000;
    __causal_register_counters(g_point, g_point + 1); // starts the profiler thread
    uint64_t end = causal::test::nowNs() + 2500000000ull;
    unsigned calls = 0;
    while (causal::test::nowNs() < end) {
      sum += callerA();
      ++calls;
      __atomic_add_fetch(&g_point[0].count, 1, __ATOMIC_RELAXED);
    }
    printf("calls=%u part_files=%u\n", calls, partFiles("part-copy.paths"));
  } else if (!strcmp(mode, "live")) {
    g_work_ns = 100000;
    sum += callerA(); // not enabled: not recorded
    pc::Block *block = openControl();
    if (!block) {
      printf("no control file\n");
      return sum;
    }
    printf("control file %s pid=%u self=%d sidecar %s\n", g_control_file, block->pid, int(getpid()),
           block->sidecar);
    controlCommand(block, pc::kEnable, "helper*,nosuch");
    printf("helper descriptors %u %u\n",
           unsigned(__atomic_load_n(&g_helper_fn.enabled, __ATOMIC_RELAXED)),
           unsigned(__atomic_load_n(&g_helper_copy_fn.enabled, __ATOMIC_RELAXED)));
    for (int i = 0; i < g_two * 2; ++i)
      sum += callerA();
    controlCommand(block, pc::kFlush, "");
    printf("part files after the flush %u\n", partFiles(nullptr));
    controlCommand(block, pc::kDisable, "helper(int)");
    printf("helper descriptors %u %u\n",
           unsigned(__atomic_load_n(&g_helper_fn.enabled, __ATOMIC_RELAXED)),
           unsigned(__atomic_load_n(&g_helper_copy_fn.enabled, __ATOMIC_RELAXED)));
    for (int i = 0; i < g_three; ++i)
      sum += callerA();
  } else if (!strcmp(mode, "signal-term") || !strcmp(mode, "signal-int")) {
    sem_t inside;
    sem_init(&inside, 0, 0);
    pthread_t thread;
    pthread_create(&thread, nullptr, holderMain, &inside);
    sem_wait(&inside);
    for (int i = 0; i < g_three; ++i)
      sum += callerA();
    signaller(!strcmp(mode, "signal-term") ? SIGTERM : SIGINT);
  } else if (!strcmp(mode, "exit-inside")) {
    sem_t inside;
    sem_init(&inside, 0, 0);
    pthread_t threads[2];
    pthread_create(&threads[0], nullptr, holderMain, &inside);
    pthread_create(&threads[1], nullptr, spinnerMain, &inside);
    sem_wait(&inside);
    sem_wait(&inside);
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, nullptr);
    printf("exit\n");
    fflush(stdout);
    exit(0);
  } else if (!strcmp(mode, "paused")) {
    sem_t inside;
    sem_init(&inside, 0, 0);
    pthread_t thread;
    pthread_create(&thread, nullptr, spinnerMain, &inside);
    sem_wait(&inside);
    __causal_register_counters(g_point, g_point + 1); // starts the profiler thread
    g_work_ns = 2000000;
    for (int i = 0; i < 300; ++i) {
      sum += callerA();
      __atomic_add_fetch(&g_point[0].count, 1, __ATOMIC_RELAXED);
    }
    printf("wall_a=%llu\n", (unsigned long long)__atomic_load_n(&g_wall_ns[0], __ATOMIC_RELAXED));
  } else if (!strcmp(mode, "ids")) {
    for (causal_path_fn *d = __start_causal_path_fns; d < __stop_causal_path_fns; ++d)
      printf("descriptor %s enabled %u id %u\n", d->name, unsigned(d->enabled), d->id);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return -1;
  }
  return sum;
}

CODE int realMain(int, char **argv) {
  int sum = runMode(argv[1]);
  printf("done %d\n", sum);
  return sum < 0 ? 1 : 0;
}

// ---- The line table of the section ---------------------------------------

namespace {

struct Named {
  const void *address;
  const char *name;
  uint32_t line;
};

std::unique_ptr<causal::test::InMemoryLineTable> &g_table =
    *new std::unique_ptr<causal::test::InMemoryLineTable>; // never destroyed: read at exit

void registerTable() {
  std::vector<Named> functions = {
      {reinterpret_cast<const void *>(&helper), "helper(int)", 100},
      {reinterpret_cast<const void *>(&callerA), "callerA()", 110},
      {reinterpret_cast<const void *>(&callerB), "callerB()", 120},
      {reinterpret_cast<const void *>(&callerC), "callerC()", 130},
      {reinterpret_cast<const void *>(&callerD), "callerD()", 140},
      {reinterpret_cast<const void *>(&recurse), "recurse(int)", 150},
      {reinterpret_cast<const void *>(&middle), "middle()", 151},
      {reinterpret_cast<const void *>(&parentP), "parentP()", 152},
      {reinterpret_cast<const void *>(&parentQ), "parentQ()", 153},
      {reinterpret_cast<const void *>(&jumper), "jumper()", 160},
      {reinterpret_cast<const void *>(&sleeper), "sleeper()", 170},
      {reinterpret_cast<const void *>(&forker), "forker()", 180},
      {reinterpret_cast<const void *>(&locker), "locker(pthread_mutex_t*)", 185},
      {reinterpret_cast<const void *>(&threadMain), "threadMain(void*)", 190},
      {reinterpret_cast<const void *>(&holder), "holder(sem_t*)", 191},
      {reinterpret_cast<const void *>(&spinner), "spinner(sem_t*)", 192},
      {reinterpret_cast<const void *>(&signaller), "signaller(int)", 193},
      {reinterpret_cast<const void *>(&runMode), "runMode(char const*)", 200},
      {reinterpret_cast<const void *>(&realMain), "realMain(int, char**)", 210},
  };
  std::sort(functions.begin(), functions.end(),
            [](const Named &a, const Named &b) { return a.address < b.address; });
  causal::test::LineTableSpec spec;
  spec.code_vaddr = reinterpret_cast<uintptr_t>(__start_causal_test_paths);
  spec.files = {"paths_target.cpp"};
  for (size_t i = 0; i < functions.size(); ++i) {
    spec.rows.push_back(
        {uint32_t(reinterpret_cast<const char *>(functions[i].address) - __start_causal_test_paths),
         uint32_t(i)});
    spec.lines.push_back({0, functions[i].line});
    spec.functions.push_back(functions[i].name);
  }
  spec.rows.push_back(
      {uint32_t(__stop_causal_test_paths - __start_causal_test_paths), CAUSAL_NO_LINE});
  g_table = std::make_unique<causal::test::InMemoryLineTable>(spec);
  __causal_register_module(g_table->start(), g_table->stop());
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: paths_target MODE\n");
    return 2;
  }
  registerTable();
  return realMain(argc, argv);
}
