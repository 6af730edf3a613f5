// bench/accuracy: a serial loop whose line matters fully.
//
//   serial [ROUNDS]        (default 400)
//
// One thread repeats rounds; a round runs KNOB_ITERATIONS * LINE_COST_PERCENT
// / 100 steps of CPU work (accuracy.h) on line KNOB and REST_ITERATIONS on line
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

enum { KNOB_ITERATIONS = 125000, REST_ITERATIONS = 187500 };
static const uint64_t knobIterations = (uint64_t)KNOB_ITERATIONS * LINE_COST_PERCENT / 100;

__attribute__((noinline)) static void knob(void) {
  CPU_WORK(knobIterations); // KNOB
}

__attribute__((noinline)) static void rest(void) {
  CPU_WORK(REST_ITERATIONS); // REST
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
