// bench/sample-cost: what one sample costs the sampled thread, the kernel alone (no profiler).
//
//   sample_cost_probe SOURCE PERIOD_NS ITERATIONS [handoffs]
//
// Runs ITERATIONS steps of a dependent multiply chain (the same work every run) while SOURCE
// samples the thread every PERIOD_NS of its CPU time:
//   none        nothing (the reference)
//   perf-ring   a perf_event task clock, user mode only, writing samples (IP) to its ring and
//               never signalling: what the kernel's sampling costs by itself
//   perf-signal a perf_event task clock, user mode only, without a ring and recording nothing
//               (sample_type 0), each overflow sending a real-time signal to the thread
//               (F_SETSIG, F_SETOWN_EX, O_ASYNC) whose handler only counts it: the runtime's
//               perf sampler (docs/runtime.md, "Sampling") without its handler's work
//   perf-count  a perf_event task clock that only counts (no sample period): an event on the
//               thread without a sampling timer
//   timer       a CLOCK_THREAD_CPUTIME_ID POSIX timer sending a real-time signal to the thread
//               (SIGEV_THREAD_ID): the runtime's timer sampler without its handler's work
// Prints one line: "SOURCE PERIOD_NS wall_ns cpu_ns samples", samples being the signals
// handled plus their si_overrun (timer), or for perf-ring the periods in the CPU time.
//
// With "handoffs": no multiply chain. Two threads pinned to one CPU, each with its own SOURCE,
// hand a token to each other ITERATIONS times through two semaphores, so that every hand-off
// is a context switch; cpu_ns is then the process's CPU time. What a sampler costs each
// switch: a perf event with a sampling period has its timer stopped as the thread leaves the
// CPU and started again as it comes back.
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t samplesSignalled;
static volatile uint64_t workSink; // keeps the work

static void onSample(int signal, siginfo_t *info, void *context) {
  (void)signal;
  (void)context;
  samplesSignalled += 1 + (info->si_code == SI_TIMER ? info->si_overrun : 0);
}

static uint64_t clockNs(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

// withSignal: the runtime's way (no ring, a signal per overflow); otherwise samples to a
// ring of 1 + 16 pages, as the runtime did until 2026-12-02, and no signal. Period 0: counts
// only, no ring, no signal.
static int openPerf(uint64_t period, int withSignal, int signal) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = period;
  attr.sample_type = withSignal ? 0 : PERF_SAMPLE_IP;
  attr.wakeup_events = 1;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0) {
    perror("sample_cost_probe: perf_event_open");
    exit(1);
  }
  if (period && !withSignal &&
      mmap(NULL, 17 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED) {
    perror("sample_cost_probe: mmap");
    exit(1);
  }
  if (withSignal) {
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    if (fcntl(fd, F_SETSIG, signal) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC) != 0) {
      perror("sample_cost_probe: fcntl");
      exit(1);
    }
  }
  return fd;
}

// Starts SOURCE on the calling thread; returns the perf descriptor (enabled), or -1.
static int startSampler(const char *source, uint64_t period, int signal) {
  int perfFd = -1;
  if (!strcmp(source, "perf-ring") || !strcmp(source, "perf-signal")) {
    perfFd = openPerf(period, !strcmp(source, "perf-signal"), signal);
  } else if (!strcmp(source, "perf-count")) {
    perfFd = openPerf(0, 0, signal);
  } else if (!strcmp(source, "timer")) {
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = signal;
    event._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    struct itimerspec every = {{0, (long)period}, {0, (long)period}};
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer) != 0 ||
        timer_settime(timer, 0, &every, NULL) != 0) {
      perror("sample_cost_probe: timer");
      exit(1);
    }
  } else if (strcmp(source, "none")) {
    fprintf(stderr, "sample_cost_probe: unknown source '%s'\n", source);
    exit(2);
  }
  if (perfFd >= 0)
    ioctl(perfFd, PERF_EVENT_IOC_ENABLE, 0);
  return perfFd;
}

static sem_t turns[2]; // the token's way: 0 to the main thread, 1 to the partner
static long handoffs;
static const char *handoffSource;
static uint64_t handoffPeriod;
static int handoffSignal;

static void *partner(void *unused) {
  (void)unused;
  startSampler(handoffSource, handoffPeriod, handoffSignal);
  for (long i = 0; i < handoffs; i++) {
    while (sem_wait(&turns[1]) != 0) {
    }
    sem_post(&turns[0]);
  }
  return NULL;
}

static int pinToFirstCpu(void) {
  cpu_set_t allowed, one;
  CPU_ZERO(&one);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) {
      CPU_SET(cpu, &one);
      break;
    }
  return sched_setaffinity(0, sizeof one, &one);
}

int main(int argc, char **argv) {
  if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "handoffs"))) {
    fprintf(stderr, "usage: sample_cost_probe none|perf-ring|perf-signal|perf-count|timer "
                    "PERIOD_NS ITERATIONS [handoffs]\n");
    return 2;
  }
  const char *source = argv[1];
  uint64_t period = strtoull(argv[2], NULL, 10);
  long iterations = atol(argv[3]);
  int signal = SIGRTMIN + 2;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = onSample;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(signal, &action, NULL);

  if (argc == 5) { // hand-offs between two threads on one CPU
    if (pinToFirstCpu() != 0) {
      perror("sample_cost_probe: sched_setaffinity");
      return 1;
    }
    handoffs = iterations;
    handoffSource = source;
    handoffPeriod = period;
    handoffSignal = signal;
    sem_init(&turns[0], 0, 0);
    sem_init(&turns[1], 0, 0);
    startSampler(source, period, signal);
    pthread_t thread;
    if (pthread_create(&thread, NULL, partner, NULL) != 0) {
      perror("sample_cost_probe: pthread_create");
      return 1;
    }
    uint64_t wall0 = clockNs(CLOCK_MONOTONIC), cpu0 = clockNs(CLOCK_PROCESS_CPUTIME_ID);
    for (long i = 0; i < handoffs; i++) {
      sem_post(&turns[1]);
      while (sem_wait(&turns[0]) != 0) {
      }
    }
    uint64_t wall = clockNs(CLOCK_MONOTONIC) - wall0;
    uint64_t cpu = clockNs(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    pthread_join(thread, NULL);
    printf("%s\t%llu\t%llu\t%llu\t%llu\n", source, (unsigned long long)period,
           (unsigned long long)wall, (unsigned long long)cpu, (unsigned long long)samplesSignalled);
    return 0;
  }

  if (!strcmp(source, "perf-count")) {
    fprintf(stderr, "sample_cost_probe: perf-count is for hand-offs\n");
    return 2;
  }
  uint64_t wall0 = clockNs(CLOCK_MONOTONIC), cpu0 = clockNs(CLOCK_THREAD_CPUTIME_ID);
  int perfFd = startSampler(source, period, signal);
  uint64_t seed = 1;
  for (long i = 0; i < iterations; i++)
    seed = (seed ^ (seed >> 29)) * 0xbf58476d1ce4e5b9ull + (uint64_t)i;
  if (perfFd >= 0)
    ioctl(perfFd, PERF_EVENT_IOC_DISABLE, 0);
  uint64_t wall = clockNs(CLOCK_MONOTONIC) - wall0, cpu = clockNs(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  uint64_t samples = !strcmp(source, "perf-ring") ? cpu / period : (uint64_t)samplesSignalled;
  workSink = seed;
  printf("%s\t%llu\t%llu\t%llu\t%llu\n", source, (unsigned long long)period,
         (unsigned long long)wall, (unsigned long long)cpu, (unsigned long long)samples);
  return 0;
}
