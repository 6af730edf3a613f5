// Library code linked into app: causal_enable(app) builds it with the
// profiler too, so its hot line shows up in the profile.
#include <cmath>

double work(int n) {
  double acc = 0;
  for (int i = 1; i <= n; ++i)
    acc += std::cos(static_cast<double>(i)) / i; // HOT-WORK
  return acc;
}
