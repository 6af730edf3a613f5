// bench/accuracy/accuracy.h - what the accuracy programs share: their one
// optional argument (a count) and pinning a thread to a CPU. Included after
// the system headers (pinToCpu needs _GNU_SOURCE from the first line).
#ifndef CAUSAL_BENCH_ACCURACY_H
#define CAUSAL_BENCH_ACCURACY_H

#include <stdio.h>
#include <stdlib.h>

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

#ifdef CPU_SET
// A failure to pin (one CPU, a restricted mask) changes the timing only.
static inline void pinToCpu(int cpu) {
  cpu_set_t set = {{0}};
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}
#endif

#endif // CAUSAL_BENCH_ACCURACY_H
