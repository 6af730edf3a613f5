// bench/accuracy: threads that meet at a barrier after sleeps of different
// lengths.
//
//   barrier [ROUNDS]        (default 1000)
//
// Two threads repeat rounds and meet at a pthread barrier at the end of
// each; thread A then counts the round with CAUSAL_PROGRESS_NAMED("round").
// In a round, thread A sleeps 200 us (nanosleep) and then computes for about
// 1000 us (line KNOB); thread B sleeps 800 us and computes for about 200 us
// (line B_WORK). A round lasts as long as the slower of the two: A, by about
// 200 us.
//
// Build-time knob: -DLINE_COST_PERCENT=P makes line KNOB run P % of its
// iterations, a real speedup of the line by 100 - P %. With exact sleeps a
// round would take max(200 + 1000 (1 - s), 1000) us, a speedup of up to
// 16.7 %; but a sleep ends late by its timer slack and the wake-up (0.1-0.3 ms
// here, and more for B, whose wake-up also wakes A at the barrier), so B's
// path is nearly as long as A's and the true effect is a few percent: the
// knob measures it. A virtual speedup gets it right only if B's sleep ends
// later by the delays inserted while it slept. Standard output does not
// depend on the knob or the timing.
#define _GNU_SOURCE
#include "causal/causal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "accuracy.h"

#ifndef LINE_COST_PERCENT
#define LINE_COST_PERCENT 100
#endif

enum { KNOB_ITERATIONS = 312500, B_ITERATIONS = 62500 };
enum { A_SLEEP_US = 200, B_SLEEP_US = 800 };

static const uint64_t knobIterations = (uint64_t)KNOB_ITERATIONS * LINE_COST_PERCENT / 100;
static pthread_barrier_t meet;
static long rounds = 1000;

static void sleepUs(long us) {
  struct timespec t = {0, us * 1000};
  nanosleep(&t, NULL);
}

static void *threadB(void *arg) {
  (void)arg;
  for (long r = 0; r < rounds; ++r) {
    sleepUs(B_SLEEP_US);
    CPU_WORK(B_ITERATIONS); // B_WORK
    pthread_barrier_wait(&meet);
  }
  return NULL;
}

int main(int argc, char **argv) {
  rounds = countArg(argc, argv, 1000, "barrier [ROUNDS]");
  pthread_barrier_init(&meet, NULL, 2);
  pthread_t b;
  pthread_create(&b, NULL, threadB, NULL);
  for (long r = 0; r < rounds; ++r) {
    sleepUs(A_SLEEP_US);
    CPU_WORK(knobIterations); // KNOB
    pthread_barrier_wait(&meet);
    CAUSAL_PROGRESS_NAMED("round");
  }
  pthread_join(b, NULL);
  pthread_barrier_destroy(&meet);
  printf("barrier: %ld rounds\n", rounds);
  return 0;
}
