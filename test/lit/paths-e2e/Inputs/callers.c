// One helper, three callers, 1:2:7 calls of the same work each (issue 13,
// P1): the helper's paths must count the calls exactly and split its time
// 10 / 20 / 70 %. Usage: callers [SCALE] (calls: SCALE, 2 SCALE, 7 SCALE).
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

// A multiply chain: its speed does not depend on where the code is placed.
__attribute__((noinline)) void helper(unsigned steps) {
  unsigned long x = steps;
  for (unsigned i = 0; i < steps; ++i)
    x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
}

enum { kSteps = 300000 }; // about 55 us a call here

__attribute__((noinline)) void parse_request(int calls) {
  for (int i = 0; i < calls; ++i)
    helper(kSteps);
}

__attribute__((noinline)) void lookup_cache(int calls) {
  for (int i = 0; i < calls; ++i)
    helper(kSteps);
}

__attribute__((noinline)) void send_reply(int calls) {
  for (int i = 0; i < calls; ++i)
    helper(kSteps);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 500;
  parse_request(1 * scale);
  lookup_cache(2 * scale);
  send_reply(7 * scale);
  printf("done %d\n", 10 * scale);
  return 0;
}
