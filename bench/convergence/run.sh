#!/usr/bin/env bash
# bench/convergence/run.sh - how much profiling until the top-ranked line stops changing?
#
# README
#   ranking.c (this folder) has three lines of known causal effect: one thread, lines TOP,
#   MIDDLE and BOTTOM take 50, 30 and 20 % of each round, so their slopes are 0.5, 0.3 and
#   0.2 and TOP is the right top line. It runs for a given number of seconds.
#   Each round runs it once under `causal run` (causal-clang -fcausal-profile -O2) and once
#   under `coz run` (clang -O2 -g -gdwarf-4, causal.h mapped to coz.h by
#   bench/overhead/coz_shim.h), both with default settings (lines and speedups drawn by the
#   profiler, default experiment lengths), the order alternating per round.
#   Each profile is then replayed (replay.py): its experiments in the order they ended, the
#   running sum of their durations as the time axis; every prefix is ranked by `causal
#   report --json` (default ranking: slope, 5 distinct speedups per line; the same analysis
#   for both profilers' files). Convergence time: the time of the earliest prefix after
#   which the top line never changes again, and whether that final top line is TOP; the same
#   for the order of the three lines among themselves (TOP > MIDDLE > BOTTOM is right).
#   The first ranked line appears once some line has experiments at 5 distinct speedups.
#   Table: per profiler, median and min-max over the rounds.
#   Programs run at nice -10 where allowed. The output of every run is compared with the
#   plain build's.
#   Run time: 2 rounds of 2 x 60 s runs plus replays: 4.3 minutes on a 2-vCPU VM.
#   --quick: 1 round of 8 s runs, about 30 s.
#
# usage: bench/convergence/run.sh [--build-dir DIR] [--cache-dir DIR] [--budget-s N] [--quick]
#                                 [--reps N] [--seconds S] [--skip-coz]
#   --build-dir  causal build tree or install prefix (default: $CAUSAL_BUILD_DIR, else
#                ../../build relative to this script)
#   --cache-dir  binaries, profiles and results (default: <build-dir>/bench-cache/convergence)
#   --budget-s   start another round only if it is expected to end, replays included, within
#                this many seconds of the start (default 360; at least one round always runs)
#   --quick      smoke run: 1 round of 8 s runs (numbers not for publication)
#   --reps       rounds (default 2)
#   --seconds    profiled run time of each run (default 60)
#   --skip-coz   leave out Coz
# Results: stdout and <cache-dir>/results.md (made by table.py from the raw data: it can be
# re-run on them), raw data <cache-dir>/runs.tsv (one row per run), header.txt and
# prefixes.tsv (top line of every replayed prefix). Writes nothing else.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
reps=2 seconds=60 budget=360 quick=0 skip_coz=0
bench_args "--budget-s=budget --quick=quick! --reps=reps --seconds=seconds --skip-coz=skip_coz!" "$@"
bench_positive --reps "$reps"
bench_positive --seconds "$seconds"
bench_number --budget-s "$budget"
if [ "$quick" = 1 ]; then reps=1; seconds=8; fi
t0=$(date +%s) # the budget counts from here: builds, runs, analysis
bench_setup convergence "bin profiles out" bin/causal bin/causal-clang
bench_check_coz
profilers="causal$with_coz"
bench_nice_cmd

program="$here/ranking.c"
line_of() { echo "$program:$(grep -n "// $1\$" "$program" | cut -d: -f1)"; }
right_order="$(line_of TOP),$(line_of MIDDLE),$(line_of BOTTOM)"
common=(-O2 -I"$src/include" "$program")
{
  set -x
  "$clang" "${common[@]}" -o "$cache/bin/ranking.plain"
  "$build/bin/causal-clang" -fcausal-profile "${common[@]}" -o "$cache/bin/ranking.causal"
  if [ "$skip_coz" = 0 ]; then
    "$clang" -g -gdwarf-4 -include "$src/bench/overhead/coz_shim.h" "${common[@]}" -ldl \
      -o "$cache/bin/ranking.coz"
  fi
  set +x
} >"$cache/build.log" 2>&1 || { echo "run.sh: building failed, see $cache/build.log" >&2; exit 1; }

rm -f "$cache/profiles/"*.coz "$cache/out/"*.txt "$cache/prefixes.tsv" "$cache/replay.log"
"$cache/bin/ranking.plain" 1 >"$cache/out/plain.txt"
runs="$cache/runs.tsv"
printf 'round\tprofiler\tstatus\tsame_output\twall_s\tfinal_top\tright\tsettled_s\texperiments\texperiment_s\ttop_changes\tfirst_top_s\torder_right\torder_settled_s\n' >"$runs"
bench_mark_start
rounds_done=0
for round in $(seq 1 "$reps"); do
  # Another round only if it fits in the budget at the mean round time so far, with 20 s
  # per round for the replays (at most 200 prefixes per profile, ~50 ms each).
  bench_round_fits "$round" "$rounds_done" $((20 * round)) || break
  list="$profilers"
  [ $((round % 2)) = 1 ] || list="$(bench_reverse "$list")"
  for p in $list; do
    profile="$cache/profiles/ranking.$p.$round.coz"
    out="$cache/out/$p.$round.txt"
    status=0
    start=$(date +%s%N)
    case "$p" in
      causal) "${nice_cmd[@]}" "$causal" run --quiet --output "$profile" -- "$cache/bin/ranking.causal" \
                "$seconds" >"$out" 2>/dev/null || status=$? ;;
      coz) "${nice_cmd[@]}" coz run -o "$profile" --- "$cache/bin/ranking.coz" "$seconds" \
             >"$out" 2>/dev/null || status=$? ;;
    esac
    end=$(date +%s%N)
    same=0
    cmp -s "$out" "$cache/out/plain.txt" && same=1
    echo "$round $p $status $same $(((end - start) / 1000000))" >"$cache/out/$p.$round.run"
  done
  rounds_done=$round
  echo "round $round of $reps run ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
load_after="$(bench_load)"
# Replays (after the runs, so that they do not share the machine with a profiled run).
for round in $(seq 1 "$rounds_done"); do
  for p in $profilers; do
    read -r _ _ status same wall_ms <"$cache/out/$p.$round.run"
    profile="$cache/profiles/ranking.$p.$round.coz"
    n=$(grep -c '^experiment' "$profile" 2>/dev/null || true)
    step=$(((${n:-0} + 199) / 200))
    [ "$step" -ge 1 ] || step=1
    summary="$(python3 "$here/replay.py" --causal "$causal" --profile "$profile" \
                 --right "$right_order" --step "$step" --tsv "$cache/prefixes.tsv" \
                 --label "$p.$round" 2>>"$cache/replay.log" || echo '{}')"
    python3 - "$runs" "$round" "$p" "$status" "$same" "$wall_ms" "$summary" <<'EOF'
import json, sys
path, rnd, prof, status, same, wall_ms, summary = sys.argv[1:8]
s = json.loads(summary)
def fmt(v, f="%.3f"):
    return "" if v is None else (f % v if isinstance(v, float) else str(v))
row = [rnd, prof, status, same, "%.3f" % (int(wall_ms) / 1000), s.get("final_top") or "-",
       "1" if s.get("right") else "0", fmt(s.get("settled_s")), fmt(s.get("experiments")),
       fmt(s.get("experiment_s")), fmt(s.get("top_changes")), fmt(s.get("first_top_s")),
       "1" if s.get("order_right") else "0", fmt(s.get("order_settled_s"))]
if not s:
    row[5] = "replay failed (see replay.log)"
open(path, "a").write("\t".join(row) + "\n")
EOF
  done
done
elapsed=$(($(date +%s) - t0))

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
coz_version="$(dpkg-query -W -f='${Version}' coz-profiler 2>/dev/null || echo '?')"
{
  echo "machine: $cpu, $(nproc) vCPUs, Linux $(uname -r)"
  echo "date: $started; $rounds_done round(s) of $seconds s runs, $elapsed s in all; load average" \
       "before $load_before, after $load_after; priority: ${nice_cmd[*]:-normal}"
  echo "compilers: $("$clang" --version | head -1); coz-profiler $coz_version"
} >"$cache/header.txt"
python3 "$here/table.py" --runs "$runs" --header "$cache/header.txt" --order "$right_order" \
  --seconds "$seconds" >"$cache/results.md"
cat "$cache/results.md"
echo "results: $cache/results.md, raw: $runs, $cache/prefixes.tsv" >&2
