// bench/accuracy/accuracy.h - what the accuracy programs share: their one
// optional argument (a count), pinning a thread to a CPU and the monotonic
// clock the latency cases time their requests with. Included after the
// system headers (pinToCpu needs _GNU_SOURCE from the first line).
#ifndef CAUSAL_BENCH_ACCURACY_H
#define CAUSAL_BENCH_ACCURACY_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// The count given as the only argument, else |fallback|; a negative one
// prints "usage: USAGE" and exits with status 2.
static inline long countArg(int argc, char **argv, long fallback, const char *usage) {
  long count = argc > 1 ? atol(argv[1]) : fallback;
  if (count < 0) {
    fprintf(stderr, "usage: %s\n", usage);
    exit(2);
  }
  return count;
}

// CLOCK_MONOTONIC in nanoseconds.
static inline uint64_t monotonicNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

// CPU work written on one line, CPU_WORK(ITERATIONS): ITERATIONS steps of a chain of dependent
// xor-shift-multiplies, about 2.1-2.4 ns a step on these VMs, from and to cpuWorkSink
// (CPU_WORK_STEPS: on a variable STATE). A macro, so that the loop's code is the line where it
// is written (a function's body, even inlined, is charged to the line of its definition), which
// is what --fixed-line selects and the knob shortens. No compiler folds the chain, and its speed
// does not depend on where the code lands. A volatile counter's loop did: its store and reload
// ran at 0.3 ns a step in some builds and 0.9-1.6 ns in others, as the code's placement fell
// (devicewait's 1,000,000 steps took 1.6 ms a round in its
// plain build and 0.9 ms in its instrumented one; a one-client closed loop's two lines, 60/40 by
// their counts, took 39/61 of the samples), so the true effect, measured on plain builds at
// other knob settings, and the prediction, made on the instrumented build, described different
// programs.
#define CPU_WORK_STEPS(state, iterations)                                                          \
  for (uint64_t cpuWorkStep_ = 0; cpuWorkStep_ < (uint64_t)(iterations); cpuWorkStep_++)           \
  (state) = ((state) ^ ((state) >> 29)) * 0xbf58476d1ce4e5b9ull + cpuWorkStep_
#define CPU_WORK(iterations)                                                                       \
  do {                                                                                             \
    uint64_t cpuWorkState_ = cpuWorkSink;                                                          \
    CPU_WORK_STEPS(cpuWorkState_, iterations);                                                     \
    cpuWorkSink = cpuWorkState_;                                                                   \
  } while (0)
static volatile uint64_t cpuWorkSink __attribute__((unused));

// The same work as a function, for work that is not a selected line.
static inline uint64_t cpuWork(uint64_t seed, long iterations) {
  CPU_WORK_STEPS(seed, iterations);
  return seed;
}

#ifdef CPU_SET
// A failure to pin (one CPU, a restricted mask) changes the timing only.
static inline void pinToCpu(int cpu) {
  cpu_set_t set = {{0}};
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}
#endif

#endif // CAUSAL_BENCH_ACCURACY_H
