// A program without progress points (so the runtime starts no profiler
// thread): says "ready", then spins until a signal ends it.
#include <stdio.h>

static volatile unsigned long sink;

int main(void) {
  printf("ready\n");
  fflush(stdout);
  for (;;)
    for (unsigned long i = 0; i < 100000000ul; ++i)
      sink = sink * 31 + i; // SPIN
}
