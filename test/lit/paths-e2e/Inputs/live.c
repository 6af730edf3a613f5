// Issue 13, P4: a program with two chosen functions that runs until told to
// stop, for live control (`causal paths enable|disable|top --pid`). Usage:
// live PIDFILE STOPFILE [MAX_SECONDS]: writes its pid to PIDFILE, then calls
// work_a and work_b (a few microseconds each) in turns until STOPFILE exists
// or MAX_SECONDS (default 120) have passed, so that a test can never hang.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void work_a(unsigned steps) {
  unsigned long x = steps;
  for (unsigned i = 0; i < steps; ++i)
    x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
}

__attribute__((noinline)) void work_b(unsigned steps) {
  unsigned long x = steps;
  for (unsigned i = 0; i < steps; ++i)
    x = x * 2862933555777941757ul + 3037000493ul;
  sink = x;
}

__attribute__((noinline)) void serve(void) {
  work_a(20000);
  work_b(20000);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: live PIDFILE STOPFILE [MAX_SECONDS]\n");
    return 2;
  }
  int max_seconds = argc > 3 ? atoi(argv[3]) : 120;
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
  FILE *f = fopen(tmp, "w");
  if (!f)
    return 1;
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  rename(tmp, argv[1]); // whole, once it is there
  time_t end = time(NULL) + max_seconds;
  unsigned long rounds = 0;
  while (time(NULL) < end && access(argv[2], F_OK) != 0) {
    for (int i = 0; i < 100; ++i)
      serve();
    ++rounds;
  }
  printf("stopped after %lu rounds\n", rounds);
  return 0;
}
