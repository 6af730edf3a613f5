// Exits while an experiment is running (runs ~0.3 s; experiments last 100 ms+).
#include <causal/causal.h>
#include <stdio.h>

int main(void) {
  unsigned long x = 1;
  for (int round = 0; round < 3000; ++round) {
    for (int i = 0; i < 100000; ++i)
      x = x * 6364136223846793005ul + 1442695040888963407ul; // WORK
    CAUSAL_PROGRESS_NAMED("round");
  }
  printf("%lu\n", x & 1);
  return 0;
}
