#!/usr/bin/env bash
# bench/timer-loss/run.sh - what the kernel's CPU-time timers deliver under CPU contention.
#
# README
#   The timer sampler (the runtime's fallback where perf_event is denied) and a program's own
#   setitimer(ITIMER_PROF) are CPU-time timers, which the kernel checks only at a scheduler
#   tick that finds the thread on a CPU. cpu_timer_probe.c (the kernel alone, no profiler)
#   spins --ms ms of CPU time with a 1 ms CLOCK_THREAD_CPUTIME_ID POSIX timer (SIGEV_THREAD_ID,
#   a real-time signal) and a 1 ms ITIMER_PROF, beside 0 or more spinning processes. Per load
#   (threads per CPU: the probe and the spinners over the CPU count) the table gives: runs,
#   runs with no timer signal at all, runs with no SIGPROF tick, the periods the signals
#   account for (signals + si_overrun) over the CPU time, median (min-max), and the longest
#   stretch of CPU time without a timer signal, median (max). The claim measured: the
#   timer's si_overrun accounts exactly for the periods up to its last signal, but under
#   contention whole stretches go unchecked, the end of a run too, and a short run can get
#   none (tests that need CPU-timer samples under load run up to three times:
#   test/lit/Inputs/attempts.py).
#   Run time: --reps x (--ms of CPU at each load), about 1 min by default on 2 CPUs.
#
# usage: bench/timer-loss/run.sh [--build-dir DIR] [--cache-dir DIR] [--budget-s N] [--quick]
#                                [--reps N] [--ms N] [--loads "N ..."]
#   --build-dir  causal build tree (for the clang it wraps; default: $CAUSAL_BUILD_DIR, else
#                ../../build relative to this script)
#   --cache-dir  the probe and results (default: <build-dir>/bench-cache/timer-loss)
#   --budget-s   accepted for bench/run-all; the default run fits in 120 s
#   --quick      smoke run: 3 runs per load
#   --reps       runs per load (default 20)
#   --ms         CPU time each run spins, in ms (default 300)
#   --loads      spinning processes beside the probe (default: 0, CPUs - 1 and 2 x CPUs - 1,
#                that is 0.5, 1 and 2 threads per CPU)
# Results: stdout and <cache-dir>/results.md (Markdown), raw runs in <cache-dir>/runs.tsv.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
reps=20 ms=300 loads="" quick=0 budget=""
bench_args "--budget-s=budget --quick=quick! --reps=reps --ms=ms --loads=loads" "$@"
[ "$quick" = 1 ] && reps=3
bench_positive --reps "$reps"
bench_positive --ms "$ms"
bench_setup timer-loss ""
cpus="$(nproc)"
[ -n "$loads" ] || loads="0 $((cpus - 1)) $((2 * cpus - 1))"
"$clang" -O1 -Wall -o "$cache/cpu_timer_probe" "$here/cpu_timer_probe.c"

spinners=()
stop_spinners() {
  [ ${#spinners[@]} -eq 0 ] || kill "${spinners[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  spinners=()
}
trap stop_spinners EXIT

bench_fresh_runs "$cache/runs.tsv" 'load\tsignals\tperiods\texpected\tgap_ms\tprof_ticks'
for load in $loads; do
  bench_number --loads "$load"
  for ((i = 0; i < load; i++)); do
    (while :; do :; done) &
    spinners+=($!)
  done
  for ((run = 0; run < reps; run++)); do
    printf '%s\t%s\n' "$load" "$("$cache/cpu_timer_probe" "$ms")" >>"$cache/runs.tsv"
  done
  stop_spinners
done
load_after="$(bench_load)"

bench_context_header "$started" "$load_before" "$load_after" \
  "$reps runs per load, $ms ms of CPU each, 1 ms timers, $cpus CPUs"
python3 - "$cache/runs.tsv" "$cpus" >"$cache/results.md" <<'PY'
import os, statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])][1:]
cpus = int(sys.argv[2])
print(os.environ["BENCH_HEADER"].replace("\n", "  \n"))
print()
print("| threads per CPU | runs | no timer signal | no SIGPROF tick | periods accounted / CPU time | longest CPU time without a signal (ms) |")
print("|---|---|---|---|---|---|")
for load in sorted({int(r[0]) for r in rows}):
    runs = [[int(x) for x in r] for r in rows if int(r[0]) == load]
    share = [r[2] / r[3] for r in runs]
    gaps = [r[4] for r in runs]
    print("| %.1f | %d | %d | %d | %.2f (%.2f-%.2f) | %d (%d) |" % (
        (load + 1) / cpus, len(runs), sum(r[1] == 0 for r in runs), sum(r[5] == 0 for r in runs),
        statistics.median(share), min(share), max(share), statistics.median(gaps), max(gaps)))
PY
cat "$cache/results.md"
