// bench/ranking: one line of real effect among twenty of none, with similar
// shares of the samples.
//
//   needle SECONDS        (default 10)
//
// The critical thread repeats rounds until SECONDS have passed: the NEEDLE
// loop (about 0.15 ms on these VMs), a sleep of SLEEP_US (0.8 ms), then
// CAUSAL_PROGRESS_NAMED("round"). A background thread runs the twenty NOISE
// loops in turn (about 0.2 ms each) until the critical thread is done:
// nothing waits for it, so none of its lines can change the round rate.
//
// Knobs (build time): NEEDLE_PERCENT scales the NEEDLE loop (100: as is; 50:
// the line made 50 % faster), NOISE_PERCENT every NOISE loop. The truth is
// measured with them: rounds per second of the knob build against the
// default one. The needle holds about 20 % of one CPU's samples, each noise
// line 5 %: no line stands out by its samples. The output does not depend on
// the timing.
#include "causal/causal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../accuracy/accuracy.h"

#ifndef NEEDLE_PERCENT
#define NEEDLE_PERCENT 100
#endif
#ifndef NOISE_PERCENT
#define NOISE_PERCENT 100
#endif
enum { NEEDLE_ITERATIONS = 350000, NOISE_ITERATIONS = 700000, SLEEP_US = 800 };

static volatile int done;

__attribute__((noinline)) static void needle(void) {
  for (volatile uint64_t i = 0; i < NEEDLE_ITERATIONS / 100 * NEEDLE_PERCENT; i++) { // NEEDLE
  }
}

// One function per line: each loop is charged to the line of its expansion.
#define NOISE(N)                                                                                   \
  __attribute__((noinline)) static void noise_##N(void) {                                          \
    for (volatile uint64_t i = 0; i < NOISE_ITERATIONS / 100 * NOISE_PERCENT; i++) {               \
    }                                                                                              \
  }
NOISE(0)
NOISE(1)
NOISE(2)
NOISE(3)
NOISE(4)
NOISE(5)
NOISE(6)
NOISE(7)
NOISE(8)
NOISE(9)
NOISE(10)
NOISE(11)
NOISE(12)
NOISE(13)
NOISE(14)
NOISE(15)
NOISE(16)
NOISE(17)
NOISE(18)
NOISE(19)

static void (*const noise_lines[20])(void) = {
    noise_0,  noise_1,  noise_2,  noise_3,  noise_4,  noise_5,  noise_6,  noise_7,  noise_8,  noise_9,
    noise_10, noise_11, noise_12, noise_13, noise_14, noise_15, noise_16, noise_17, noise_18, noise_19};

static void *background(void *unused) {
  (void)unused;
  for (unsigned n = 0; !__atomic_load_n(&done, __ATOMIC_RELAXED); n = (n + 1) % 20)
    noise_lines[n]();
  return NULL;
}

int main(int argc, char **argv) {
  long seconds = countArg(argc, argv, 10, "needle [SECONDS]");
  pthread_t thread;
  if (pthread_create(&thread, NULL, background, NULL) != 0) {
    fprintf(stderr, "needle: cannot create the background thread\n");
    return 1;
  }
  uint64_t start = monotonicNs(), end = start + (uint64_t)seconds * 1000000000u;
  unsigned long rounds = 0;
  const struct timespec pause = {0, SLEEP_US * 1000L};
  do {
    needle();
    nanosleep(&pause, NULL);
    CAUSAL_PROGRESS_NAMED("round");
    ++rounds;
  } while (monotonicNs() < end);
  double elapsed = (double)(monotonicNs() - start) * 1e-9;
  __atomic_store_n(&done, 1, __ATOMIC_RELAXED);
  pthread_join(thread, NULL);
  if (getenv("NEEDLE_PRINT_RATE"))
    fprintf(stderr, "rounds-per-second=%.3f\n", (double)rounds / elapsed);
  printf("needle: done\n");
  return 0;
}
