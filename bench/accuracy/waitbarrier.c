// bench/accuracy: two threads meet at a barrier after waits of different
// lengths (issue 14): only the longest wait matters.
//
//   waitbarrier [ROUNDS]        (default 800)
//
// Two threads repeat rounds and meet at a pthread barrier at the end of
// each; thread A then counts the round with CAUSAL_PROGRESS_NAMED("round").
// In a round, thread A waits 3 ms (nanosleep, line KNOB) and computes about
// 0.2 ms (line A_WORK); thread B waits 1 ms (nanosleep, line SHORT_KNOB)
// and computes about 0.2 ms (line B_WORK). A round lasts as long as A's
// path, about 3.2 ms; B waits at the barrier for the rest.
//
// Two build-time knobs, each a real shortening of one wait by s = 100 - P %:
//   -DLINE_COST_PERCENT=P   A's wait (line KNOB) lasts P % of 3 ms: the
//       round is max(3 (1 - s) + 0.2, 1.2) ms, a program speedup of about
//       23 % at s = 25 %, 47 % at 50 % and 62 % at 100 % (then B's path,
//       1.2 ms, is the longer one);
//   -DSHORT_COST_PERCENT=P  B's wait (line SHORT_KNOB) lasts P % of 1 ms:
//       A's path stays the longer one, so the true effect is 0 at every s
//       (case "shortwait" of run.sh).
// The timer slack (50 us) and the wake-ups after the sleeps and at the
// barrier add to both paths; the knobs measure the true effect: on a quiet
// 2-vCPU VM 23 %, 44 % and 60 % for line KNOB, medians within +-1.5 % for
// SHORT_KNOB. A wait experiment must see that B's wait, though it
// is a third of B's time, gains nothing. Standard output does not depend on
// the knobs or the timing.
#define _GNU_SOURCE
#include "causal/causal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "accuracy.h"

#ifndef LINE_COST_PERCENT
#define LINE_COST_PERCENT 100
#endif
#ifndef SHORT_COST_PERCENT
#define SHORT_COST_PERCENT 100
#endif

enum { A_WAIT_NS = 3000000, B_WAIT_NS = 1000000 };     // 3 ms, 1 ms
enum { A_ITERATIONS = 80000, B_ITERATIONS = 80000 }; // about 0.2 ms each

static const long aWaitNs = (long)A_WAIT_NS * LINE_COST_PERCENT / 100;
static const long bWaitNs = (long)B_WAIT_NS * SHORT_COST_PERCENT / 100;
static pthread_barrier_t meet;
static long rounds = 800;

static void *threadB(void *arg) {
  (void)arg;
  struct timespec wait = {0, bWaitNs};
  for (long r = 0; r < rounds; ++r) {
    if (bWaitNs > 0)
      nanosleep(&wait, NULL);                              // SHORT_KNOB
    cpuWorkSink = cpuWork(cpuWorkSink, B_ITERATIONS); // B_WORK
    pthread_barrier_wait(&meet);
  }
  return NULL;
}

int main(int argc, char **argv) {
  rounds = countArg(argc, argv, rounds, "waitbarrier [ROUNDS]");
  pthread_barrier_init(&meet, NULL, 2);
  pthread_t b;
  if (pthread_create(&b, NULL, threadB, NULL) != 0) {
    fprintf(stderr, "waitbarrier: cannot create a thread\n");
    return 1;
  }
  struct timespec wait = {0, aWaitNs};
  for (long r = 0; r < rounds; ++r) {
    if (aWaitNs > 0)
      nanosleep(&wait, NULL);                              // KNOB
    cpuWorkSink = cpuWork(cpuWorkSink, A_ITERATIONS); // A_WORK
    pthread_barrier_wait(&meet);
    CAUSAL_PROGRESS_NAMED("round");
  }
  pthread_join(b, NULL);
  pthread_barrier_destroy(&meet);
  printf("waitbarrier: %ld rounds\n", rounds);
  return 0;
}
