/* bench/hook-cost/hook_cost.c - the cost of a hook and of the progress-point check.
 *
 *   hook_cost poll0 N      N x poll(NULL, 0, 0): a wait that returns at once
 *   hook_cost nanosleep N  N x nanosleep({0, -1}): a sleep the kernel refuses at once
 *                          (EINVAL; a zero sleep would take the timer slack, 50 us)
 *   hook_cost mutex N      N x pthread_mutex_lock + pthread_mutex_unlock of a mutex
 *                          nobody else holds (a blocking and a waking hook per iteration)
 *   hook_cost semaphore N  N x sem_post + sem_wait of a semaphore only this thread uses (the
 *                          wait returns at once, well under 1 us: with --waits, the fixed
 *                          cost of a blocking call that may block, no episode kept)
 *   hook_cost progress N   N x (a throughput point and a relaxed increment of a volatile)
 *   hook_cost progress-in-experiment N
 *                          the same, once an experiment runs (waits for the runtime's flag,
 *                          at most 10 s): with a long experiment (CAUSAL_EXPERIMENT_NS) every
 *                          visit is timed (docs/report.md, "Throughput from visit times")
 *
 * Prints "ns_per_call=X": the fastest of 7 rounds of N calls, in the thread's CPU time (the
 * VMs are shared: preemption and frequency swings only ever make a round slower). For the
 * two calls also "libc_ns_per_call=Y": the same loop calling the C library's own function
 * (found in libc.so.6 itself, past any interposition), its rounds alternating with the
 * others in the same process, so that the difference is the hook's. Built plain, it
 * measures the C library; with -fcausal-profile, the hooks the pass calls and the check
 * before each progress point; run plain with LD_PRELOAD of the runtime, the interposed
 * functions. The progress loop stays the same in every build; without the pass the
 * marker is not called (its weak address is null). */
#include <causal/causal.h>

#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Never called: the line an experiment selects when the bench wants an experiment running
 * while nothing is owed (causal run --fixed-line hook_cost.c:IDLE_LINE). */
__attribute__((noinline)) int idle(int x) { return x * 3 + 1; /* IDLE_LINE */ }

static volatile uint64_t sink;

static int (*libc_nanosleep)(const struct timespec *, struct timespec *);
static int (*libc_poll)(struct pollfd *, nfds_t, int);
static int (*libc_mutex_lock)(pthread_mutex_t *);
static int (*libc_mutex_unlock)(pthread_mutex_t *);
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static int (*libc_sem_post)(sem_t *);
static int (*libc_sem_wait)(sem_t *);
static sem_t semaphore;

static void run_nanosleep(uint64_t n) {
  struct timespec invalid = {0, -1};
  for (uint64_t i = 0; i < n; ++i)
    nanosleep(&invalid, NULL);
}
static void run_libc_nanosleep(uint64_t n) {
  struct timespec invalid = {0, -1};
  for (uint64_t i = 0; i < n; ++i)
    libc_nanosleep(&invalid, NULL);
}

static void run_poll0(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    poll(NULL, 0, 0);
}
static void run_libc_poll0(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    libc_poll(NULL, 0, 0);
}

static void run_mutex(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    pthread_mutex_lock(&mutex);
    pthread_mutex_unlock(&mutex);
  }
}
static void run_libc_mutex(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    libc_mutex_lock(&mutex);
    libc_mutex_unlock(&mutex);
  }
}

static void run_semaphore(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    sem_post(&semaphore);
    sem_wait(&semaphore);
  }
}
static void run_libc_semaphore(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    libc_sem_post(&semaphore);
    libc_sem_wait(&semaphore);
  }
}
static void run_progress(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    CAUSAL_PROGRESS_NAMED("tick");
    sink = sink + 1;
  }
}

/* Nonzero while an experiment runs (causal/abi.h); null without the runtime. */
extern uint32_t __causal_delays_active __attribute__((weak));

static void wait_for_an_experiment(void) {
  struct timespec ms = {0, 1000000};
  for (int i = 0; i < 10000 && &__causal_delays_active &&
                  !__atomic_load_n(&__causal_delays_active, __ATOMIC_RELAXED);
       ++i) {
    CAUSAL_PROGRESS_NAMED("tick"); /* the profiler thread starts at the first point */
    nanosleep(&ms, NULL);
  }
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  uint64_t n = strtoull(argv[2], NULL, 10);
  void (*loop)(uint64_t) = !strcmp(argv[1], "nanosleep")                ? run_nanosleep
                           : !strcmp(argv[1], "poll0")                  ? run_poll0
                           : !strcmp(argv[1], "mutex")                  ? run_mutex
                           : !strcmp(argv[1], "semaphore")              ? run_semaphore
                           : !strcmp(argv[1], "progress")               ? run_progress
                           : !strcmp(argv[1], "progress-in-experiment") ? run_progress
                                                                        : NULL;
  if (!loop || !n)
    return 2;
  void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  libc_nanosleep =
      libc ? (int (*)(const struct timespec *, struct timespec *))dlsym(libc, "nanosleep") : NULL;
  libc_poll = libc ? (int (*)(struct pollfd *, nfds_t, int))dlsym(libc, "poll") : NULL;
  libc_mutex_lock = libc ? (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_lock") : NULL;
  libc_mutex_unlock = libc ? (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_unlock") : NULL;
  libc_sem_post = libc ? (int (*)(sem_t *))dlsym(libc, "sem_post") : NULL;
  libc_sem_wait = libc ? (int (*)(sem_t *))dlsym(libc, "sem_wait") : NULL;
  sem_init(&semaphore, 0, 0);
  void (*reference)(uint64_t) =
      loop == run_poll0       ? (libc_poll ? run_libc_poll0 : NULL)
      : loop == run_nanosleep ? (libc_nanosleep ? run_libc_nanosleep : NULL)
      : loop == run_mutex     ? (libc_mutex_lock && libc_mutex_unlock ? run_libc_mutex : NULL)
      : loop == run_semaphore ? (libc_sem_post && libc_sem_wait ? run_libc_semaphore : NULL)
                              : NULL;
  if (argc > 3) /* keep idle() in the binary */
    sink = (uint64_t)idle(argc);
  if (!strcmp(argv[1], "progress-in-experiment"))
    wait_for_an_experiment();
  loop(n / 10); /* warm up; with a fixed line, the first experiment starts meanwhile */
  double best = 1e18, best_reference = 1e18;
  for (int round = 0; round < 7; ++round) {
    uint64_t start = now_ns();
    loop(n);
    double ns = (double)(now_ns() - start) / (double)n;
    best = ns < best ? ns : best;
    if (reference) {
      start = now_ns();
      reference(n);
      ns = (double)(now_ns() - start) / (double)n;
      best_reference = ns < best_reference ? ns : best_reference;
    }
  }
  printf("ns_per_call=%.2f", best);
  if (reference)
    printf(" libc_ns_per_call=%.2f", best_reference);
  printf("\n");
  return 0;
}
