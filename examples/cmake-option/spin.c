#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 20;
  unsigned long x = 3;
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < 1000000; ++i)
      x = x * 2862933555777941757ul + 3037000493ul; // HOT-SPIN
  printf("x=%lu\n", x);
  return 0;
}
