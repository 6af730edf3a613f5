// A program with a clear answer for `causal run`'s bounded profiling tests
// (run-status.test, run-bounded.test): one thread, rounds of two loops, the
// first three times as long as the second, a progress point per round, so
// that speeding up the first line speeds the program up about three times
// as much as the second.
//
//   clear_leader SECONDS [PROFILE]
//
// Runs SECONDS of wall-clock time; given PROFILE, ends earlier: 2 s after
// PROFILE holds a `shutdown` record (looked for every 200 ms), so that a test
// of a profile that ends before the program does not wait for the whole
// SECONDS. Prints what it did (nothing that depends on speed) and exits with
// status 3, which the tests expect `causal run` to pass on.
#include <causal/causal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int profileEnded(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  char line[4096];
  int ended = 0;
  while (!ended && fgets(line, sizeof(line), f))
    ended = strncmp(line, "shutdown", 8) == 0;
  fclose(f);
  return ended;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 10;
  const char *profile = argc > 2 ? argv[2] : NULL;
  double start = now(), end = start + seconds, nextLook = start;
  int sawEnd = 0;
  while (now() < end) {
    for (volatile uint64_t a = 0; a < 3000000; a++) { // LONG
    }
    for (volatile uint64_t b = 0; b < 1000000; b++) { // SHORT
    }
    CAUSAL_PROGRESS;
    if (profile && !sawEnd && now() >= nextLook) {
      nextLook = now() + 0.2;
      if (profileEnded(profile)) {
        sawEnd = 1;
        end = now() + 2;
        printf("the profile ended; the program continues\n");
        fflush(stdout);
      }
    }
  }
  printf("clear_leader: done\n");
  return 3;
}
