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

#ifdef CPU_SET
// A failure to pin (one CPU, a restricted mask) changes the timing only.
static inline void pinToCpu(int cpu) {
  cpu_set_t set = {{0}};
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}
#endif

#endif // CAUSAL_BENCH_ACCURACY_H
