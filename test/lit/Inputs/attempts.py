#!/usr/bin/env python3
"""Runs a shell command whose outcome depends on how the machine schedules the
program up to ATTEMPTS times, until it succeeds.

  attempts.py [--attempts N] -- 'COMMAND'

For things no program can control, each named where a test uses this:

- CPU-time timers under contention. The kernel checks a CPU-time timer (a
  POSIX CPUTIME timer, setitimer's ITIMER_PROF) only at a scheduler tick that
  finds the thread on a CPU. Under CPU contention (four spinning threads on
  two CPUs, as a loaded CI machine has) a thread can go unchecked for a whole
  run: on kernel 6.18 a program of 300 ms of CPU got no ITIMER_PROF tick in 4
  runs of 30, one of 1000 ms none in 1 of 14, with or without the profiler
  (bench/timer-loss shows the gaps).
- A virtual CPU taken by its host. In a VM that reports no steal time (CI's),
  the time the host keeps a vCPU is CPU time of the thread that was on it: a
  thread that spun 5 ms was charged 354 ms once in CI. A check on a thread's
  share of CPU (a sleeper classed as background) fails for that run.
  The same work of a thread that sleeps and wakes every millisecond (a
  server paying its delays in pauses, causal/latency) took 820-940 samples a
  run on one host, 690-1220 without the pauses.
- Wake-up latency racing a program's own period. A test that expects a woken
  thread to re-take its mutex before another thread's next periodic broadcast
  (waits/known W4: 1.5 ms) loses the race now and then on a loaded machine
  (ratio 0.371 for a bound of 0.33 once, with lit's other worker beside it).
- Load that changes between runs. A check that alternates speedups between
  whole runs (causal_check.py run) compares runs made seconds apart in
  A B B A order; when another job starts or stops in between, the runs of
  one speedup see a different machine from the other's. A line with a small
  effect reads a large one for that profile (causal/pipeline's PRODUCE:
  item rates of 120-220/s from run to run beside lit's other worker,
  -0.298 for 0 once in CI).
- A program stalled. A check that needs a program's rhythm to stay regular
  over a whole run loses it to stalls on a shared CPU (progress/visit-times:
  the report leaves one stalled window in ten out of the gaps' squared
  variation, but a loaded enough machine scatters the gaps of every window).
- Pinned vCPUs of unequal speed. A known answer that assumes both CPUs a test
  pins its threads to run equally fast (causal/figure1: which of two parallel
  threads is the longer) is not the answer while the host slows one of them.

What the tests guard against fails every attempt; a run the machine spoiled
passes on another.

On success prints the succeeding attempt's stdout (for FileCheck). On failure
prints every attempt's stdout and stderr and exits with the last status.
"""
import subprocess
import sys


def main(argv):
    attempts = 3
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--attempts":
        attempts = int(args[1])
        args = args[2:]
    if len(args) != 2 or args[0] != "--" or attempts < 1:
        sys.stderr.write(__doc__)
        return 2
    command = args[1]
    failures = []
    for attempt in range(1, attempts + 1):
        result = subprocess.run(command, shell=True, capture_output=True, text=True)
        if result.returncode == 0:
            for number, failure in failures:
                sys.stderr.write("attempts: attempt %d failed (status %d), "
                                 "attempt %d passed:\n%s" % (number, failure.returncode,
                                                             attempt, failure.stderr))
            sys.stdout.write(result.stdout)
            return 0
        failures.append((attempt, result))
    for number, failure in failures:
        sys.stdout.write("--- attempt %d (status %d) stdout:\n%s" % (number, failure.returncode,
                                                                     failure.stdout))
        sys.stderr.write("--- attempt %d stderr:\n%s" % (number, failure.stderr))
    sys.stderr.write("attempts: all %d attempts failed\n" % attempts)
    return failures[-1][1].returncode or 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
