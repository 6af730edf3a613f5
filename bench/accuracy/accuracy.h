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

// About |iterations| x 2.4 ns of CPU work on these VMs: a chain of dependent
// xor-shift-multiplies, which no compiler folds and whose speed does not
// depend on where the code lands. (A volatile counter's loop did: devicewait's
// 1,000,000 iterations took 1.6 ms a round in its plain build and 0.9 ms in
// its instrumented one, so the true effect, measured on plain builds, and the
// prediction, made on the instrumented one, described different programs.)
// The wait cases use it; the result goes to a volatile sink.
static inline uint64_t cpuWork(uint64_t seed, long iterations) {
  for (long i = 0; i < iterations; i++)
    seed = (seed ^ (seed >> 29)) * 0xbf58476d1ce4e5b9ull + (uint64_t)i;
  return seed;
}
static volatile uint64_t cpuWorkSink __attribute__((unused));

#ifdef CPU_SET
// A failure to pin (one CPU, a restricted mask) changes the timing only.
static inline void pinToCpu(int cpu) {
  cpu_set_t set = {{0}};
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}
#endif

#endif // CAUSAL_BENCH_ACCURACY_H
