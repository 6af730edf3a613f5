// bench/accuracy: Figure 1 of the Coz paper, where the line matters partly.
//
//   parallel [ROUNDS]      (default 300)
//
// Each round, main starts thread a (pinned to CPU 0) and thread b (pinned to
// CPU 1) and joins both, then counts the round with CAUSAL_PROGRESS. Thread a
// runs A_ITERATIONS * LINE_COST_PERCENT / 100 steps of CPU work (accuracy.h) on
// line KNOB, thread b 80 % of A_ITERATIONS on line OTHER: at
// LINE_COST_PERCENT=100 (the baseline build) a round lasts as long as a.
//
// Build-time knob: -DLINE_COST_PERCENT=P makes line KNOB run P % of its
// iterations, a real speedup of the line by 100 - P %. The right causal
// answer: speeding KNOB up by s shortens a round from A to max((1 - s) A,
// 0.8 A), a program speedup of min(s, 20 %) (a little less: starting and
// joining the threads takes time that does not shrink). Needs two CPUs; the
// output does not depend on the knob or the timing.
#define _GNU_SOURCE // pthread_setaffinity_np, CPU_SET
#include "causal/causal.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "accuracy.h"

#ifndef LINE_COST_PERCENT
#define LINE_COST_PERCENT 100
#endif

enum { A_ITERATIONS = 625000 };
static const uint64_t knobIterations = (uint64_t)A_ITERATIONS * LINE_COST_PERCENT / 100;
static const uint64_t otherIterations = (uint64_t)A_ITERATIONS / 10 * 8;

static void *a(void *unused) {
  (void)unused;
  pinToCpu(0);
  CPU_WORK(knobIterations); // KNOB
  return NULL;
}

static void *b(void *unused) {
  (void)unused;
  pinToCpu(1);
  CPU_WORK(otherIterations); // OTHER
  return NULL;
}

int main(int argc, char **argv) {
  long rounds = countArg(argc, argv, 300, "parallel [ROUNDS]");
  for (long r = 0; r < rounds; ++r) {
    pthread_t threadA, threadB;
    if (pthread_create(&threadA, NULL, a, NULL) != 0 ||
        pthread_create(&threadB, NULL, b, NULL) != 0) {
      fprintf(stderr, "parallel: cannot create a thread\n");
      return 1;
    }
    pthread_join(threadA, NULL);
    pthread_join(threadB, NULL);
    CAUSAL_PROGRESS_NAMED("round");
  }
  printf("parallel: %ld rounds\n", rounds);
  return 0;
}
