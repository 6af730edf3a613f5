// A program with one line that dominates its run time. Profiling it should
// put the heavy line (heavy()'s loop body) at the top of the sample profile,
// and the light loop far below it. The exit status is the first argument (default 0), so
// tests can check that the profiler keeps a program's exit status.
#include <cmath>
#include <cstdio>
#include <cstdlib>

__attribute__((noinline)) double heavy(int n) {
  double acc = 0;
  for (int i = 1; i <= n; ++i)
    acc += std::sqrt(static_cast<double>(i)) * std::sin(static_cast<double>(i)); // HOT
  return acc;
}

__attribute__((noinline)) unsigned long light(int n) {
  unsigned long s = 1;
  for (int i = 0; i < n; ++i)
    s = s * 6364136223846793005ul + static_cast<unsigned long>(i); // LIGHT
  return s;
}

int main(int argc, char **argv) {
  int status = argc > 1 ? std::atoi(argv[1]) : 0;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 40;
  double total = 0;
  unsigned long mix = 0;
  for (int r = 0; r < rounds; ++r) {
    total += heavy(400000);
    mix ^= light(400000);
  }
  std::printf("heavy=%.3f light=%lu\n", total, mix);
  return status;
}
