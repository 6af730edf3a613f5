// launch N PROGRAM: runs PROGRAM N times with CAUSAL_BENCH_T0 set to the time
// of exec and prints the median, min and max of what main_probe.c reports (ns).
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: launch N PROGRAM [ARGS...]\n");
    return 2;
  }
  int n = atoi(argv[1]);
  long long *t = calloc((size_t)n, sizeof *t);
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
      setenv("CAUSAL_BENCH_T0", buf, 1);
      execv(argv[2], argv + 2);
      _exit(127);
    }
    close(fds[1]);
    char out[64] = {0};
    ssize_t got = read(fds[0], out, sizeof out - 1);
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
      fprintf(stderr, "launch: %s did not report its time to main\n", argv[2]);
      return 1;
    }
    t[i] = atoll(out);
  }
  qsort(t, (size_t)n, sizeof *t, cmp);
  printf("median_us=%.1f min_us=%.1f max_us=%.1f runs=%d\n", t[n / 2] / 1e3, t[0] / 1e3,
         t[n - 1] / 1e3, n);
  return 0;
}
