// spinFor(ns): keeps the CPU busy for |ns| of wall time (CLOCK_MONOTONIC),
// for the --waits test programs whose waits must last a known time.
#ifndef CAUSAL_TEST_WAITS_SPIN_FOR_H
#define CAUSAL_TEST_WAITS_SPIN_FOR_H
#include <time.h>

static void spinFor(long ns) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do
    clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000l + (b.tv_nsec - a.tv_nsec) < ns);
}
#endif
