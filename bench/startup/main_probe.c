// Linked into a program to measure its time to main: when CAUSAL_BENCH_T0 holds
// the CLOCK_MONOTONIC time (ns) at which the launcher called exec, this last
// constructor (default priority, after every other constructor of the
// executable and of its libraries, the causal runtime's included) prints the
// elapsed nanoseconds and exits before main runs.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((constructor)) static void causal_bench_probe(void) {
  const char *t0 = getenv("CAUSAL_BENCH_T0");
  if (!t0)
    return;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  long long elapsed = (long long)now.tv_sec * 1000000000ll + now.tv_nsec - atoll(t0);
  printf("%lld\n", elapsed);
  fflush(stdout);
  _exit(0);
}
