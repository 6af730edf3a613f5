// bench/accuracy: one line that matters only on one of its two calling paths
// (issue 13, P7: causal experiments per calling context).
//
//   pathcaller [ROUNDS]     (default 1000)
//
// The chosen function helper(steps) is one line of CPU work (accuracy.h),
// line KNOB, the same line for both of its callers. Main (pinned to CPU 0)
// and a side thread (CPU 1) repeat rounds and meet at a barrier at the end of
// each; main then counts the round with CAUSAL_PROGRESS_NAMED("round").
// In a round:
//   main:  serial_stage() calls helper(SERIAL_STEPS), then main runs
//          REST_STEPS of its own (line REST): half and half of the round;
//   side:  side_stage() calls helper(SIDE_STEPS), 40 % of SERIAL_STEPS (a
//          fifth of the round), and waits at the barrier for main.
// Main is the round's critical path from start to end; the side thread waits
// anyway. Of the helper's time, 5/7 is on the serial path and 2/7 on the side
// path, so its samples alone would credit the side path with 2/7 of what
// speeding the line up gains; the right answer gives it nothing.
//
// Build-time knobs, each a real speedup of the helper's calls on one path:
// -DSERIAL_COST_PERCENT=P makes serial_stage's call run P % of its steps,
// -DSIDE_COST_PERCENT=P side_stage's; -DLINE_COST_PERCENT=P sets both (the
// default of each; 100). The right causal answers, s = 100 - P %:
//   the line via serial_stage:  0.5 s (the round's helper half shrinks;
//                               the side path stays shorter even at s = 1)
//   the line via side_stage:    0     (it shortens only the wait)
//   the line on both paths:     0.5 s
// less the barrier's hand-off, which does not shrink. The chosen function is
// helper (-fcausal-paths=helper), a caller is told apart by the frame of
// serial_stage or side_stage above it: `causal run --fixed-line
// pathcaller.c:KNOB --path serial_stage`. Needs two CPUs; the output does not
// depend on the knobs or the timing.
#define _GNU_SOURCE // pthread_setaffinity_np, CPU_SET
#include "causal/causal.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "accuracy.h"

#ifndef LINE_COST_PERCENT
#define LINE_COST_PERCENT 100
#endif
#ifndef SERIAL_COST_PERCENT
#define SERIAL_COST_PERCENT LINE_COST_PERCENT
#endif
#ifndef SIDE_COST_PERCENT
#define SIDE_COST_PERCENT LINE_COST_PERCENT
#endif

enum { SERIAL_STEPS = 250000, SIDE_STEPS = SERIAL_STEPS / 5 * 2, REST_STEPS = 250000 };
static const uint64_t serialSteps = (uint64_t)SERIAL_STEPS * SERIAL_COST_PERCENT / 100;
static const uint64_t sideSteps = (uint64_t)SIDE_STEPS * SIDE_COST_PERCENT / 100;

static pthread_barrier_t roundEnd;
static long rounds = 1000;

// Not static and never inlined: one copy of the line for both callers, which
// only the calling context tells apart. The callers make no tail call: a
// caller that jumped to helper would leave no frame of its own above it.
void helper(uint64_t steps);
void serial_stage(void);
void side_stage(void);

__attribute__((noinline)) void helper(uint64_t steps) {
  CPU_WORK(steps); // KNOB
}

__attribute__((noinline, disable_tail_calls)) void serial_stage(void) { helper(serialSteps); }

__attribute__((noinline, disable_tail_calls)) void side_stage(void) { helper(sideSteps); }

__attribute__((noinline)) static void rest(void) {
  CPU_WORK(REST_STEPS); // REST
}

static void *side(void *unused) {
  (void)unused;
  pinToCpu(1);
  for (long r = 0; r < rounds; ++r) {
    side_stage();
    pthread_barrier_wait(&roundEnd);
  }
  return NULL;
}

int main(int argc, char **argv) {
  rounds = countArg(argc, argv, 1000, "pathcaller [ROUNDS]");
  pinToCpu(0);
  pthread_barrier_init(&roundEnd, NULL, 2);
  pthread_t sideThread;
  if (pthread_create(&sideThread, NULL, side, NULL) != 0) {
    fprintf(stderr, "pathcaller: cannot create a thread\n");
    return 1;
  }
  for (long r = 0; r < rounds; ++r) {
    serial_stage();
    rest();
    pthread_barrier_wait(&roundEnd);
    CAUSAL_PROGRESS_NAMED("round");
  }
  pthread_join(sideThread, NULL);
  pthread_barrier_destroy(&roundEnd);
  printf("pathcaller: %ld rounds\n", rounds);
  return 0;
}
