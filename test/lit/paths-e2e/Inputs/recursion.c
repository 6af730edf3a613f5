// A chosen recursive function (issue 13, P2): each outermost entry counts
// once, the entries below it as recursive calls. walk(5) enters walk five
// times: one outermost entry and four recursive ones.
#include <stdio.h>

static volatile int sink;

__attribute__((noinline)) int walk(int depth) {
  if (depth <= 1)
    return 1;
  return walk(depth - 1) + 1;
}

__attribute__((noinline)) void tour(int times) {
  for (int i = 0; i < times; ++i)
    sink += walk(5);
}

int main(void) {
  tour(10);
  sink += walk(3); // one more outermost entry, two recursive ones, from main
  printf("%d\n", sink);
  return 0;
}
