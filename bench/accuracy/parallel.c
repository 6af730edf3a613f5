// bench/accuracy: Figure 1 of the Coz paper, where the line matters partly.
//
//   parallel [ROUNDS]      (default 300)
//
// Threads a (pinned to CPU 0) and b (pinned to CPU 1) repeat rounds: each
// waits for main at a start barrier, works, and meets main at an end barrier;
// main then counts the round with CAUSAL_PROGRESS. Thread a runs A_ITERATIONS
// * LINE_COST_PERCENT / 100 steps of CPU work (accuracy.h) on line KNOB,
// thread b 80 % of A_ITERATIONS on line OTHER: at LINE_COST_PERCENT=100 (the
// baseline build) a round lasts as long as a. (Coz's figure starts and joins
// the two threads every round. Here main waits once a round whichever thread
// ends last: joined in turn, main slept twice in the rounds where b ended
// last, and these VMs wake a sleeping thread so slowly that the knob builds
// at 75 and 50 % ran slower than the baseline.)
//
// Build-time knob: -DLINE_COST_PERCENT=P makes line KNOB run P % of its
// iterations, a real speedup of the line by 100 - P %. The right causal
// answer: speeding KNOB up by s shortens a round from A to max((1 - s) A,
// 0.8 A), a program speedup of min(s, 20 %) (a little less: the barriers'
// hand-offs take time that does not shrink). Needs two CPUs; the output does
// not depend on the knob or the timing.
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

static pthread_barrier_t roundStart, roundEnd;
static long rounds = 300;

static void *a(void *unused) {
  (void)unused;
  pinToCpu(0);
  for (long r = 0; r < rounds; ++r) {
    pthread_barrier_wait(&roundStart);
    CPU_WORK(knobIterations); // KNOB
    pthread_barrier_wait(&roundEnd);
  }
  return NULL;
}

static void *b(void *unused) {
  (void)unused;
  pinToCpu(1);
  for (long r = 0; r < rounds; ++r) {
    pthread_barrier_wait(&roundStart);
    CPU_WORK(otherIterations); // OTHER
    pthread_barrier_wait(&roundEnd);
  }
  return NULL;
}

int main(int argc, char **argv) {
  rounds = countArg(argc, argv, 300, "parallel [ROUNDS]");
  pthread_barrier_init(&roundStart, NULL, 3);
  pthread_barrier_init(&roundEnd, NULL, 3);
  pthread_t threadA, threadB;
  if (pthread_create(&threadA, NULL, a, NULL) != 0 ||
      pthread_create(&threadB, NULL, b, NULL) != 0) {
    fprintf(stderr, "parallel: cannot create a thread\n");
    return 1;
  }
  for (long r = 0; r < rounds; ++r) {
    pthread_barrier_wait(&roundStart);
    pthread_barrier_wait(&roundEnd);
    CAUSAL_PROGRESS_NAMED("round");
  }
  pthread_join(threadA, NULL);
  pthread_join(threadB, NULL);
  pthread_barrier_destroy(&roundStart);
  pthread_barrier_destroy(&roundEnd);
  printf("parallel: %ld rounds\n", rounds);
  return 0;
}
