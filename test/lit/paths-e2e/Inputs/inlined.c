// A chosen function that the optimizer inlines into both its callers (issue
// 13, P6): it is still counted at each inlined site, and each path names the
// caller it was inlined into.
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) void mix(unsigned steps) {
  unsigned long x = steps;
  for (unsigned i = 0; i < steps; ++i)
    x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
}

__attribute__((noinline)) void reader(int calls) {
  for (int i = 0; i < calls; ++i)
    mix(1000);
}

__attribute__((noinline)) void writer(int calls) {
  for (int i = 0; i < calls; ++i)
    mix(1000);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 100;
  reader(3 * scale);
  writer(5 * scale);
  printf("done\n");
  return 0;
}
