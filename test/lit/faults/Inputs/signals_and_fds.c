// A program that does with its signals and descriptors what real programs
// do, for the fault tests of points 1 and 5 of issue 19 (faults/*.test).
// Everything it prints is the same with and without the profiler when the
// profiler leaves the program alone; CPU figures are never printed.
//
//   fds THREADS        THREADS workers live, then opens a file: "open ok fd=N"
//                      or "open failed: ERRNO" (run under a low ulimit -n)
//   lower LIMIT THREADS  lowers its soft RLIMIT_NOFILE to LIMIT, then as fds
//   sigprof MS         its own SIGPROF handler and ITIMER_PROF timer (1 ms)
//                      while it spins MS ms of CPU: "ticks ok" when at least
//                      a third of the expected ticks arrived
//   ignored MS         SIGPROF ignored, spins MS ms
//   blocked MS         a worker that blocks every signal spins MS ms
//   short N US         N threads one after another, each spins US us
//   many N US          N threads alive at once, each spins US us, then all end
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long thread_cpu_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000ll + ts.tv_nsec / 1000;
}

static volatile unsigned long sink;

static void spin_us(long long us) {
  long long end = thread_cpu_us() + us;
  // One line, so that its samples (the loop and the clock it reads) count
  // as one: the tests look for this line by its marker.
  // clang-format off
  while (thread_cpu_us() < end) for (int i = 0; i < 20000; ++i) sink += (unsigned long)i * 7u; // SPIN
  // clang-format on
}

static pthread_barrier_t started, finish;
static long long worker_us;

static void *live_worker(void *arg) {
  (void)arg;
  spin_us(worker_us);
  pthread_barrier_wait(&started);
  pthread_barrier_wait(&finish);
  return NULL;
}

static void *blocked_worker(void *arg) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  spin_us(*(long long *)arg);
  return NULL;
}

static void *short_worker(void *arg) {
  spin_us(*(long long *)arg);
  return NULL;
}

static volatile sig_atomic_t ticks;
static void on_prof(int sig) {
  (void)sig;
  ticks = ticks + 1;
}

// THREADS threads alive at once (each spins |us|), then |then| runs, then
// they end. Returns 0 or prints why not.
static int with_live_threads(int threads, long long us, void (*then)(void)) {
  pthread_t *ids = calloc((size_t)threads, sizeof(pthread_t));
  worker_us = us;
  pthread_barrier_init(&started, NULL, (unsigned)threads + 1);
  pthread_barrier_init(&finish, NULL, (unsigned)threads + 1);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  for (int i = 0; i < threads; ++i)
    if (pthread_create(&ids[i], &attr, live_worker, NULL) != 0) {
      printf("pthread_create failed at %d\n", i);
      return 1;
    }
  pthread_barrier_wait(&started);
  if (then)
    then();
  pthread_barrier_wait(&finish);
  for (int i = 0; i < threads; ++i)
    pthread_join(ids[i], NULL);
  free(ids);
  printf("%d threads ok\n", threads);
  return 0;
}

static void open_a_file(void) {
  int fd = open("/dev/null", O_RDONLY);
  if (fd < 0)
    printf("open failed: %d\n", errno);
  else
    printf("open ok fd=%d\n", fd);
  if (fd >= 0)
    close(fd);
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  const char *mode = argv[1];
  long long a = atoll(argv[2]);
  long long b = argc > 3 ? atoll(argv[3]) : 0;
  if (!strcmp(mode, "fds"))
    return with_live_threads((int)a, 1000, open_a_file);
  if (!strcmp(mode, "lower")) {
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = (rlim_t)a;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
      printf("setrlimit failed: %d\n", errno);
    return with_live_threads((int)b, 1000, open_a_file);
  }
  if (!strcmp(mode, "sigprof")) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = on_prof;
    sigaction(SIGPROF, &action, NULL);
    struct itimerval timer = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_PROF, &timer, NULL);
    spin_us(a * 1000);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    // ITIMER_PROF expires at the scheduler tick at best, and on a loaded
    // machine far fewer of them land while this process runs (natively too:
    // 1 per 20 ms of CPU was missed under a load of 36 on 2 CPUs), so the
    // check is that the program's own timer ticks at all: 0 if the profiler
    // had taken SIGPROF's handler or blocked it.
    printf("ticks %s\n", ticks > 0 ? "ok" : "missing");
    if (getenv("SHOW_TICKS"))
      fprintf(stderr, "ticks=%d\n", (int)ticks);
    return 0;
  }
  if (!strcmp(mode, "ignored")) {
    signal(SIGPROF, SIG_IGN);
    spin_us(a * 1000);
    printf("done\n");
    return 0;
  }
  if (!strcmp(mode, "blocked")) {
    long long us = a * 1000;
    pthread_t id;
    pthread_create(&id, NULL, blocked_worker, &us);
    pthread_join(id, NULL);
    printf("done\n");
    return 0;
  }
  if (!strcmp(mode, "short")) {
    for (long long i = 0; i < a; ++i) {
      pthread_t id;
      if (pthread_create(&id, NULL, short_worker, &b) != 0) {
        printf("pthread_create failed\n");
        return 1;
      }
      pthread_join(id, NULL);
    }
    printf("%lld short threads ok\n", a);
    return 0;
  }
  if (!strcmp(mode, "many"))
    return with_live_threads((int)a, b, NULL);
  return 2;
}
