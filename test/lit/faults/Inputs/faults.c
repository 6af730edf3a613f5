// The fault suite's program (test/lit/faults): one mode per case, chosen by
// argv[1]. Built twice, with -fcausal-profile and without; each .test runs
// both and compares their stdout and exit status (Inputs/same_behaviour.py).
// A mode that waits for a signal prints "ready" first.
#define _GNU_SOURCE
#include <causal/causal.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static volatile unsigned long sink;
static const char *self_path;

static double nowSeconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

// CPU work with a progress point, for |seconds| of wall time.
static void work(double seconds) {
  double end = nowSeconds() + seconds;
  while (nowSeconds() < end) {
    for (unsigned long i = 0; i < 200000; ++i)
      sink = sink * 6364136223846793005ul + i; // WORK
    CAUSAL_PROGRESS_NAMED("work");
  }
}

static void ready(void) {
  printf("ready\n");
  fflush(stdout);
}

// ---- process endings --------------------------------------------------------

static int untilSignal(void) {
  ready();
  for (;;)
    work(0.05);
}

static int abortMode(void) {
  work(0.2);
  printf("aborting\n");
  fflush(stdout);
  abort();
}

static void onQuickExit(void) { printf("at_quick_exit handler\n"); fflush(stdout); }

static int quickExitMode(void) {
  at_quick_exit(onQuickExit);
  work(0.2);
  quick_exit(7);
}

static void *exitingThread(void *arg) {
  (void)arg;
  work(0.2);
  printf("thread exits the process\n");
  fflush(stdout);
  exit(3);
}

static int exitFromThread(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, exitingThread, NULL);
  for (;;)
    pause(); // the thread ends the process
}

// _exit(3) or _Exit(5) from main while another thread works: no atexit
// handler and no destructor runs, yet the profile must be written.
static void *workingThread(void *arg) {
  (void)arg;
  for (;;)
    work(0.05);
}

static int underscoreExit(const char *which) {
  pthread_t thread;
  pthread_create(&thread, NULL, workingThread, NULL);
  work(0.2);
  int upper = !strcmp(which, "_Exit");
  printf("ending with %s(%d)\n", upper ? "_Exit" : "_exit", upper ? 5 : 3);
  fflush(stdout);
  if (upper)
    _Exit(5);
  _exit(3);
}

// The program's own atexit handler ends it with _exit(9).
static void exitFromAtexit(void) {
  printf("atexit handler calls _exit(9)\n");
  fflush(stdout);
  _exit(9);
}

static int atexitUnderscoreExit(void) {
  atexit(exitFromAtexit);
  work(0.2);
  return 0;
}

// ---- processes --------------------------------------------------------------

static int forkMode(void) {
  pid_t child = fork();
  if (child == 0) {
    work(0.2);
    printf("child done\n");
    fflush(stdout);
    _exit(4);
  }
  work(0.2);
  int status = 0;
  waitpid(child, &status, 0);
  printf("child exit %d\n", WEXITSTATUS(status));
  return 0;
}

static int execMode(void) {
  work(0.2);
  printf("exec\n");
  fflush(stdout);
  execl(self_path, self_path, "work", NULL);
  perror("execl");
  return 1;
}

static int vforkMode(void) {
  work(0.1);
  fflush(stdout);
  pid_t child = vfork();
  if (child == 0) {
    execl("/bin/echo", "echo", "from the vfork child", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  work(0.1);
  printf("vfork child exit %d\n", WEXITSTATUS(status));
  return 0;
}

static int spawnMode(void) {
  work(0.1);
  fflush(stdout);
  char *argv[] = {"echo", "from the spawned child", NULL};
  pid_t child;
  int error = posix_spawn(&child, "/bin/echo", NULL, NULL, argv, environ);
  if (error) {
    printf("posix_spawn: %s\n", strerror(error));
    return 1;
  }
  int status = 0;
  waitpid(child, &status, 0);
  work(0.1);
  printf("spawned child exit %d\n", WEXITSTATUS(status));
  return 0;
}

// Several processes append to one profile: this one and |n| - 1 children,
// each working |seconds| (longer than the flush period: parts interleave).
static int appendMode(int n, double seconds) {
  for (int i = 1; i < n; ++i)
    if (fork() == 0) {
      work(seconds);
      _exit(0);
    }
  work(seconds);
  int exited = 0, status;
  while (wait(&status) > 0)
    exited += WIFEXITED(status) && WEXITSTATUS(status) == 0;
  printf("%d children exited\n", exited);
  return 0;
}

// ---- threads ----------------------------------------------------------------

static atomic_long g_counted;

static void *shortThread(void *arg) {
  (void)arg;
  for (int i = 0; i < 1000; ++i)
    sink += i;
  atomic_fetch_add(&g_counted, 1);
  return NULL;
}

static int manyThreads(int n) {
  pthread_t threads[64];
  for (int done = 0; done < n; done += 64) {
    int batch = n - done < 64 ? n - done : 64;
    for (int i = 0; i < batch; ++i)
      if (pthread_create(&threads[i], NULL, shortThread, NULL) != 0) {
        printf("pthread_create failed\n");
        return 1;
      }
    for (int i = 0; i < batch; ++i)
      pthread_join(threads[i], NULL);
  }
  printf("%ld threads ran\n", atomic_load(&g_counted));
  return 0;
}

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_waiting;

static void *waitForever(void *arg) {
  (void)arg;
  pthread_mutex_lock(&g_lock);
  g_waiting = 1;
  pthread_cond_broadcast(&g_cond);
  for (;;)
    pthread_cond_wait(&g_cond, &g_lock); // cancelled here; the cleanup unlocks
  return NULL;
}

static void unlockOnCancel(void *arg) { pthread_mutex_unlock(arg); }

static void *waitForeverWithCleanup(void *arg) {
  pthread_cleanup_push(unlockOnCancel, &g_lock);
  waitForever(arg);
  pthread_cleanup_pop(0);
  return NULL;
}

static int cancelMode(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, waitForeverWithCleanup, NULL);
  pthread_mutex_lock(&g_lock);
  while (!g_waiting)
    pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
  work(0.1);
  pthread_cancel(thread);
  void *result = NULL;
  pthread_join(thread, &result);
  // The lock is free again: the cancelled wait re-took it, the cleanup let it go.
  int relock = pthread_mutex_trylock(&g_lock);
  printf("cancelled %d, relock %d\n", result == PTHREAD_CANCELED, relock);
  return 0;
}

static void *holdLock(void *arg) {
  pthread_mutex_lock(arg);
  return NULL; // dies holding a robust mutex
}

static int errorReturns(void) {
  pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&held);
  printf("trylock: %s\n", strerror(pthread_mutex_trylock(&held)));
  struct timespec soon;
  clock_gettime(CLOCK_REALTIME, &soon);
  soon.tv_nsec += 20000000;
  if (soon.tv_nsec >= 1000000000) {
    soon.tv_sec++;
    soon.tv_nsec -= 1000000000;
  }
  printf("timedlock: %s\n", strerror(pthread_mutex_timedlock(&held, &soon)));
  pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  pthread_mutex_lock(&plain);
  printf("cond_timedwait: %s\n", strerror(pthread_cond_timedwait(&cond, &plain, &soon)));
  pthread_mutex_unlock(&plain);

  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_t checked;
  pthread_mutex_init(&checked, &attr);
  pthread_mutex_lock(&checked);
  printf("relock: %s\n", strerror(pthread_mutex_lock(&checked)));
  pthread_mutex_unlock(&checked);
  printf("unlock unowned: %s\n", strerror(pthread_mutex_unlock(&checked)));

  pthread_mutexattr_t robust_attr;
  pthread_mutexattr_init(&robust_attr);
  pthread_mutexattr_setrobust(&robust_attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_t robust;
  pthread_mutex_init(&robust, &robust_attr);
  pthread_t owner;
  pthread_create(&owner, NULL, holdLock, &robust);
  pthread_join(owner, NULL);
  int error = pthread_mutex_lock(&robust);
  printf("robust: %s\n", strerror(error));
  if (error == EOWNERDEAD)
    pthread_mutex_consistent(&robust);
  pthread_mutex_unlock(&robust);

  sem_t sem;
  sem_init(&sem, 0, 0);
  printf("sem_trywait: %s\n", sem_trywait(&sem) ? strerror(errno) : "ok");
  printf("sem_timedwait: %s\n", sem_timedwait(&sem, &soon) ? strerror(errno) : "ok");
  pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
  pthread_rwlock_wrlock(&rw);
  printf("rwlock tryrdlock: %s\n", strerror(pthread_rwlock_tryrdlock(&rw)));
  return 0;
}

// rwlocks, barriers and semaphores under contention.
enum { kWorkers = 4, kRounds = 300 };
static pthread_rwlock_t g_rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t g_barrier;
static sem_t g_tokens;
static long g_shared, g_reads;

static void *contend(void *arg) {
  long id = (long)arg;
  for (int round = 0; round < kRounds; ++round) {
    if ((round + id) % 4 == 0) {
      pthread_rwlock_wrlock(&g_rw);
      g_shared++;
      pthread_rwlock_unlock(&g_rw);
    } else {
      pthread_rwlock_rdlock(&g_rw);
      __atomic_fetch_add(&g_reads, g_shared >= 0, __ATOMIC_RELAXED);
      pthread_rwlock_unlock(&g_rw);
    }
    sem_wait(&g_tokens);
    for (int i = 0; i < 2000; ++i)
      sink += i; // ROUND
    sem_post(&g_tokens);
    CAUSAL_PROGRESS_NAMED("round");
    pthread_barrier_wait(&g_barrier);
  }
  return NULL;
}

static int contention(void) {
  pthread_barrier_init(&g_barrier, NULL, kWorkers);
  sem_init(&g_tokens, 0, 2);
  pthread_t threads[kWorkers];
  for (long i = 0; i < kWorkers; ++i)
    pthread_create(&threads[i], NULL, contend, (void *)i);
  for (int i = 0; i < kWorkers; ++i)
    pthread_join(threads[i], NULL);
  printf("writes %ld, reads %ld\n", g_shared, g_reads);
  return 0;
}

// ---- signals ----------------------------------------------------------------

static volatile sig_atomic_t g_ticks;
static void onProf(int signal) {
  (void)signal;
  g_ticks++;
}

// The program's own SIGPROF timer (setitimer(ITIMER_PROF)), as gprof-style
// code has: its handler still runs, the program still ends.
static int ownProfTimer(void) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = onProf;
  action.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &action, NULL);
  struct itimerval timer = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_PROF, &timer, NULL);
  double end = nowSeconds() + 4;
  while (g_ticks < 50 && nowSeconds() < end)
    work(0.01);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  printf("own SIGPROF ticks: %s\n", g_ticks >= 50 ? "at least 50" : "too few");
  return 0;
}

static void *blockedWorker(void *arg) {
  (void)arg;
  work(0.2);
  return NULL;
}

// Every signal blocked from the start, in the main thread and its threads.
static int allBlocked(void) {
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  pthread_t thread;
  pthread_create(&thread, NULL, blockedWorker, NULL);
  work(0.2);
  pthread_join(thread, NULL);
  printf("done with every signal blocked\n");
  return 0;
}

static sigjmp_buf g_recover;
static void onSegv(int signal) {
  (void)signal;
  siglongjmp(g_recover, 1);
}

static int recurse(int depth) {
  volatile char frame[512];
  frame[0] = (char)depth;
  return recurse(depth + 1) + frame[0];
}

static jmp_buf g_unwind;
static void deep(int n) {
  if (n == 0)
    longjmp(g_unwind, 42);
  work(0.001);
  deep(n - 1);
}

// longjmp across frames; a stack overflow caught on an alternate stack and
// left with siglongjmp, three times.
static int longjmpMode(void) {
  int value = setjmp(g_unwind);
  if (value == 0)
    deep(50);
  printf("longjmp returned %d\n", value);
  static char alternate[1 << 16];
  stack_t stack = {.ss_sp = alternate, .ss_size = sizeof(alternate), .ss_flags = 0};
  sigaltstack(&stack, NULL);
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = onSegv;
  action.sa_flags = SA_ONSTACK | SA_NODEFER;
  sigaction(SIGSEGV, &action, NULL);
  int recovered = 0;
  for (int i = 0; i < 3; ++i)
    if (sigsetjmp(g_recover, 1) == 0)
      recurse(0);
    else
      recovered++;
  work(0.1);
  printf("recovered from %d stack overflows\n", recovered);
  return 0;
}

// CPU work with only |room| bytes of the thread's stack left below it, for a
// range of rooms from just above the kernel's signal frame (AT_MINSIGSTKSZ)
// up: a sample that lands there leaves a handler little stack. The thread's
// stack is small so that the padding is one allocation.
static __attribute__((noinline)) void spinHere(unsigned long iterations) {
  for (unsigned long i = 0; i < iterations; ++i)
    sink = sink * 6364136223846793005ul + i; // the edge's work
}

static __attribute__((noinline)) void spinWithRoom(char *low, size_t room,
                                                  unsigned long iterations) {
  char here;
  size_t above = (size_t)(&here - low);
  if (above <= room + 512) {
    spinHere(iterations);
    return;
  }
  volatile char pad[above - room - 256]; // spinHere's frame goes below it
  pad[0] = 0;
  spinHere(iterations);
  pad[0]++;
}

struct StackEdge {
  unsigned long iterations; // per depth
  int depths;               // depths spun at
};

static void *stackEdgeWorker(void *arg) {
  struct StackEdge *edge = arg;
  pthread_attr_t attr;
  void *low = NULL;
  size_t size = 0;
  pthread_getattr_np(pthread_self(), &attr);
  pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  size_t frame = getauxval(AT_MINSIGSTKSZ) ? getauxval(AT_MINSIGSTKSZ) : 2048;
  for (size_t room = frame + 512; room <= frame + 12288; room += 256, edge->depths++)
    spinWithRoom((char *)low, room, edge->iterations);
  return NULL;
}

static int stackEdgeMode(double seconds_per_depth) {
  // Iterations worth |seconds_per_depth| of CPU, measured here.
  double start = nowSeconds();
  spinHere(1000000);
  double per_million = nowSeconds() - start;
  unsigned long iterations = (unsigned long)(seconds_per_depth / per_million * 1e6);
  struct StackEdge edge = {iterations > 1000 ? iterations : 1000, 0};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 << 10);
  pthread_t thread;
  pthread_create(&thread, &attr, stackEdgeWorker, &edge);
  pthread_join(thread, NULL);
  printf("spun at %d depths near the end of the stack\n", edge.depths);
  return 0;
}

// ---- descriptors -------------------------------------------------------------

// Opens |n| files and says which descriptors it got: the profiler's own
// descriptors must not take the numbers the program expects, nor its slots
// under a low limit (ulimit -n).
static int openFiles(int n) {
  work(0.1);
  for (int i = 0; i < n; ++i) {
    int fd = open("/dev/null", O_RDONLY);
    printf("open %d: %d%s\n", i, fd, fd < 0 ? " (failed)" : "");
  }
  work(0.1);
  return 0;
}

// Closes every descriptor but stdout, then works and opens one.
static int closeAll(void) {
  for (int fd = 0; fd < 1024; ++fd)
    if (fd != 1)
      close(fd);
  work(0.2);
  int fd = open("/dev/null", O_RDONLY);
  printf("after closing all: open gave %d\n", fd);
  return 0;
}

// ---- libraries ----------------------------------------------------------------

static int dlopenMode(const char *library, int times) {
  long sum = 0;
  for (int i = 0; i < times; ++i) {
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      printf("dlopen: %s\n", dlerror());
      return 1;
    }
    long (*fn)(long) = (long (*)(long))dlsym(handle, "fault_library_work");
    sum += fn ? fn(i) : -1;
    dlclose(handle);
  }
  printf("%d loads, sum %ld\n", times, sum);
  return 0;
}

int main(int argc, char **argv) {
  self_path = argv[0];
  const char *mode = argc > 1 ? argv[1] : "";
  const char *arg = argc > 2 ? argv[2] : "";
  if (!strcmp(mode, "work")) {
    work(argc > 2 ? atof(arg) : 0.2);
    printf("worked\n");
    return 0;
  }
  if (!strcmp(mode, "until-signal"))
    return untilSignal();
  if (!strcmp(mode, "abort"))
    return abortMode();
  if (!strcmp(mode, "quick-exit"))
    return quickExitMode();
  if (!strcmp(mode, "exit-from-thread"))
    return exitFromThread();
  if (!strcmp(mode, "underscore-exit"))
    return underscoreExit(arg);
  if (!strcmp(mode, "atexit-underscore-exit"))
    return atexitUnderscoreExit();
  if (!strcmp(mode, "fork"))
    return forkMode();
  if (!strcmp(mode, "exec"))
    return execMode();
  if (!strcmp(mode, "vfork"))
    return vforkMode();
  if (!strcmp(mode, "posix-spawn"))
    return spawnMode();
  if (!strcmp(mode, "append"))
    return appendMode(atoi(arg), argc > 3 ? atof(argv[3]) : 1.0);
  if (!strcmp(mode, "threads"))
    return manyThreads(atoi(arg));
  if (!strcmp(mode, "cancel"))
    return cancelMode();
  if (!strcmp(mode, "errors"))
    return errorReturns();
  if (!strcmp(mode, "contention"))
    return contention();
  if (!strcmp(mode, "own-sigprof"))
    return ownProfTimer();
  if (!strcmp(mode, "all-blocked"))
    return allBlocked();
  if (!strcmp(mode, "longjmp"))
    return longjmpMode();
  if (!strcmp(mode, "stack-edge"))
    return stackEdgeMode(argc > 2 ? atof(arg) : 0.02);
  if (!strcmp(mode, "open"))
    return openFiles(atoi(arg));
  if (!strcmp(mode, "close-all"))
    return closeAll();
  if (!strcmp(mode, "dlopen"))
    return dlopenMode(arg, argc > 3 ? atoi(argv[3]) : 100);
  fprintf(stderr, "faults: unknown mode '%s'\n", mode);
  return 2;
}
