#!/usr/bin/env bash
# bench/sample-cost/run.sh - what a sample costs the sampled thread, and what that does to a
# profiled program's latency.
#
# README
#   Part 1, the kernel alone (sample_cost_probe.c, no profiler): a thread runs a fixed amount
#   of CPU work while it is sampled every PERIOD of its CPU time by a perf_event task clock
#   (samples to a ring only, as the runtime's sampler did until 2026-12-02; no ring and a
#   real-time signal per overflow, as it does now) or by a CPU-time POSIX timer (the timer
#   sampler). Per source and period:
#   the work's CPU time against the unsampled reference, medians of --reps interleaved runs,
#   and that difference per sample. On a machine without a PMU (a VM: the perf task clock is a
#   software event driven by a high-resolution timer) each sample costs a timer interrupt and
#   a reprogramming of the timer; under virtualization both leave the guest, and the guest
#   counts the host's time as the thread's CPU time. The timer sampler's signals come at the
#   scheduler tick, which runs anyway (si_overrun counts the periods between).
#   Part 2, a profiled program: bench/accuracy's closed loop (two clients, one server, a
#   request's mean latency as the program measures it), built with -fcausal-profile, run with
#   CAUSAL_DISABLE=1 and under `causal run --no-experiments` (sampling only, no delay) with
#   each sampler and period: the latency the sampling alone adds.
#   Part 3, what a sampler costs each context switch (sample_cost_probe's hand-offs): two
#   threads pinned to one CPU hand a token to each other --handoffs times through two
#   semaphores, each thread with its own sampler (none, a perf task clock that only counts,
#   the runtime's perf sampler at 1 ms, the CPU-time timer at 1 ms): wall time per hand-off.
#   A perf event that samples a software clock stops and restarts a high-resolution timer
#   at every switch of its thread.
#   Run time: about 2 min by default on 2 CPUs.
#
# usage: bench/sample-cost/run.sh [--build-dir DIR] [--cache-dir DIR] [--budget-s N] [--quick]
#                                 [--reps N] [--iterations N] [--periods "NS ..."]
#                                 [--handoffs N]
#   --build-dir  causal build tree (default: $CAUSAL_BUILD_DIR, else ../../build relative to
#                this script)
#   --cache-dir  programs and results (default: <build-dir>/bench-cache/sample-cost)
#   --budget-s   accepted for bench/run-all; the default run fits in 150 s
#   --quick      smoke run: 1 run each, a tenth of the work
#   --reps       runs of each source, period and program variant (default 5)
#   --iterations steps of the probe's work (default 200000000, about 0.35 s of CPU here)
#   --periods    sample periods in ns (default: 100000 250000 1000000 4000000)
#   --handoffs   part 3's hand-offs per run (default 200000)
# Results: stdout and <cache-dir>/results.md (Markdown), raw runs in <cache-dir>/probe.tsv
# <cache-dir>/latency.tsv and <cache-dir>/handoffs.tsv.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
reps=5 iterations=200000000 periods="100000 250000 1000000 4000000" quick=0 budget=""
handoffs=200000
bench_args "--budget-s=budget --quick=quick! --reps=reps --iterations=iterations \
--periods=periods --handoffs=handoffs" "$@"
if [ "$quick" = 1 ]; then
  reps=1
  iterations=$((iterations / 10))
  handoffs=$((handoffs / 10))
fi
bench_positive --reps "$reps"
bench_positive --iterations "$iterations"
bench_positive --handoffs "$handoffs"
for period in $periods; do bench_positive --periods "$period"; done
bench_setup sample-cost "" bin/causal bin/causal-clang
"$clang" -O1 -Wall -pthread -o "$cache/sample_cost_probe" "$here/sample_cost_probe.c"
"$build/bin/causal-clang" -fcausal-profile -O2 -I"$src/include" -pthread \
  "$src/bench/accuracy/closedloop.c" -o "$cache/closedloop"
requests=300
[ "$quick" = 0 ] || requests=60

bench_fresh_runs "$cache/probe.tsv" 'source\tperiod\twall_ns\tcpu_ns\tsamples'
for ((run = 0; run < reps; run++)); do
  for period in $periods; do
    for source in none perf-ring perf-signal timer; do
      "$cache/sample_cost_probe" "$source" "$period" "$iterations" >>"$cache/probe.tsv"
    done
  done
done

# The closed loop's mean latency (ns, printed by the program) for one variant.
latency_of() {
  local sampler="$1" period="$2" err="$cache/closedloop.err"
  if [ "$sampler" = off ]; then
    CAUSAL_DISABLE=1 PRINT_MEAN_LATENCY=1 "$cache/closedloop" "$requests" >/dev/null 2>"$err"
  else
    PRINT_MEAN_LATENCY=1 "$causal" run --quiet --no-experiments --output "$cache/closedloop.coz" \
      --sampler "$sampler" --sample-period "$period" -- "$cache/closedloop" "$requests" \
      >/dev/null 2>"$err"
  fi
  sed -n 's/^mean-latency-ns=//p' "$err" | tail -1
}
printf 'sampler\tperiod\tlatency_ns\n' >"$cache/latency.tsv"
for ((run = 0; run < reps; run++)); do
  printf 'off\t0\t%s\n' "$(latency_of off 0)" >>"$cache/latency.tsv"
  for period in $periods; do
    for sampler in perf timer; do
      printf '%s\t%s\t%s\n' "$sampler" "$period" "$(latency_of "$sampler" "$period")" \
        >>"$cache/latency.tsv"
    done
  done
  rm -f "$cache/closedloop.coz"
done

bench_fresh_runs "$cache/handoffs.tsv" 'source\tperiod\twall_ns\tcpu_ns\tsamples'
for ((run = 0; run < reps; run++)); do
  for source in none perf-count perf-signal timer; do
    "$cache/sample_cost_probe" "$source" 1000000 "$handoffs" handoffs >>"$cache/handoffs.tsv"
  done
done
load_after="$(bench_load)"

bench_context_header "$started" "$load_before" "$load_after" \
  "$reps runs of each, interleaved; probe: $iterations steps of work; closed loop: $requests requests per client; $handoffs hand-offs"
python3 - "$cache/probe.tsv" "$cache/latency.tsv" "$cache/handoffs.tsv" "$handoffs" >"$cache/results.md" <<'PY'
import os, statistics, sys
from collections import defaultdict
print(os.environ["BENCH_HEADER"].replace("\n", "  \n"))
print()
probe = defaultdict(list)
for line in list(open(sys.argv[1]))[1:]:
    source, period, wall, cpu, samples = line.split("\t")
    probe[(source, int(period))].append((int(wall), int(cpu), int(samples)))
names = {"perf-ring": "perf task clock, samples to a ring, no signal",
         "perf-signal": "perf task clock, no ring, a signal per sample",
         "timer": "CPU-time timer, a signal per tick"}
print("Part 1, the kernel alone: the work's CPU time, median of the runs, against the unsampled")
print("reference at the same period's turn.")
print()
print("| sampler | period (us) | CPU time (ms) | unsampled (ms) | extra | samples | extra CPU per sample (us) |")
print("|---|---:|---:|---:|---:|---:|---:|")
for period in sorted({p for _, p in probe}):
    base = statistics.median(c for _, c, _ in probe[("none", period)])
    for source in ("perf-ring", "perf-signal", "timer"):
        runs = probe.get((source, period))
        if not runs:
            continue
        cpu = statistics.median(c for _, c, _ in runs)
        samples = statistics.median(s for _, _, s in runs)
        per = (cpu - base) / samples / 1e3 if samples else float("nan")
        print("| %s | %g | %.1f | %.1f | %+.1f %% | %d | %.1f |" % (
            names[source], period / 1e3, cpu / 1e6, base / 1e6, 100 * (cpu / base - 1),
            samples, per))
print()
latency = defaultdict(list)
for line in list(open(sys.argv[2]))[1:]:
    sampler, period, ns = line.rstrip("\n").split("\t")
    if ns:
        latency[(sampler, int(period))].append(int(ns))
off = statistics.median(latency[("off", 0)]) if latency[("off", 0)] else float("nan")
print("Part 2, bench/accuracy's closed loop: a request's mean latency, median of the runs;")
print("not profiled (CAUSAL_DISABLE=1): %.3f ms." % (off / 1e6))
print()
print("| sampler | period (us) | latency (ms) | added by sampling |")
print("|---|---:|---:|---:|")
for (sampler, period), values in sorted(latency.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    if sampler == "off":
        continue
    value = statistics.median(values)
    print("| %s | %g | %.3f | %+.1f %% |" % (sampler, period / 1e3, value / 1e6,
                                             100 * (value / off - 1)))
print()
handoffs = defaultdict(list)
for line in list(open(sys.argv[3]))[1:]:
    source, period, wall, cpu, samples = line.split("\t")
    handoffs[source].append(int(wall))
count = int(sys.argv[4])
names = {"none": "none", "perf-count": "perf task clock, counting only",
         "perf-signal": "perf task clock, a sample every 1 ms (the runtime's)",
         "timer": "CPU-time timer, every 1 ms"}
print("Part 3, hand-offs between two threads on one CPU (two context switches each), each")
print("thread with its own sampler: wall time, median of the runs.")
print()
print("| sampler on each thread | wall time (s) | per hand-off (us) | added per switch (us) |")
print("|---|---:|---:|---:|")
base = statistics.median(handoffs["none"]) if handoffs["none"] else float("nan")
for source in ("none", "perf-count", "perf-signal", "timer"):
    if not handoffs[source]:
        continue
    wall = statistics.median(handoffs[source])
    print("| %s | %.2f | %.1f | %+.1f |" % (names[source], wall / 1e9, wall / count / 1e3,
                                           (wall - base) / count / 2 / 1e3))
PY
cat "$cache/results.md"
