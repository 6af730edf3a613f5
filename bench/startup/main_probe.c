// Linked into a program (with -Wl,--wrap=main) to measure its time to main:
// when CAUSAL_BENCH_T0 holds the CLOCK_MONOTONIC time (ns) at which the
// launcher called exec, the wrapper of main prints the elapsed nanoseconds and
// exits before the program's main runs. Everything before main is counted:
// the dynamic loader, every constructor (the causal runtime's included), and
// what a preloaded runtime does in its __libc_start_main or main wrappers
// (Coz reads the DWARF of the program there). Without CAUSAL_BENCH_T0 the
// program runs as usual.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif
int __real_main(int argc, char **argv, char **envp);
int __wrap_main(int argc, char **argv, char **envp);

int __wrap_main(int argc, char **argv, char **envp) {
  const char *t0 = getenv("CAUSAL_BENCH_T0");
  if (!t0)
    return __real_main(argc, argv, envp);
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  long long elapsed = (long long)now.tv_sec * 1000000000ll + now.tv_nsec - atoll(t0);
  printf("%lld\n", elapsed);
  fflush(stdout);
  _exit(0);
}
#ifdef __cplusplus
} // extern "C"
#endif
