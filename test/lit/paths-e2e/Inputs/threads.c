// A chosen function called from many threads at once (issue 13, P5): the
// calls of every thread are counted, and the path knows how many threads
// took it. Usage: threads [THREADS] [CALLS]
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;
static int calls_per_thread = 200;

__attribute__((noinline)) void helper(unsigned steps) {
  unsigned long x = steps;
  for (unsigned i = 0; i < steps; ++i)
    x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
}

__attribute__((noinline)) static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < calls_per_thread; ++i)
    helper(2000);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 16;
  if (argc > 2)
    calls_per_thread = atoi(argv[2]);
  pthread_t ids[256];
  if (threads > 256)
    threads = 256;
  for (int t = 0; t < threads; ++t)
    pthread_create(&ids[t], NULL, worker, NULL);
  for (int t = 0; t < threads; ++t)
    pthread_join(ids[t], NULL);
  printf("calls %d\n", threads * calls_per_thread);
  return 0;
}
