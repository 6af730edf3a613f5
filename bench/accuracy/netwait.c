// bench/accuracy: a client bound by a network wait (issue 14).
//
//   netwait [ROUNDS]        (default 1000)
//
// The program starts a server, its own executable run again with the
// argument --serve FD and CAUSAL_DISABLE=1 in its environment (posix_spawn:
// another process, not profiled, with nothing of the runtime running in it),
// connected to it by a socketpair. Each round the client sends a request
// (8 bytes), waits for the reply in recv (line KNOB), then processes it for
// about 0.5 ms of CPU (line WORK) and calls CAUSAL_PROGRESS_NAMED("round").
// The server answers each request after a 2 ms nanosleep (line SERVER_WAIT).
// No thread of the profiled process writes the client's socket, so the
// runtime classes the wait at line KNOB as a network wait.
//
// Build-time knob: -DLINE_COST_PERCENT=P makes the server's delay P % of
// 2 ms (P = 0: it answers at once; the server is the same executable, so it
// has the same knob), a real shortening of the client's wait by about
// s = 100 - P %. The right causal answer: as in devicewait, 0.7-0.8 s (the
// round trip, two wake-ups, is part of the wait too); measured on a quiet
// 2-vCPU VM: 21 % at s = 25 %, 39 % at 50 %, 78 % at 100 %. Standard output
// does not depend on the knob or the timing.
#define _GNU_SOURCE
#include "causal/causal.h"

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "accuracy.h"

#ifndef LINE_COST_PERCENT
#define LINE_COST_PERCENT 100
#endif

enum { SERVER_WAIT_NS = 2000000, WORK_ITERATIONS = 200000 }; // 2 ms; about 0.5 ms

static const long serverWaitNs = (long)SERVER_WAIT_NS * LINE_COST_PERCENT / 100;
extern char **environ;

// The server: answers each request on |fd| (request + 1) after the delay,
// until the client closes its end.
static int serve(int fd) {
  struct timespec wait = {0, serverWaitNs};
  uint64_t request;
  while (recv(fd, &request, sizeof request, MSG_WAITALL) == (ssize_t)sizeof request) {
    if (serverWaitNs > 0)
      nanosleep(&wait, NULL); // SERVER_WAIT
    uint64_t reply = request + 1;
    if (send(fd, &reply, sizeof reply, 0) != (ssize_t)sizeof reply)
      return 1;
  }
  return 0;
}

// Starts the server on a socketpair; returns the client's end, sets *pid.
static int startServer(pid_t *pid) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
    return -1;
  fcntl(sv[0], F_SETFD, FD_CLOEXEC); // the server must not hold the client's end
  char fdText[16];
  snprintf(fdText, sizeof fdText, "%d", sv[1]);
  char *argv[] = {"netwait", "--serve", fdText, NULL};
  size_t n = 0;
  while (environ[n])
    ++n;
  char **env = calloc(n + 2, sizeof *env);
  if (!env)
    return -1;
  memcpy(env, environ, n * sizeof *env);
  env[n] = "CAUSAL_DISABLE=1";
  int failed = posix_spawn(pid, "/proc/self/exe", NULL, NULL, argv, env);
  free(env);
  close(sv[1]);
  if (failed) {
    close(sv[0]);
    return -1;
  }
  return sv[0];
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--serve") == 0)
    return serve(atoi(argv[2]));
  long rounds = countArg(argc, argv, 1000, "netwait [ROUNDS]");
  pid_t server;
  int fd = startServer(&server);
  if (fd < 0) {
    fprintf(stderr, "netwait: cannot start the server\n");
    return 1;
  }
  uint64_t checksum = 0;
  for (long r = 0; r < rounds; ++r) {
    uint64_t request = (uint64_t)r, reply = 0;
    ssize_t got = -1;
    if (send(fd, &request, sizeof request, 0) == (ssize_t)sizeof request)
      got = recv(fd, &reply, sizeof reply, MSG_WAITALL); // KNOB
    if (got != (ssize_t)sizeof reply || reply != request + 1) {
      fprintf(stderr, "netwait: bad reply in round %ld\n", r);
      return 1;
    }
    cpuWorkSink = cpuWork(cpuWorkSink, WORK_ITERATIONS); // WORK
    checksum += reply;
    CAUSAL_PROGRESS_NAMED("round");
  }
  close(fd);
  int status = 0;
  waitpid(server, &status, 0);
  printf("netwait: %ld rounds, checksum %llu, server exit %d\n", rounds,
         (unsigned long long)checksum, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
