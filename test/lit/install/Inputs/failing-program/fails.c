// Spins for a while (samples), then exits with status 3 ("exit") or is
// killed by SIGTERM ("signal").
#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  volatile unsigned long sum = 0;
  for (unsigned long i = 0; i < 300000000ul; ++i) // HOT-FAIL
    sum += i;
  printf("done %lu\n", sum);
  fflush(stdout);
  if (argc > 1 && strcmp(argv[1], "signal") == 0)
    raise(SIGTERM);
  return 3;
}
