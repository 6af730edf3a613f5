// bench/accuracy: a serial loop whose line matters fully.
//
//   serial [ROUNDS]        (default 400)
//
// One thread repeats rounds; a round runs KNOB_ITERATIONS * LINE_COST_PERCENT
// / 100 iterations of an empty loop on line KNOB and REST_ITERATIONS on line
// REST, then counts the round with CAUSAL_PROGRESS. At LINE_COST_PERCENT=100
// (the baseline build) KNOB is 40 % of a round.
//
// Build-time knob: -DLINE_COST_PERCENT=P makes line KNOB run P % of its
// iterations, i.e. a real speedup of the line by 100 - P %. The right causal
// answer: speeding KNOB up by s speeds the program up by 0.4 s (one thread,
// nothing overlaps). The output does not depend on the knob or the timing.
#include "causal/causal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "accuracy.h"

#ifndef LINE_COST_PERCENT
#define LINE_COST_PERCENT 100
#endif

enum { KNOB_ITERATIONS = 800000, REST_ITERATIONS = 1200000 };
static const uint64_t knobIterations = (uint64_t)KNOB_ITERATIONS * LINE_COST_PERCENT / 100;

__attribute__((noinline)) static void knob(void) {
  for (volatile uint64_t x = 0; x < knobIterations; x++) { // KNOB
  }
}

__attribute__((noinline)) static void rest(void) {
  for (volatile uint64_t y = 0; y < REST_ITERATIONS; y++) { // REST
  }
}

int main(int argc, char **argv) {
  long rounds = countArg(argc, argv, 400, "serial [ROUNDS]");
  for (long r = 0; r < rounds; ++r) {
    knob();
    rest();
    CAUSAL_PROGRESS_NAMED("round");
  }
  printf("serial: %ld rounds\n", rounds);
  return 0;
}
