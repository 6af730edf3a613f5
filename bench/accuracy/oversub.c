// bench/accuracy: thread pools with more runnable threads than CPUs.
//
//   oversub pool  THREADS ROUNDS   each thread: work (POOL line), a tiny critical
//                                  section, a progress point; ROUNDS per thread
//   oversub stage THREADS ITEMS    THREADS producers (POOL line) feed one consumer
//                                  (SERIAL line) through a bounded queue; the
//                                  consumer counts each item
//   oversub lock  THREADS ROUNDS   each thread: work (POOL line), then the
//                                  critical section (CRITICAL line) of one shared
//                                  mutex, a progress point; ROUNDS per thread
//
// Build-time knobs, each a real speedup of its line by 100 - P %:
//   -DPOOL_COST_PERCENT=P, -DSERIAL_COST_PERCENT=P, -DCRITICAL_COST_PERCENT=P.
// Costs at 100 %, in steps of CPU_WORK_STEPS (accuracy.h: a multiply chain whose
// speed does not depend on the code's placement, about 2.1 ns a step): POOL 3700
// (about 8 us), SERIAL 1850 (the consumer needs less than one CPU's worth per
// item when producers are spread over CPUs: on two CPUs it is the pool, not the
// consumer, that limits `stage` unless the pool is much faster), CRITICAL 925.
// The true effect of each knob is measured by timing builds (bench/accuracy/run.sh):
// nothing here assumes an answer. The output does not depend on the knobs or the
// timing.
#include "causal/causal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"

#ifndef POOL_COST_PERCENT
#define POOL_COST_PERCENT 100
#endif
#ifndef SERIAL_COST_PERCENT
#define SERIAL_COST_PERCENT 100
#endif
#ifndef CRITICAL_COST_PERCENT
#define CRITICAL_COST_PERCENT 100
#endif

enum { POOL_ITERATIONS = 3700, SERIAL_ITERATIONS = 1850, CRITICAL_ITERATIONS = 925 };
static const uint64_t poolIterations = (uint64_t)POOL_ITERATIONS * POOL_COST_PERCENT / 100;
static const uint64_t serialIterations = (uint64_t)SERIAL_ITERATIONS * SERIAL_COST_PERCENT / 100;
static const uint64_t criticalIterations =
    (uint64_t)CRITICAL_ITERATIONS * CRITICAL_COST_PERCENT / 100;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long rounds;
static volatile uint64_t checksum; // keeps the work

static uint64_t poolWork(uint64_t seed) {
  CPU_WORK_STEPS(seed, poolIterations); // POOL
  return seed;
}

static uint64_t serialWork(uint64_t seed) {
  CPU_WORK_STEPS(seed, serialIterations); // SERIAL
  return seed;
}

static uint64_t criticalWork(uint64_t seed) {
  CPU_WORK_STEPS(seed, criticalIterations); // CRITICAL
  return seed;
}

// ---- pool: independent rounds -------------------------------------------------

static void *poolThread(void *arg) {
  uint64_t id = (uint64_t)(uintptr_t)arg;
  for (long r = 0; r < rounds; ++r) {
    uint64_t value = poolWork(id + (uint64_t)r);
    pthread_mutex_lock(&lock);
    checksum += value & 1;
    pthread_mutex_unlock(&lock);
    CAUSAL_PROGRESS_NAMED("round");
  }
  return NULL;
}

// ---- lock: work, then a shared critical section ----------------------------------

static void *lockThread(void *arg) {
  uint64_t id = (uint64_t)(uintptr_t)arg;
  for (long r = 0; r < rounds; ++r) {
    uint64_t value = poolWork(id + (uint64_t)r);
    pthread_mutex_lock(&lock);
    checksum += criticalWork(value) & 1;
    pthread_mutex_unlock(&lock);
    CAUSAL_PROGRESS_NAMED("round");
  }
  return NULL;
}

// ---- stage: producers feed one consumer through a bounded queue -----------------

enum { QUEUE_SLOTS = 64 };
static uint64_t queue[QUEUE_SLOTS];
static long queued, head, produced, items;
static pthread_cond_t notEmpty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t notFull = PTHREAD_COND_INITIALIZER;

static void *producerThread(void *arg) {
  uint64_t id = (uint64_t)(uintptr_t)arg;
  for (uint64_t n = 0;; ++n) {
    uint64_t value = poolWork(id * 1000003u + n);
    pthread_mutex_lock(&lock);
    while (queued == QUEUE_SLOTS && produced < items)
      pthread_cond_wait(&notFull, &lock);
    if (produced >= items) {
      pthread_mutex_unlock(&lock);
      return NULL;
    }
    queue[(head + queued) % QUEUE_SLOTS] = value & 0xff; // the order is not fixed
    queued++;
    produced++;
    pthread_cond_signal(&notEmpty);
    pthread_mutex_unlock(&lock);
  }
}

static void *consumerThread(void *unused) {
  (void)unused;
  for (long n = 0; n < items; ++n) {
    pthread_mutex_lock(&lock);
    while (queued == 0)
      pthread_cond_wait(&notEmpty, &lock);
    uint64_t value = queue[head];
    head = (head + 1) % QUEUE_SLOTS;
    queued--;
    pthread_cond_signal(&notFull);
    pthread_mutex_unlock(&lock);
    checksum += serialWork(value) & 1;
    CAUSAL_PROGRESS_NAMED("item");
  }
  pthread_mutex_lock(&lock);
  pthread_cond_broadcast(&notFull);
  pthread_mutex_unlock(&lock);
  return NULL;
}

static int usage(void) {
  fprintf(stderr, "usage: oversub pool|stage|lock THREADS COUNT\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc != 4)
    return usage();
  long threads = atol(argv[2]), count = atol(argv[3]);
  if (threads < 1 || threads > 4096 || count < 0)
    return usage();
  void *(*body)(void *) = NULL;
  if (!strcmp(argv[1], "pool"))
    body = poolThread, rounds = count;
  else if (!strcmp(argv[1], "lock"))
    body = lockThread, rounds = count;
  else if (!strcmp(argv[1], "stage"))
    body = producerThread, items = count;
  else
    return usage();
  pthread_t *ids = calloc((size_t)threads + 1, sizeof(pthread_t));
  if (!ids)
    return 1;
  long started = 0;
  for (; started < threads; ++started)
    if (pthread_create(&ids[started], NULL, body, (void *)(uintptr_t)started) != 0)
      break;
  if (started < threads) {
    fprintf(stderr, "oversub: cannot create thread %ld\n", started);
    return 1;
  }
  if (body == producerThread && pthread_create(&ids[threads], NULL, consumerThread, NULL) != 0) {
    fprintf(stderr, "oversub: cannot create the consumer\n");
    return 1;
  }
  for (long i = 0; i < threads; ++i)
    pthread_join(ids[i], NULL);
  if (body == producerThread)
    pthread_join(ids[threads], NULL);
  // The checksum depends on the interleaving in `stage`; print the work done.
  printf("oversub %s: %ld threads, %ld %s\n", argv[1], threads, count,
         body == producerThread ? "items" : "rounds each");
  free(ids);
  return 0;
}
