#include <cstdio>
#include <cstdlib>

extern "C" unsigned long spin(unsigned long x, int n);

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  unsigned long x = 7;
  for (int r = 0; r < rounds; ++r)
    x = spin(x, 2000000);
  std::printf("x=%lu\n", x);
  return 0;
}
