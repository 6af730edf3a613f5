// Request latency: a client sends requests one at a time to a server thread
// and waits for each reply; a housekeeping thread does unrelated work.
//
//   latency [REQUESTS] [HANDLE_ITERATIONS]   (defaults: 2000, 2000000)
//
// The client (the main thread) marks each request with
// CAUSAL_BEGIN("request") before sending it and CAUSAL_END("request") when the
// reply arrives. The server does the request's work (line HANDLE) and replies.
// Client and server are pinned to CPU 0 (only one of them runs at a time); the
// housekeeping thread spins on CPU 1 (line HOUSEKEEPING) until the client is
// done.
//
// The right causal answer (for the latency of "request"):
//   * HANDLE is the request path: a request takes as long as HANDLE, so
//     speeding it up by s makes requests s faster: latency reduction = s, at
//     s = 50 %, 50 %.
//   * HOUSEKEEPING runs on the other CPU and never delays a request:
//     optimizing it changes the latency by 0 %.
// (Its share of CPU time is about half; a conventional profiler would rank it
// as high as HANDLE.)
#define _GNU_SOURCE // pthread_setaffinity_np, CPU_SET
#include "causal/causal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t requestSent = PTHREAD_COND_INITIALIZER;
static pthread_cond_t replySent = PTHREAD_COND_INITIALIZER;
// Guarded by lock: the one request in flight and its reply.
static int requestWaiting, replyWaiting, serverStop;
static uint64_t request, reply;

static atomic_int housekeepingStop;
static uint64_t handleWork = 2000000;

// Pins the calling thread to one CPU. A failure (one CPU, a restricted
// affinity mask) changes the timing, not the output, so it is ignored.
static void pinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *server(void *arg) {
  (void)arg;
  pinToCpu(0);
  for (;;) {
    pthread_mutex_lock(&lock);
    while (!requestWaiting && !serverStop)
      pthread_cond_wait(&requestSent, &lock);
    if (!requestWaiting) {
      pthread_mutex_unlock(&lock);
      return NULL;
    }
    uint64_t mine = request;
    requestWaiting = 0;
    pthread_mutex_unlock(&lock);

    for (volatile uint64_t x = 0; x < handleWork; x++) { // HANDLE
    }

    pthread_mutex_lock(&lock);
    reply = mine * 2 + 1;
    replyWaiting = 1;
    pthread_cond_signal(&replySent);
    pthread_mutex_unlock(&lock);
  }
}

static void *housekeeping(void *arg) {
  (void)arg;
  pinToCpu(1);
  while (!atomic_load_explicit(&housekeepingStop, memory_order_relaxed)) {
    for (volatile uint64_t y = 0; y < 200000; y++) { // HOUSEKEEPING
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  long requests = argc > 1 ? atol(argv[1]) : 2000;
  if (argc > 2)
    handleWork = (uint64_t)atoll(argv[2]);
  if (requests < 0) {
    fprintf(stderr, "usage: latency [REQUESTS] [HANDLE_ITERATIONS]\n");
    return 2;
  }
  pinToCpu(0);
  pthread_t serverThread, housekeepingThread;
  if (pthread_create(&serverThread, NULL, server, NULL) != 0 ||
      pthread_create(&housekeepingThread, NULL, housekeeping, NULL) != 0) {
    fprintf(stderr, "latency: cannot create a thread\n");
    return 1;
  }
  uint64_t checksum = 0;
  for (long i = 0; i < requests; ++i) {
    CAUSAL_BEGIN("request");
    pthread_mutex_lock(&lock);
    request = (uint64_t)i;
    requestWaiting = 1;
    pthread_cond_signal(&requestSent);
    while (!replyWaiting)
      pthread_cond_wait(&replySent, &lock);
    replyWaiting = 0;
    checksum += reply;
    pthread_mutex_unlock(&lock);
    CAUSAL_END("request");
  }
  pthread_mutex_lock(&lock);
  serverStop = 1;
  pthread_cond_signal(&requestSent);
  pthread_mutex_unlock(&lock);
  atomic_store(&housekeepingStop, 1);
  pthread_join(serverThread, NULL);
  pthread_join(housekeepingThread, NULL);
  printf("latency: %ld requests, checksum %llu\n", requests, (unsigned long long)checksum);
  return 0;
}
