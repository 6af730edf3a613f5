// spinFor(ns): keeps the CPU busy for |ns| of wall time (CLOCK_MONOTONIC),
// for the --waits test programs whose waits must last a known time;
// isSleeping(tid) and waitUntilSleeping(&tid): whether a thread sleeps, for
// the scenes whose waker must not act before the waiter waits.
#ifndef CAUSAL_TEST_WAITS_SPIN_FOR_H
#define CAUSAL_TEST_WAITS_SPIN_FOR_H
#include <time.h>

static void spinFor(long ns) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do
    clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000l + (b.tv_nsec - a.tv_nsec) < ns);
}

// Whether thread |tid| sleeps (state S in /proc/self/task/TID/stat), read
// with raw system calls so that the check records no episode of its own.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
static inline int isSleeping(long tid) {
  char path[64], text[256];
  snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
  int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
  if (fd < 0)
    return 0;
  long n = syscall(SYS_read, fd, text, sizeof text - 1);
  syscall(SYS_close, fd);
  if (n <= 0)
    return 0;
  text[n] = 0;
  const char *end = strrchr(text, ')'); // the name may hold spaces
  return end && end[1] == ' ' && end[2] == 'S';
}

// Waits until the thread whose tid another thread stores in |*tid| sleeps
// (at most about 10 s: the scene then goes on, and its check fails).
static inline void waitUntilSleeping(volatile long *tid) {
  for (int tries = 0; tries < 10000 && !(*tid && isSleeping(*tid)); ++tries)
    spinFor(1000 * 1000);
}
#endif
