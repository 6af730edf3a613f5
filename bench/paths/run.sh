#!/usr/bin/env bash
# bench/paths/run.sh - what the entry and exit of a chosen function cost (causal run --paths).
#
# README
#   paths_cost.cpp calls a chosen function (descriptor and entry/exit calls written by hand as
#   the pass emits them) at the bottom of ten frames of instrumented code (one code section
#   with a line table built in memory), N times a loop, and prints the thread CPU time per
#   call of the fastest of 7 loops. Linked with libcausal_rt.so as causal-ld links programs
#   (the runtime's sampler on, no experiments). Ways, interleaved within each round:
#     none       the same chain with a leaf that is not chosen (no check): the baseline
#     off        CAUSAL_PATHS unset: the descriptor stays disabled, the pass's check alone
#     paths      CAUSAL_PATHS=all, walks sampled as by default (--paths-walk-one-in auto: the
#                loop's calls, millions a second, are walked 1 in a few hundred after the first
#                4,096): most calls only count down in the module's counter
#     paths-every  CAUSAL_PATHS_WALK_ONE_IN=1: each call reaches the runtime, which checks the 12
#                frames of the path last entered from its call site against the stack (10
#                levels, the chosen function, main's; the first call walks them and looks the
#                path up in the thread's table), and one call in 16 after the path's first 64
#                reads the TSC clock twice
#     paths-exact  the same with CAUSAL_PATHS_TIME_ONE_IN=1: every call reads the TSC twice
#     cpu-clock  paths-every with CAUSAL_PATHS_CPU_CLOCK=1: clock_gettime
#                (CLOCK_THREAD_CPUTIME_ID) at the entry and at the exit as well
#     clocks     no chain: the thread CPU time of one read of the TSC (rdtsc: the wall clock
#                of an entry and an exit where the TSC is usable) and of clock_gettime
#                (CLOCK_MONOTONIC, the fallback); an entry and exit read the wall clock twice
#   The cost of an entry and exit is a way's time minus off's. Table: median (min-max) over
#   the rounds. Run time: about 1 min for 5 rounds; --quick: 1 round of tenth-length loops.
#
# usage: bench/paths/run.sh [--build-dir DIR] [--cache-dir DIR] [--rounds N] [--quick]
#   --build-dir  causal build tree (default: $CAUSAL_BUILD_DIR, else ../../build)
#   --cache-dir  binaries and results (default: <build-dir>/bench-cache/paths)
# Results: stdout and <cache-dir>/results.md; raw data <cache-dir>/runs.tsv.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
rounds=5 quick=0
bench_args "--rounds=rounds --quick=quick!" "$@"
bench_positive --rounds "$rounds"
bench_setup paths "" lib/libcausal_rt.so
calls=200000
if [ "$quick" = 1 ]; then rounds=1 calls=20000; fi

clangxx="${clang}++"
[ -x "$clangxx" ] || clangxx=clang++
"$clangxx" -O2 -fno-omit-frame-pointer -I"$src/include" -I"$src/test/unit/runtime" \
  "$here/paths_cost.cpp" -o "$cache/paths_cost" \
  -Wl,--push-state,--no-as-needed "$build/lib/libcausal_rt.so" -Wl,--pop-state \
  -Wl,-rpath,"$build/lib"

load_before="$(bench_load)"
bench_mark_start
raw="$cache/runs.tsv"
printf 'round\tway\tns_per_call\n' > "$raw"
clocks() { # ROUND
  local out
  out="$(env CAUSAL_DISABLE=1 "$cache/paths_cost" "$calls" clocks)"
  case "$out" in
    tsc_ns=*monotonic_ns=*) ;;
    *) echo "run.sh: clocks: unexpected output: $out" >&2; exit 1 ;;
  esac
  printf '%s\ttsc-read\t%s\n' "$1" "$(echo "$out" | sed -n 's/^tsc_ns=\([0-9.]*\).*/\1/p')" >> "$raw"
  printf '%s\tmonotonic-read\t%s\n' "$1" "$(echo "$out" | sed -n 's/.*monotonic_ns=\([0-9.]*\).*/\1/p')" >> "$raw"
}
run() { # ROUND WAY
  local env=(CAUSAL_OUTPUT="$cache/profile.coz" CAUSAL_EXPERIMENTS=0) out
  case "$2" in
    paths) env+=(CAUSAL_PATHS=all) ;;
    paths-every) env+=(CAUSAL_PATHS=all CAUSAL_PATHS_WALK_ONE_IN=1) ;;
    paths-exact) env+=(CAUSAL_PATHS=all CAUSAL_PATHS_WALK_ONE_IN=1 CAUSAL_PATHS_TIME_ONE_IN=1) ;;
    cpu-clock) env+=(CAUSAL_PATHS=all CAUSAL_PATHS_WALK_ONE_IN=1 CAUSAL_PATHS_CPU_CLOCK=1) ;;
  esac
  rm -f "$cache/profile.coz" "$cache/profile.coz.paths"
  local plain=""
  [ "$2" != none ] || plain=plain
  out="$(env "${env[@]}" "$cache/paths_cost" "$calls" $plain)"
  case "$2:$out" in
    none:*enabled=0* | off:*enabled=0* | paths:*enabled=2* | paths-every:*enabled=2* | \
      paths-exact:*enabled=2* | cpu-clock:*enabled=2*) ;;
    *) echo "run.sh: $2: unexpected output: $out" >&2; exit 1 ;;
  esac
  printf '%s\t%s\t%s\n' "$1" "$2" "$(echo "$out" | sed -n 's/^ns_per_call=\([0-9.]*\).*/\1/p')" >> "$raw"
}
for round in $(seq 1 "$rounds"); do
  for way in none off paths paths-every paths-exact cpu-clock; do run "$round" "$way"; done
  clocks "$round"
done
load_after="$(bench_load)"

python3 - "$raw" "$cache/results.md" "$rounds" "$calls" "$load_before" "$load_after" "$(bench_machine)" <<'PY'
import statistics, sys
from collections import defaultdict
raw, out, rounds, calls, before, after, machine = sys.argv[1:]
runs = defaultdict(list)
for line in open(raw).read().splitlines()[1:]:
    rnd, way, ns = line.split('\t')
    runs[way].append(float(ns))
off = statistics.median(runs['off'])
lines = [f"Thread CPU time per call of a chosen function at depth 10 (its caller chain: ten frames"
         f" of instrumented code), median (min-max) over {rounds} rounds of the fastest of 7 loops"
         f" of {calls} calls; {machine}; load average before {before}, after {after}.", "",
         "| way | ns per call | entry + exit (minus off) |", "|---|---|---|"]
none = statistics.median(runs['none'])
lines.insert(-2, f"The disabled check (off minus none): {off - none:+.2f} ns per call.")
lines.insert(-2, "")
for way, label in (("none", "none (the leaf not chosen)"), ("off", "off (descriptor disabled)"),
                   ("paths", "--paths (walks sampled: auto)"),
                   ("paths-every", "--paths --paths-walk-one-in 1"),
                   ("paths-exact", "--paths --paths-walk-one-in 1 --paths-time-one-in 1"),
                   ("cpu-clock", "--paths --paths-walk-one-in 1 --paths-cpu-clock")):
    v = runs[way]
    lines.append(f"| {label} | {statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f}) | "
                 f"{statistics.median(v) - off:+.1f} |")
lines += ["", "One read of each clock (thread CPU time per read, the same statistics; an entry and"
          " exit read the wall clock twice):", "", "| clock | ns per read |", "|---|---|"]
for way, label in (("tsc-read", "TSC (rdtsc), the wall clock where usable"),
                   ("monotonic-read", "clock_gettime(CLOCK_MONOTONIC)")):
    v = runs[way]
    lines.append(f"| {label} | {statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f}) |")
open(out, 'w').write('\n'.join(lines) + '\n')
print('\n'.join(lines))
PY
