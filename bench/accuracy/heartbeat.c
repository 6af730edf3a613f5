// bench/accuracy: throughput with a heartbeat thread that sleeps.
//
//   heartbeat [ROUNDS_PER_WORKER]        (default 1500)
//
// Two workers each repeat rounds: line KNOB (40 % of a round), then line
// REST (60 %), then CAUSAL_PROGRESS_NAMED("round"). A heartbeat thread wakes
// every millisecond (nanosleep), does a little work (line HEARTBEAT, about
// 20 us) and sleeps again, until the workers are done.
//
// Build-time knob: -DLINE_COST_PERCENT=P makes line KNOB run P % of its
// iterations, a real speedup of the line by 100 - P %. The right causal
// answer: the workers never wait for each other or for the heartbeat, so
// speeding KNOB up by s speeds the program up by 0.4 s. What this case
// tests: the heartbeat's sleeps (which come back owing delays) must neither
// hide nor add to the effect. Standard output does not depend on the knob
// or the timing.
#define _GNU_SOURCE
#include "causal/causal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "accuracy.h"

#ifndef LINE_COST_PERCENT
#define LINE_COST_PERCENT 100
#endif

enum { KNOB_ITERATIONS = 125000, REST_ITERATIONS = 187500, HEARTBEAT_ITERATIONS = 6250 };
enum { WORKERS = 2 };

static const uint64_t knobIterations = (uint64_t)KNOB_ITERATIONS * LINE_COST_PERCENT / 100;
static long roundsPerWorker = 1500;
static atomic_int workersDone;

__attribute__((noinline)) static void knob(void) {
  CPU_WORK(knobIterations); // KNOB
}

__attribute__((noinline)) static void rest(void) {
  CPU_WORK(REST_ITERATIONS); // REST
}

static void *worker(void *arg) {
  (void)arg;
  for (long r = 0; r < roundsPerWorker; ++r) {
    knob();
    rest();
    CAUSAL_PROGRESS_NAMED("round");
  }
  atomic_fetch_add(&workersDone, 1);
  return NULL;
}

static void *heartbeat(void *arg) {
  (void)arg;
  struct timespec period = {0, 1000000};
  while (atomic_load(&workersDone) < WORKERS) {
    nanosleep(&period, NULL);
    CPU_WORK(HEARTBEAT_ITERATIONS); // HEARTBEAT
  }
  return NULL;
}

int main(int argc, char **argv) {
  roundsPerWorker = countArg(argc, argv, 1500, "heartbeat [ROUNDS_PER_WORKER]");
  pthread_t workers[WORKERS], beat;
  pthread_create(&beat, NULL, heartbeat, NULL);
  for (int i = 0; i < WORKERS; ++i)
    pthread_create(&workers[i], NULL, worker, NULL);
  for (int i = 0; i < WORKERS; ++i)
    pthread_join(workers[i], NULL);
  pthread_join(beat, NULL);
  printf("heartbeat: %ld rounds\n", roundsPerWorker * WORKERS);
  return 0;
}
