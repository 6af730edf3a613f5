// A loop whose rounds sleep 2 ms (a timer wait) and then work ~0.3 ms on a
// CPU; each round also hands a byte through a pipe to a reader thread (a
// wait that a program thread ends, never a wait target). Prints the byte
// sum, so that a profiled run's output can be compared.
#include "causal/causal.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int channel[2];
static volatile unsigned long sink;
static unsigned long received;

static void *reader(void *arg) {
  (void)arg;
  char byte;
  while (read(channel[0], &byte, 1) == 1) // PIPE_READ
    received += (unsigned char)byte;
  return NULL;
}

static void work(long n) {
  for (long i = 0; i < n; ++i) // WORK
    sink += (unsigned long)i * 7;
}

int main(int argc, char **argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 600;
  if (pipe(channel) != 0)
    return 1;
  pthread_t thread;
  pthread_create(&thread, NULL, reader, NULL);
  for (long r = 0; r < rounds; ++r) {
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL); // SLEEP
    work(200000);
    char byte = (char)(r & 0x7f);
    if (write(channel[1], &byte, 1) != 1) // PIPE_WRITE
      return 1;
    CAUSAL_PROGRESS;
  }
  close(channel[1]);
  pthread_join(thread, NULL);
  printf("received=%lu\n", received);
  return 0;
}
