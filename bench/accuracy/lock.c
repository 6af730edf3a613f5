// bench/accuracy: lock contention, where the critical section is the line.
//
//   lock [ITEMS_PER_THREAD]      (default 3000)
//
// Two workers (pinned to CPU 0 and CPU 1) repeat: OUTSIDE_ITERATIONS steps of
// CPU work (accuracy.h) outside the lock (line OUTSIDE), then under one mutex
// CRITICAL_ITERATIONS * LINE_COST_PERCENT / 100 iterations (line KNOB) and an
// update of the shared total, then CAUSAL_PROGRESS_NAMED("item").
//
// Build-time knob: -DLINE_COST_PERCENT=P makes line KNOB run P % of its
// iterations, a real speedup of the line by 100 - P %. The right causal
// answer, with C the critical section's time and the outside work 0.25 C:
// the lock is saturated while a worker's outside work is shorter than the
// other worker's critical section, so items leave one per critical section:
// speeding KNOB up by s gives a program speedup of s for s <= 75 %, and of
// 1 - 0.125 / 1 = 87.5 % at s = 100 % (then the outside work, done in
// parallel, bounds the rate). Needs two CPUs; the output does not depend on
// the knob or the timing.
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

enum { CRITICAL_ITERATIONS = 32000, OUTSIDE_ITERATIONS = CRITICAL_ITERATIONS / 4 };

static const uint64_t knobIterations = (uint64_t)CRITICAL_ITERATIONS * LINE_COST_PERCENT / 100;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t itemsDone; // guarded by lock
static long itemsPerThread = 3000;

static void *worker(void *arg) {
  pinToCpu((int)(intptr_t)arg);
  for (long i = 0; i < itemsPerThread; ++i) {
    CPU_WORK(OUTSIDE_ITERATIONS); // OUTSIDE
    pthread_mutex_lock(&lock);
    CPU_WORK(knobIterations); // KNOB
    ++itemsDone;
    pthread_mutex_unlock(&lock);
    CAUSAL_PROGRESS_NAMED("item");
  }
  return NULL;
}

int main(int argc, char **argv) {
  itemsPerThread = countArg(argc, argv, itemsPerThread, "lock [ITEMS_PER_THREAD]");
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t)
    if (pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t) != 0) {
      fprintf(stderr, "lock: cannot create a thread\n");
      return 1;
    }
  for (int t = 0; t < 2; ++t)
    pthread_join(threads[t], NULL);
  printf("lock: 2 threads, %llu items\n", (unsigned long long)itemsDone);
  return 0;
}
