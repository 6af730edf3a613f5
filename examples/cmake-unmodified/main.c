#include <stdio.h>
#include <stdlib.h>

unsigned long mix(unsigned long x, int n);

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 20;
  unsigned long x = 1;
  for (int r = 0; r < rounds; ++r)
    x = mix(x, 1000000);
  printf("x=%lu\n", x);
  return 0;
}
