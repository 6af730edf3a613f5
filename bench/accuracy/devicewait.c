// bench/accuracy: a consumer bound by a device wait (issue 14).
//
//   devicewait [ROUNDS]        (default 1000)
//
// One thread repeats rounds: it waits for its "device", a 2 ms nanosleep
// (line KNOB, a timer wait: nothing in the program ends it), polls the
// device's status, a 0.1 ms nanosleep (line POLL), then processes what it
// got, about 0.5 ms of CPU (line WORK), then CAUSAL_PROGRESS_NAMED("round").
//
// Build-time knob: -DLINE_COST_PERCENT=P makes the wait on line KNOB last
// P % of its 2 ms (P = 0: no sleep on that line), a real shortening of the
// wait by s = 100 - P %. The right causal answer: the round is the waits
// plus the work, so shortening the wait by s speeds the program up by about
// s times the wait's share of the round, about 0.75 s (the timer slack and
// the wake-up after each sleep are blocked time too; how long the work takes
// depends on the machine). Measured on a quiet 2-vCPU VM: 18 % at s = 25 %,
// 36 % at 50 %, 77 % at 100 % (the wake-up latency goes only with the whole
// wait). The
// POLL line is no knob: it keeps the thread blocking once a round at every
// P; without it the P = 0 build never slept and, as a CPU hog, got half its
// CPU on the loaded machine (34 % at 100 %). A CPU profile sees only line
// WORK; a wait experiment on line KNOB must predict the gain. Standard
// output does not depend on the knob or the timing.
#define _GNU_SOURCE
#include "causal/causal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "accuracy.h"

#ifndef LINE_COST_PERCENT
#define LINE_COST_PERCENT 100
#endif

enum { WAIT_NS = 2000000, POLL_NS = 100000 }; // 2 ms, 0.1 ms
enum { WORK_ITERATIONS = 200000 };            // about 0.5 ms

static const long waitNs = (long)WAIT_NS * LINE_COST_PERCENT / 100;

int main(int argc, char **argv) {
  long rounds = countArg(argc, argv, 1000, "devicewait [ROUNDS]");
  struct timespec wait = {0, waitNs}, poll = {0, POLL_NS};
  uint64_t checksum = 0;
  for (long r = 0; r < rounds; ++r) {
    if (waitNs > 0)
      nanosleep(&wait, NULL);                                 // KNOB
    nanosleep(&poll, NULL);                                   // POLL
    cpuWorkSink = cpuWork(cpuWorkSink, WORK_ITERATIONS); // WORK
    checksum += (uint64_t)r;
    CAUSAL_PROGRESS_NAMED("round");
  }
  printf("devicewait: %ld rounds, checksum %llu\n", rounds, (unsigned long long)checksum);
  return 0;
}
