#include <cstdio>
#include <cstdlib>

double work(int n);

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  double total = 0;
  for (int r = 0; r < rounds; ++r)
    total += work(200000);
  std::printf("total=%.6f\n", total);
  return 0;
}
