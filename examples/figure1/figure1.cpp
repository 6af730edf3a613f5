// The program of Figure 1 of the Coz paper (Curtsinger and Berger, SOSP 2015),
// repeated in rounds so that it has a progress point.
//
//   figure1 [ROUNDS] [A_ITERATIONS] [B_PERCENT]
//                                  (defaults: 50 rounds, 40000000, 90 %)
//
// Each round, main starts thread a (pinned to CPU 0) and thread b (pinned to
// CPU 1), joins both, and counts one round with CAUSAL_PROGRESS. Thread a runs
// A_ITERATIONS of an empty loop, thread b B_PERCENT % of that (90 % as in the
// paper), so a round lasts as long as a.
//
// The right causal answer (what `causal report` must predict):
//   * LINE-A (a's loop): optimizing it speeds the program up only until a is
//     as fast as b. Speeding a up by s shortens a round from A to
//     max(A * (1 - s), 0.9 A): the program speedup is min(s, 10 %), so at most
//     10 %, reached at s = 10 %; at s = 50 % it is 10 %.
//   * LINE-B (b's loop): b is never the longer thread, so optimizing it does
//     nothing: 0 % at every speedup.
// A conventional profiler shows a and b each using about half of the CPU time.
//
// (With B_PERCENT = p < 100: a's effect is min(s, 1 - p/100), b's is 0.)
//
// The threads are pinned because the answer depends on a and b running in
// parallel on two CPUs: stacked on one CPU, a round would last A + B and both
// lines would matter. The answer also assumes that both CPUs run equally fast:
// on a VM whose second vCPU runs more than 100/p times slower than the first
// (a busy sibling hyperthread on the host), b is the longer thread and the
// answers swap. The output is the same whatever the timing.
#include "causal/causal.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <sched.h>
#include <thread>

namespace {

// Pins the calling thread to one CPU. A failure (a machine with one CPU, a
// restricted affinity mask) changes the timing, not the output, so it is
// ignored.
void pinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void a(uint64_t iterations) {
  pinToCpu(0);
  for (volatile uint64_t x = 0; x < iterations; x++) { // LINE-A
  }
}

void b(uint64_t iterations) {
  pinToCpu(1);
  for (volatile uint64_t y = 0; y < iterations; y++) { // LINE-B
  }
}

} // namespace

int main(int argc, char **argv) {
  long rounds = argc > 1 ? std::atol(argv[1]) : 50;
  long aIterations = argc > 2 ? std::atol(argv[2]) : 40000000;
  long bPercent = argc > 3 ? std::atol(argv[3]) : 90;
  if (rounds < 0 || aIterations < 0 || bPercent < 0 || bPercent > 100) {
    std::fprintf(stderr, "usage: figure1 [ROUNDS] [A_ITERATIONS] [B_PERCENT (0-100)]\n");
    return 2;
  }
  uint64_t aWork = static_cast<uint64_t>(aIterations);
  uint64_t bWork = aWork / 100 * static_cast<uint64_t>(bPercent);
  for (long r = 0; r < rounds; ++r) {
    std::thread aThread(a, aWork), bThread(b, bWork);
    aThread.join();
    bThread.join();
    CAUSAL_PROGRESS; // ROUND-DONE
  }
  std::printf("figure1: %ld rounds, a ran %llu iterations, b ran %llu per round\n", rounds,
              static_cast<unsigned long long>(aWork), static_cast<unsigned long long>(bWork));
  return 0;
}
