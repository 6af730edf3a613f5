#!/usr/bin/env bash
# bench/oversub/run.sh - virtual speedups when threads outnumber CPUs (issue 21).
#
# README
#   Cases of bench/accuracy/oversub.c, each with a line whose cost is a build-time knob:
#     pool N=1, C, 2C, 8C, 64C   N threads of rounds of ~8 us on line POOL and a tiny critical
#                                section (C = CPUs available; POOL is nearly all the work)
#     pool N=8, taskset 1 CPU    the same, pinned to one CPU with taskset
#     pool N=8, quota 1 CPU      the same, in a cgroup with a CPU quota of one CPU (v1 or v2;
#                                skipped where the script cannot make one)
#     pool N=C, C busy processes beside  the same, with one busy process per CPU (not the
#                                program's, at the runs' priority) through all the case's runs
#     stage N=8C                 8C producers (POOL) feed one consumer (SERIAL) through a
#                                bounded queue; each line in turn
#     lock N=8C                  work (POOL), then a shared mutex's critical section
#                                (CRITICAL); each line in turn
#   True effect: plain clang -O2 builds at knob 100, 75, 50 %, timed in the same round
#   (the median of --truth-reps runs each: the lock and stage cases vary a lot run to run);
#   predicted: `causal run --fixed-line LINE --fixed-speedup 0/25/50` of this build, of an
#   earlier build (--before-build), this build in Coz's model (--coz-model: `causal run
#   --no-shared-cpus`, every thread treated as having a CPU of its own) and `coz run` (Coz
#   0.2.2 from Debian) in the same round,
#   one profile per round and profiler read by `causal report --json --min-speedups 2`.
#   A second table: wall time of the profiled runs over the plain build's (the cost); a
#   third: how saturated the process was in this build's experiments on the line (threads
#   running, waiting for a CPU, CPUs idle: the report's JSON "saturation").
#   Details in run.py. Runs at nice -10 where allowed. Run time: about 5-7 minutes a round
#   on a 2-vCPU VM with Coz (default 3 rounds); --quick: 1 round of quarter-length runs.
#
# usage: bench/oversub/run.sh [--build-dir DIR] [--before-build DIR] [--cache-dir DIR]
#                             [--budget-s N] [--reps N] [--quick] [--skip-coz] [--only TEXT]
#                             [--truth-reps N] [--length N] [--coz-model] [--report-only]
#   --build-dir     causal build tree or install prefix (default: $CAUSAL_BUILD_DIR, else
#                   ../../build relative to this script)
#   --before-build  a second causal build (e.g. of the commit before a change), measured too
#   --cache-dir     binaries, profiles and results (default: <build-dir>/bench-cache/oversub)
#   --budget-s      start another round only if it is expected to end within this many
#                   seconds of the start (default 1500; one round always runs)
#   --only TEXT     only the cases whose name contains TEXT (e.g. "pool N=")
#   --truth-reps    plain runs per knob value, case and round (default 3; their median counts)
#   --length        each run's work N times the default (about a second of plain run time;
#                   a run of the stage case holds only a handful of experiments at 1)
#   --coz-model     also run this build with --no-shared-cpus (Coz's model of pauses), a
#                   column "causal, Coz's model"
#   --report-only   no builds or runs: the tables again from <cache-dir>/runs.tsv (give the
#                   same --only as the run)
# Results: stdout and <cache-dir>/results.md; raw data <cache-dir>/runs.tsv.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
before="" reps=3 budget=1500 quick=0 skip_coz=0 only="" report_only=0 truth_reps=3 length=1 coz_model=0
bench_args "--before-build=before --budget-s=budget --reps=reps --quick=quick! --length=length \
  --report-only=report_only! --truth-reps=truth_reps --skip-coz=skip_coz! --only=only --coz-model=coz_model!" "$@"
bench_positive --reps "$reps"
bench_positive --truth-reps "$truth_reps"
bench_positive --length "$length"
bench_number --budget-s "$budget"
[ "$quick" = 0 ] || reps=1
bench_setup oversub "" bin/causal bin/causal-clang
[ -z "$before" ] || { before="$(cd "$before" && pwd)"; bench_require_build "$before" bin/causal bin/causal-clang; }
bench_check_coz
bench_nice_cmd
args=(--src "$src" --cache "$cache" --clang "$clang" --causal-build "$build"
      --reps "$reps" --truth-reps "$truth_reps" --length "$length" --budget-s "$budget" --only "$only" --nice "${nice_cmd[*]:-}")
[ -z "$before" ] || args+=(--before-build "$before")
[ "$skip_coz" = 1 ] || args+=(--coz)
[ "$quick" = 0 ] || args+=(--quick)
[ "$coz_model" = 0 ] || args+=(--coz-model)
[ "$report_only" = 0 ] || args+=(--report-only)
python3 "$here/run.py" "${args[@]}" | tee "$cache/results.md"
echo "results: $cache/results.md, raw: $cache/runs.tsv" >&2
