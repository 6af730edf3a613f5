/* Two throughput points at rates 10,000 times apart: "slow" after each 1 ms
 * sleep, "fast" at every step of a loop that runs between the sleeps. */
#include <causal/causal.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1000;
  struct timespec ms = {0, 1000000};
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < 20000; ++i) {
      sink = sink + i;
      CAUSAL_PROGRESS_NAMED("fast");
    }
    nanosleep(&ms, NULL);
    CAUSAL_PROGRESS_NAMED("slow");
  }
  printf("sink=%lu\n", sink);
  return 0;
}
