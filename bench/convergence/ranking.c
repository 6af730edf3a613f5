// bench/convergence: three lines of known, different causal effect.
//
//   ranking SECONDS      (default 10)
//
// One thread repeats rounds until SECONDS of wall time have passed; a round
// runs empty loops on line TOP (50 % of the round's work), MIDDLE (30 %) and
// BOTTOM (20 %), then counts the round with CAUSAL_PROGRESS_NAMED("round").
//
// The right causal answer: nothing overlaps, so speeding a line up by s
// speeds the program up by its share times s: slopes 0.5, 0.3 and 0.2, and a
// profile ranked by slope puts TOP first. The output does not depend on the
// timing (it does not say how many rounds ran).
#include "causal/causal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ROUND_ITERATIONS = 400000 };

__attribute__((noinline)) static void top(void) {
  for (volatile uint64_t x = 0; x < ROUND_ITERATIONS / 10 * 5; x++) { // TOP
  }
}

__attribute__((noinline)) static void middle(void) {
  for (volatile uint64_t y = 0; y < ROUND_ITERATIONS / 10 * 3; y++) { // MIDDLE
  }
}

__attribute__((noinline)) static void bottom(void) {
  for (volatile uint64_t z = 0; z < ROUND_ITERATIONS / 10 * 2; z++) { // BOTTOM
  }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 10;
  if (!(seconds >= 0)) {
    fprintf(stderr, "usage: ranking [SECONDS]\n");
    return 2;
  }
  double end = now() + seconds;
  do {
    top();
    middle();
    bottom();
    CAUSAL_PROGRESS_NAMED("round");
  } while (now() < end);
  printf("ranking: done\n");
  return 0;
}
