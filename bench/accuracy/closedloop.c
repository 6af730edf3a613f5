// bench/accuracy: closed-loop latency, clients that wait for their replies.
//
//   closedloop [REQUESTS_PER_CLIENT] [THINK_US]        (defaults: 300, 1000)
//
// Two client threads each repeat: CAUSAL_BEGIN("request"), queue a request
// for the server, wait for its reply (a condition variable),
// CAUSAL_END("request"), then think for THINK_US microseconds (nanosleep).
// One server thread serves the queue in order: the request's work (line
// KNOB, 60 % of it, then line FIXED, 40 %), then the reply. -DKNOB_SHARE=S
// gives line KNOB S % of the same work (bench/accuracy/run.sh's closedshort:
// 15 %, a line shorter than a sample period).
//
// Build-time knob: -DLINE_COST_PERCENT=P makes line KNOB run P % of its
// iterations, a real speedup of the line by 100 - P %. The latency of
// "request" is the wait in the queue plus the service, so speeding KNOB up
// by s cuts it by at least 0.6 s (KNOB_SHARE / 100 x s; the queueing
// shrinks too, depending on how often both clients' requests meet). The
// measured truth is the program's own mean latency, printed to standard
// error as "mean-latency-ns=N" when the environment variable
// PRINT_MEAN_LATENCY is set (bench/accuracy/run.sh sets it). Standard
// output does not depend on the knob or the timing.
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

#ifndef KNOB_SHARE
#define KNOB_SHARE 60
#endif

enum { REQUEST_ITERATIONS = 625000 };
enum { KNOB_ITERATIONS = REQUEST_ITERATIONS / 100 * KNOB_SHARE };
enum { FIXED_ITERATIONS = REQUEST_ITERATIONS - KNOB_ITERATIONS };
enum { CLIENTS = 2 };

static const uint64_t knobIterations = (uint64_t)KNOB_ITERATIONS * LINE_COST_PERCENT / 100;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t requested = PTHREAD_COND_INITIALIZER;
static pthread_cond_t replied = PTHREAD_COND_INITIALIZER;
// Guarded by lock: per client, a request waiting (in order of arrival) and
// its reply.
static int waiting[CLIENTS], answered[CLIENTS], order[CLIENTS], queued, stopServer;
static uint64_t question[CLIENTS], answer[CLIENTS];

static long requestsPerClient = 300;
static struct timespec think;

static void *server(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (!queued && !stopServer)
      pthread_cond_wait(&requested, &lock);
    if (!queued)
      break;
    int client = order[0];
    for (int i = 1; i < queued; ++i)
      order[i - 1] = order[i];
    --queued;
    uint64_t request = question[client];
    pthread_mutex_unlock(&lock);
    // The request's work.
    CPU_WORK(knobIterations);   // KNOB
    CPU_WORK(FIXED_ITERATIONS); // FIXED
    pthread_mutex_lock(&lock);
    answer[client] = request * 2654435761u;
    waiting[client] = 0;
    answered[client] = 1;
    pthread_cond_broadcast(&replied);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

struct ClientResult {
  uint64_t checksum, latencyNs;
};

static void *client(void *arg) {
  int self = (int)(intptr_t)arg;
  struct ClientResult *result = calloc(1, sizeof *result);
  for (long r = 0; r < requestsPerClient; ++r) {
    uint64_t begin = monotonicNs();
    CAUSAL_BEGIN("request");
    pthread_mutex_lock(&lock);
    question[self] = (uint64_t)(r * CLIENTS + self);
    waiting[self] = 1;
    answered[self] = 0;
    order[queued++] = self;
    pthread_cond_signal(&requested);
    while (!answered[self])
      pthread_cond_wait(&replied, &lock);
    result->checksum += answer[self];
    pthread_mutex_unlock(&lock);
    CAUSAL_END("request");
    result->latencyNs += monotonicNs() - begin;
    nanosleep(&think, NULL);
  }
  return result;
}

int main(int argc, char **argv) {
  requestsPerClient = argc > 1 ? atol(argv[1]) : 300;
  long thinkUs = argc > 2 ? atol(argv[2]) : 1000;
  if (requestsPerClient < 0 || thinkUs < 0) {
    fprintf(stderr, "usage: closedloop [REQUESTS_PER_CLIENT] [THINK_US]\n");
    return 2;
  }
  think.tv_sec = thinkUs / 1000000;
  think.tv_nsec = (thinkUs % 1000000) * 1000;
  pthread_t serverThread, clients[CLIENTS];
  pthread_create(&serverThread, NULL, server, NULL);
  for (int i = 0; i < CLIENTS; ++i)
    pthread_create(&clients[i], NULL, client, (void *)(intptr_t)i);
  uint64_t checksum = 0, latencyNs = 0;
  for (int i = 0; i < CLIENTS; ++i) {
    void *value;
    pthread_join(clients[i], &value);
    struct ClientResult *result = value;
    checksum += result->checksum;
    latencyNs += result->latencyNs;
    free(result);
  }
  pthread_mutex_lock(&lock);
  stopServer = 1;
  pthread_cond_signal(&requested);
  pthread_mutex_unlock(&lock);
  pthread_join(serverThread, NULL);
  long requests = requestsPerClient * CLIENTS;
  printf("closedloop: %ld requests, checksum %llu\n", requests, (unsigned long long)checksum);
  if (getenv("PRINT_MEAN_LATENCY"))
    fprintf(stderr, "mean-latency-ns=%llu\n",
            (unsigned long long)(requests ? latencyNs / (uint64_t)requests : 0));
  return 0;
}
