// Four threads share a counter under a mutex and mark progress; main joins
// them (ASan and TSan check every thread's creation, join and lock) and
// prints the total. Run long enough (about 0.6 s at -O1, much longer with
// TSan) for several experiments.
#include "causal/causal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { kThreads = 4 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long shared_total;
static unsigned long rounds;

static unsigned long work(unsigned long seed) {
  unsigned long x = seed;
  for (int i = 0; i < 2000; ++i)
    x = x * 6364136223846793005ul + 1442695040888963407ul; // HOT
  return x;
}

static void *worker(void *arg) {
  unsigned long id = (unsigned long)arg;
  unsigned long *mine = malloc(sizeof *mine); // the heap of a sanitized thread
  *mine = 0;
  for (unsigned long r = 0; r < rounds; ++r) {
    unsigned long value = work(id + r) & 1;
    pthread_mutex_lock(&lock);
    shared_total += value + 1;
    pthread_mutex_unlock(&lock);
    *mine += 1;
    CAUSAL_PROGRESS_NAMED("round");
  }
  unsigned long done = *mine;
  free(mine);
  return (void *)done;
}

int main(int argc, char **argv) {
  rounds = argc > 1 ? strtoul(argv[1], 0, 10) : 20000;
  pthread_t threads[kThreads];
  for (unsigned long i = 0; i < kThreads; ++i)
    if (pthread_create(&threads[i], 0, worker, (void *)i) != 0)
      return 3;
  unsigned long joined = 0;
  for (int i = 0; i < kThreads; ++i) {
    void *result;
    pthread_join(threads[i], &result);
    joined += (unsigned long)result;
  }
  printf("rounds %lu, total at least %lu: %s\n", joined, joined,
         shared_total >= joined && shared_total <= 2 * joined ? "ok" : "wrong");
  return 0;
}
