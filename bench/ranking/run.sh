#!/usr/bin/env bash
# bench/ranking/run.sh - is the one line that matters ranked first among twenty that do not?
#
# README
#   needle.c (this folder): a critical thread whose rounds (the progress point) are the
#   NEEDLE loop (~0.15 ms) and a 0.8 ms sleep, beside a background thread that runs twenty
#   NOISE loops in turn and that nothing waits for. The needle holds ~20 % of one CPU's
#   samples, each noise line ~5 %.
#   Truth, measured with the build-time knobs: NEEDLE_PERCENT=50 (the needle line made
#   50 % faster) and NOISE_PERCENT=50 (every noise line 50 % faster), rounds per second
#   against the default build, plain clang -O2, alternating, --truth-runs runs each of
#   --truth-seconds.
#   Profiles: one `causal run --seed N` per seed (default 20 seeds of 30 s, default
#   settings otherwise); each ranked by `causal report --json` (default analysis: slope,
#   false-discovery control at 10 %). Per seed: the top line, whether the control kept it,
#   the needle's rank, slope and program speedup at 50 %. Over all seeds pooled (one
#   `causal report` of every profile): the needle's program speedup at 50 % with its
#   interval, against the truth.
#   Programs run at nice -10 where allowed; each profiled run's output is compared with the
#   plain build's. Run time: about 20 x 30 s + 5 x 3 x 10 s, 13 minutes on a 2-vCPU VM.
#   --quick: 3 seeds of 8 s and 1 truth run each, about 1 minute.
#   --busy N: N busy processes (not the program's, at normal priority) run beside every truth
#   run and every profiled run, as on a machine shared with other jobs: the program's threads
#   wait for CPUs, and a line's wall time exceeds its CPU time (docs/report.md, "Physical
#   bound"). The programs then run at normal priority too.
#
# usage: bench/ranking/run.sh [--build-dir DIR] [--cache-dir DIR] [--seeds N] [--seconds S]
#                             [--truth-runs N] [--truth-seconds S] [--quick] [--busy N]
# Results: stdout and <cache-dir>/results.md; raw data <cache-dir>/seeds.tsv, truth.tsv,
# the profiles in <cache-dir>/profiles. Writes nothing else.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
seeds=20 seconds=30 truth_runs=5 truth_seconds=10 quick=0 busy=0
bench_args "--seeds=seeds --seconds=seconds --truth-runs=truth_runs --truth-seconds=truth_seconds --quick=quick! --busy=busy" "$@"
bench_number --busy "$busy"
bench_positive --seeds "$seeds"
bench_positive --seconds "$seconds"
bench_positive --truth-runs "$truth_runs"
bench_positive --truth-seconds "$truth_seconds"
if [ "$quick" = 1 ]; then seeds=3; seconds=8; truth_runs=1; truth_seconds=5; fi
t0=$(date +%s)
bench_setup ranking "bin profiles out" bin/causal bin/causal-clang
bench_nice_cmd
program="$here/needle.c"
needle_line="$program:$(grep -n '// NEEDLE$' "$program" | cut -d: -f1)"
common=(-O2 -I"$src/include" "$program" -lpthread)
{
  set -x
  "$clang" "${common[@]}" -o "$cache/bin/needle.plain"
  "$clang" -DNEEDLE_PERCENT=50 "${common[@]}" -o "$cache/bin/needle.needle50"
  "$clang" -DNOISE_PERCENT=50 "${common[@]}" -o "$cache/bin/needle.noise50"
  "$build/bin/causal-clang" -fcausal-profile "${common[@]}" -o "$cache/bin/needle.causal"
  set +x
} >"$cache/build.log" 2>&1 || { echo "run.sh: building failed, see $cache/build.log" >&2; exit 1; }

# The busy processes start once the programs are built, and run to the end.
busy_pids=()
stop_busy() { [ ${#busy_pids[@]} -eq 0 ] || kill "${busy_pids[@]}" 2>/dev/null || true; }
trap stop_busy EXIT
if [ "$busy" -gt 0 ]; then
  nice_cmd=() # the busy processes compete with the program as other jobs would
  for _ in $(seq 1 "$busy"); do
    sh -c 'while :; do :; done' &
    busy_pids+=($!)
  done
fi

rm -f "$cache/profiles/"*.coz "$cache/out/"*
"$cache/bin/needle.plain" 0 >"$cache/out/plain.txt"
bench_mark_start

# Truth: the three plain builds in turn, so drift hits all of them alike.
printf 'run\tbuild\trounds_per_second\n' >"$cache/truth.tsv"
for run in $(seq 1 "$truth_runs"); do
  for b in plain needle50 noise50; do
    rate=$(NEEDLE_PRINT_RATE=1 "${nice_cmd[@]}" "$cache/bin/needle.$b" "$truth_seconds" 2>&1 >/dev/null |
           sed -n 's/^rounds-per-second=//p')
    printf '%s\t%s\t%s\n' "$run" "$b" "$rate" >>"$cache/truth.tsv"
  done
done

printf 'seed\tstatus\tsame_output\ttop_line\ttop_kept\tkept\tcompared\tneedle_rank\tneedle_kept\tneedle_slope\tneedle_at_50\tneedle_bound\n' \
  >"$cache/seeds.tsv"
for seed in $(seq 1 "$seeds"); do
  profile="$cache/profiles/seed$seed.coz"
  out="$cache/out/seed$seed.txt"
  status=0
  "${nice_cmd[@]}" "$causal" run --quiet --seed "$seed" --output "$profile" -- "$cache/bin/needle.causal" \
    "$seconds" >"$out" 2>"$cache/out/seed$seed.err" || status=$?
  same=0
  cmp -s "$out" "$cache/out/plain.txt" && same=1
  "$causal" report --json "$profile" >"$cache/out/seed$seed.json" 2>/dev/null || true
  python3 "$here/summary.py" seed "$cache/out/seed$seed.json" "$needle_line" "$seed" "$status" \
    "$same" >>"$cache/seeds.tsv"
  echo "seed $seed of $seeds ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
load_after="$(bench_load)"
"$causal" report --json "$cache/profiles/"seed*.coz >"$cache/out/pooled.json" 2>/dev/null || true
elapsed=$(($(date +%s) - t0))

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
{
  echo "machine: $cpu, $(nproc) vCPUs, Linux $(uname -r)"
  echo "date: $started; $seeds seed(s) of $seconds s runs, $truth_runs truth run(s) of" \
       "$truth_seconds s per build, $elapsed s in all; load average before $load_before, after" \
       "$load_after; priority: ${nice_cmd[*]:-normal}; busy processes beside: $busy"
  echo "compiler: $("$clang" --version | head -1)"
} >"$cache/header.txt"
python3 "$here/summary.py" table "$cache/seeds.tsv" "$cache/truth.tsv" "$cache/out/pooled.json" \
  "$needle_line" "$cache/header.txt" >"$cache/results.md"
cat "$cache/results.md"
