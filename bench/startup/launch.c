// launch [-e NAME=VALUE]... N PROGRAM [ARGS...]: runs PROGRAM N times with
// CAUSAL_BENCH_T0 set to the time of exec (and each NAME=VALUE set in the
// child only, e.g. LD_PRELOAD, so the launcher itself is not affected) and
// prints the median, min and max of what main_probe.c reports (ns), and of the
// CPU time (user + system) the process and its waited-for children used until
// then, which a busy machine disturbs less than wall time.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int first = 1;
  while (first + 1 < argc && strcmp(argv[first], "-e") == 0 && strchr(argv[first + 1], '='))
    first += 2;
  if (argc - first < 2 || atoi(argv[first]) < 1) {
    fprintf(stderr, "usage: launch [-e NAME=VALUE]... N PROGRAM [ARGS...]\n");
    return 2;
  }
  int n = atoi(argv[first]);
  long long *t = calloc((size_t)n, sizeof *t);
  long long *cpu = calloc((size_t)n, sizeof *cpu);
  for (int i = 0; i < n; ++i) {
    int fds[2];
    if (pipe(fds))
      return 1;
    pid_t pid = fork();
    if (pid == 0) {
      struct timespec now;
      char buf[32];
      dup2(fds[1], 1);
      clock_gettime(CLOCK_MONOTONIC, &now);
      snprintf(buf, sizeof buf, "%lld", (long long)now.tv_sec * 1000000000ll + now.tv_nsec);
      for (int e = 1; e < first; e += 2)
        putenv(argv[e + 1]);
      setenv("CAUSAL_BENCH_T0", buf, 1);
      execv(argv[first + 1], argv + first + 1);
      _exit(127);
    }
    close(fds[1]);
    char out[64] = {0};
    ssize_t got = read(fds[0], out, sizeof out - 1);
    close(fds[0]);
    int status;
    struct rusage usage;
    wait4(pid, &status, 0, &usage);
    cpu[i] = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000000ll +
             (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000ll;
    if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
      fprintf(stderr, "launch: %s did not report its time to main\n", argv[first + 1]);
      return 1;
    }
    t[i] = atoll(out);
  }
  qsort(t, (size_t)n, sizeof *t, cmp);
  qsort(cpu, (size_t)n, sizeof *cpu, cmp);
  printf("median_us=%.1f min_us=%.1f max_us=%.1f cpu_median_us=%.1f runs=%d\n", t[n / 2] / 1e3,
         t[0] / 1e3, t[n - 1] / 1e3, cpu[n / 2] / 1e3, n);
  return 0;
}
