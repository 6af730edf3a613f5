// bench/accuracy: open-loop latency, a generator that sleeps between arrivals.
//
//   openloop [REQUESTS] [GAP_US]        (defaults: 600, 3000)
//
// The main thread is the generator: it queues a request, then sleeps GAP_US
// microseconds (nanosleep), REQUESTS times; arrivals do not wait for replies.
// Two workers take requests from the queue; each marks CAUSAL_BEGIN("request")
// when it takes one, runs the request's work (line KNOB, 60 % of it, then
// line FIXED, 40 %), marks CAUSAL_END("request"), then does bookkeeping that
// no request waits for (line AFTER_END).
//
// Build-time knob: -DLINE_COST_PERCENT=P makes line KNOB run P % of its
// iterations, a real speedup of the line by 100 - P %; -DAFTER_COST_PERCENT=P
// does the same to line AFTER_END. The right causal
// answer for the latency of "request": a request's latency is its work, so
// speeding KNOB up by s cuts it by 0.6 s; AFTER_END runs outside every
// request: 0. The workers are mostly idle (a request every 3 ms, about
// 1 ms of work each), so queueing is rare. The measured truth is the
// program's own mean latency, printed to standard error as
// "mean-latency-ns=N" when the environment variable PRINT_MEAN_LATENCY is
// set (bench/accuracy/run.sh sets it). Standard output does not depend on
// the knob or the timing.
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
#ifndef AFTER_COST_PERCENT
#define AFTER_COST_PERCENT 100
#endif

enum { KNOB_ITERATIONS = 187500, FIXED_ITERATIONS = 125000, AFTER_ITERATIONS = 125000 };
enum { WORKERS = 2, QUEUE_SIZE = 1024 };

static const uint64_t knobIterations = (uint64_t)KNOB_ITERATIONS * LINE_COST_PERCENT / 100;
static const uint64_t afterIterations = (uint64_t)AFTER_ITERATIONS * AFTER_COST_PERCENT / 100;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t arrived = PTHREAD_COND_INITIALIZER;
// Guarded by lock.
static uint64_t queue[QUEUE_SIZE];
static size_t head, tail;
static int done;
static uint64_t checksum, latencyNs, served;

__attribute__((noinline)) static uint64_t work(uint64_t request) {
  CPU_WORK(knobIterations);   // KNOB
  CPU_WORK(FIXED_ITERATIONS); // FIXED
  return request * 2654435761u;
}

__attribute__((noinline)) static void bookkeeping(void) {
  CPU_WORK(afterIterations); // AFTER_END
}

static void *worker(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&lock);
    while (head == tail && !done)
      pthread_cond_wait(&arrived, &lock);
    if (head == tail) {
      pthread_mutex_unlock(&lock);
      return NULL;
    }
    uint64_t request = queue[head++ % QUEUE_SIZE];
    pthread_mutex_unlock(&lock);

    uint64_t begin = monotonicNs();
    CAUSAL_BEGIN("request");
    uint64_t result = work(request);
    CAUSAL_END("request");
    uint64_t end = monotonicNs();
    bookkeeping();

    pthread_mutex_lock(&lock);
    checksum += result;
    latencyNs += end - begin;
    ++served;
    pthread_mutex_unlock(&lock);
  }
}

int main(int argc, char **argv) {
  long requests = argc > 1 ? atol(argv[1]) : 600;
  long gapUs = argc > 2 ? atol(argv[2]) : 3000;
  if (requests < 0 || gapUs < 0) {
    fprintf(stderr, "usage: openloop [REQUESTS] [GAP_US]\n");
    return 2;
  }
  pthread_t workers[WORKERS];
  for (int i = 0; i < WORKERS; ++i)
    pthread_create(&workers[i], NULL, worker, NULL);
  struct timespec gap = {gapUs / 1000000, (gapUs % 1000000) * 1000};
  for (long r = 0; r < requests; ++r) {
    pthread_mutex_lock(&lock);
    while (tail - head == QUEUE_SIZE) { // full: the generator waits (never at these rates)
      pthread_mutex_unlock(&lock);
      nanosleep(&gap, NULL);
      pthread_mutex_lock(&lock);
    }
    queue[tail++ % QUEUE_SIZE] = (uint64_t)r;
    pthread_cond_signal(&arrived);
    pthread_mutex_unlock(&lock);
    nanosleep(&gap, NULL);
  }
  pthread_mutex_lock(&lock);
  done = 1;
  pthread_cond_broadcast(&arrived);
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < WORKERS; ++i)
    pthread_join(workers[i], NULL);
  printf("openloop: %llu requests, checksum %llu\n", (unsigned long long)served,
         (unsigned long long)checksum);
  if (getenv("PRINT_MEAN_LATENCY"))
    fprintf(stderr, "mean-latency-ns=%llu\n",
            (unsigned long long)(served ? latencyNs / served : 0));
  return 0;
}
