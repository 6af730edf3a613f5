// Endings with chosen functions' calls made and under way (issue 13): the
// paths sidecar is written when a signal whose default action ends the
// process ends it, and an entry another thread has under way at the end is
// counted. Chosen: work, wait_inside, held.
//
//   ending after N    work() N times, then "ready" and "calls N"; waits for
//                     a signal outside any chosen function
//   ending inside N   work() N times, then "ready" and "calls N" inside
//                     wait_inside(), where it waits for a signal (sleeping)
//   ending exit MS    a thread enters held() and sleeps there; main waits
//                     MS ms more, then calls exit(0)
//
// It prints what it did, the same in every run.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static sem_t inside;

__attribute__((noinline)) void work(unsigned steps) {
  unsigned long x = steps;
  for (unsigned i = 0; i < steps; ++i)
    x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
}

static void sleepMs(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

// What the program did, once it did it (the first line is what
// same_behaviour.py waits for before it sends the signal).
static void announce(int calls) {
  printf("ready\ncalls %d\n", calls);
  fflush(stdout);
}

__attribute__((noinline)) void wait_inside(int calls) {
  announce(calls);
  for (;;)
    sleepMs(1000);
}

__attribute__((noinline)) void held(void) {
  sem_post(&inside);
  for (;;)
    sleepMs(1000);
}

static void *holder(void *arg) {
  (void)arg;
  held();
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: ending after|inside N | ending exit MS\n");
    return 2;
  }
  int n = atoi(argv[2]);
  if (!strcmp(argv[1], "exit")) {
    sem_init(&inside, 0, 0);
    pthread_t thread;
    pthread_create(&thread, NULL, holder, NULL);
    sem_wait(&inside);
    printf("held() entered; exit after %d ms\n", n);
    fflush(stdout);
    sleepMs(n);
    exit(0);
  }
  for (int i = 0; i < n; ++i)
    work(20000);
  if (!strcmp(argv[1], "inside"))
    wait_inside(n);
  announce(n);
  for (;;)
    sleepMs(1000);
}
