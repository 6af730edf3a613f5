// Two threads contending on one mutex.
//
//   contention [ITEMS_PER_THREAD] [CRITICAL_ITERATIONS]   (defaults: 1000, 2000000)
//
// Each of two workers (pinned to CPU 0 and CPU 1) repeats: some work of its
// own outside the lock (a quarter of the critical section's work, LINE
// OUTSIDE), then takes the mutex, does the critical section's work (LINE
// CRITICAL), adds the item to a shared total, releases the mutex and counts
// the item with CAUSAL_PROGRESS_NAMED("item").
//
// The right causal answer:
//   * CRITICAL: the lock is held almost all the time (each worker's outside
//     work, 0.25 C, is shorter than the other worker's critical section, C),
//     so the items leave at the rate the critical section allows: one per C.
//     Speeding the critical section up by s gives one item per (1 - s) C for
//     as long as the lock stays saturated, i.e. while 0.25 C < (1 - s) C,
//     s < 75 %: program speedup = s (slope 1); at s = 50 %, 50 %.
//   * OUTSIDE: done in parallel while the other worker holds the lock, with
//     plenty of slack: optimizing it changes nothing, 0 % at every speedup.
// A conventional profiler charges about 80 % of the CPU time to CRITICAL and
// 20 % to OUTSIDE; only the causal profile says that OUTSIDE is worth nothing.
#define _GNU_SOURCE // pthread_setaffinity_np, CPU_SET
#include "causal/causal.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t itemsDone; // guarded by lock
static long itemsPerThread = 1000;
static uint64_t criticalWork = 2000000;

// Pins the calling thread to one CPU. A failure (one CPU, a restricted
// affinity mask) changes the timing, not the output, so it is ignored.
static void pinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *worker(void *arg) {
  pinToCpu((int)(intptr_t)arg);
  uint64_t outsideWork = criticalWork / 4;
  for (long i = 0; i < itemsPerThread; ++i) {
    for (volatile uint64_t x = 0; x < outsideWork; x++) { // OUTSIDE
    }
    pthread_mutex_lock(&lock);
    for (volatile uint64_t y = 0; y < criticalWork; y++) { // CRITICAL
    }
    ++itemsDone;
    pthread_mutex_unlock(&lock);
    CAUSAL_PROGRESS_NAMED("item");
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1)
    itemsPerThread = atol(argv[1]);
  if (argc > 2)
    criticalWork = (uint64_t)atoll(argv[2]);
  if (itemsPerThread < 0) {
    fprintf(stderr, "usage: contention [ITEMS_PER_THREAD] [CRITICAL_ITERATIONS]\n");
    return 2;
  }
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t)
    if (pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t) != 0) {
      fprintf(stderr, "contention: cannot create a thread\n");
      return 1;
    }
  for (int t = 0; t < 2; ++t)
    pthread_join(threads[t], NULL);
  printf("contention: 2 threads, %llu items\n", (unsigned long long)itemsDone);
  return 0;
}
