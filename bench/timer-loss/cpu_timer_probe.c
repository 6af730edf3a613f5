// cpu_timer_probe MS: what the kernel's CPU-time timers deliver to a thread
// that spins MS ms of CPU time. A CLOCK_THREAD_CPUTIME_ID POSIX timer (the
// runtime's timer sampler: SIGEV_THREAD_ID, a real-time signal, 1 ms) and
// setitimer(ITIMER_PROF) (a program's own profiling timer, 1 ms) run at once.
// Prints one line of tab-separated fields:
//   signals     timer signals handled
//   periods     those signals plus their si_overrun (the periods accounted)
//   expected    the thread's CPU time / 1 ms
//   gap_ms      the longest stretch of CPU time with no timer signal (the
//               start, between signals, or the end)
//   prof_ticks  SIGPROF signals
// Nothing here is the profiler's: the kernel alone, for bench/timer-loss.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static volatile long signals, periods, prof_ticks;
static volatile long long last_signal_ns, longest_gap_ns; // the handler writes them

static void note_gap(long long now) {
  if (now - last_signal_ns > longest_gap_ns)
    longest_gap_ns = now - last_signal_ns;
  last_signal_ns = now;
}

static void on_timer(int sig, siginfo_t *info, void *context) {
  (void)sig, (void)context;
  signals = signals + 1;
  periods = periods + 1 + info->si_overrun;
  note_gap(cpu_ns());
}

static void on_prof(int sig) {
  (void)sig;
  prof_ticks = prof_ticks + 1;
}

int main(int argc, char **argv) {
  long long ms = argc > 1 ? atoll(argv[1]) : 300;
  struct sigaction action = {0};
  action.sa_sigaction = on_timer;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGRTMAX, &action, NULL);
  signal(SIGPROF, on_prof);

  struct sigevent event = {0};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGRTMAX;
  event._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_t timer;
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer) != 0) {
    perror("timer_create");
    return 1;
  }
  struct itimerspec every_ms = {{0, 1000000}, {0, 1000000}};
  struct itimerval prof = {{0, 1000}, {0, 1000}};
  long long start = cpu_ns();
  last_signal_ns = start;
  timer_settime(timer, 0, &every_ms, NULL);
  setitimer(ITIMER_PROF, &prof, NULL);

  volatile unsigned long sink = 0;
  while (cpu_ns() - start < ms * 1000000ll)
    for (int i = 0; i < 20000; ++i)
      sink += (unsigned long)i * 7u;

  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  timer_delete(timer);
  long long end = cpu_ns();
  note_gap(end);
  printf("%ld\t%ld\t%lld\t%lld\t%ld\n", signals, periods, (end - start) / 1000000,
         longest_gap_ns / 1000000, prof_ticks);
  return 0;
}
