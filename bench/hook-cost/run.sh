#!/usr/bin/env bash
# bench/hook-cost/run.sh - what a hook (a sleep, a mutex) and the progress-point check cost.
#
# README
#   hook_cost.c times, in thread CPU time (fastest of 7 rounds per run), loops of
#     poll(NULL, 0, 0)          a wait that returns at once
#     nanosleep({0, -1})        a sleep the kernel refuses at once (EINVAL)
#     pthread_mutex_lock+unlock of a mutex nobody else holds (a blocking and a waking hook)
#     sem_post+sem_wait         a wait that may block but returns at once (no episode kept)
#     a throughput point        CAUSAL_PROGRESS_NAMED + one relaxed increment of a volatile
#     the same, every visit timed (progress-in-experiment: inside one 20 s experiment)
#   For the three calls, each run also times the same loop calling libc.so.6's own function
#   (rounds alternating in the same process): the hook's cost is the difference, which
#   cancels most of the run-to-run swing of the system call itself (+-50-100 ns here).
#   in four builds/ways, interleaved within each round:
#     plain         clang -O2, no runtime (the C library's functions; no progress point)
#     empty-wrapper the plain binary with LD_PRELOAD of empty_wrapper.c, whose poll and
#                   nanosleep only call libc's: the floor for any wrapper on this machine
#     interposed    the plain binary with LD_PRELOAD=libcausal_rt.so (the runtime's
#                   interposed functions, code built without the flag)
#     hooks         causal-clang -fcausal-profile -O2 (direct calls go to the hooks; the
#                   settling check before each progress point)
#     no-check      the same with -mllvm -causal-settle-at-progress=false (the increment
#                   alone: the progress point before the check)
#     +waits        interposed and hooks again with CAUSAL_WAITS=all (a blocking call timed
#                   and checked for an episode; the sidecar goes where the profile goes,
#                   /dev/null): run in the same rounds, so the load of the machine weighs
#                   on both alike; the table "With --waits" is the difference. The
#                   semaphore loop is a call that may block and returns at once (two clock
#                   reads, no episode); the nanosleep loop takes about 1 us, so nearly every
#                   call is also appended as an episode; poll with a zero timeout and a free
#                   mutex never block and read no clock
#   each run without an experiment (nothing can be owed) and, for the instrumented builds,
#   with an experiment running on a line that never runs (--fixed-line on idle(): the flag
#   is set, every check calls __causal_progress_visit, nothing is owed).
#   Run time: about 4-5 minutes for 5 rounds; --quick: 1 round of tenth-length loops.
#
# usage: bench/hook-cost/run.sh [--build-dir DIR] [--cache-dir DIR] [--rounds N] [--quick]
#   --build-dir  causal build tree (default: $CAUSAL_BUILD_DIR, else ../../build)
#   --cache-dir  binaries and results (default: <build-dir>/bench-cache/hook-cost)
# Results: stdout and <cache-dir>/results.md; raw data <cache-dir>/runs.tsv.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
rounds=5 quick=0
bench_args "--rounds=rounds --quick=quick!" "$@"
bench_positive --rounds "$rounds"
bench_setup hook-cost "" bin/causal-clang lib/libcausal_rt.so
calls=200000 progress=20000000 timed=40000
if [ "$quick" = 1 ]; then rounds=1 calls=20000 progress=2000000; fi

prog="$here/hook_cost.c"
idle_line="$(grep -n 'IDLE_LINE' "$prog" | tail -1 | cut -d: -f1)"
"$clang" -O2 -I"$src/include" "$prog" -o "$cache/plain"
"$clang" -O2 -shared -fPIC "$here/empty_wrapper.c" -o "$cache/empty_wrapper.so"
"$build/bin/causal-clang" -fcausal-profile -O2 -I"$src/include" "$prog" -o "$cache/hooks"
"$build/bin/causal-clang" -fcausal-profile -O2 -I"$src/include" \
  -mllvm -causal-settle-at-progress=false "$prog" -o "$cache/no-check"

load_before="$(bench_load)"
raw="$cache/runs.tsv"
printf 'round\tloop\tway\texperiment\tns_per_call\tlibc_ns_per_call\n' > "$raw"
# run ROUND LOOP WAY EXPERIMENT(0|1) N
run() {
  local round="$1" loop="$2" way="$3" experiment="$4" n="$5" binary prefix=() env=()
  env=(CAUSAL_OUTPUT=/dev/null)
  [ "$experiment" = 1 ] && env+=(CAUSAL_FIXED_LINE="hook_cost.c:$idle_line")
  # One experiment longer than the loop, every visit of it timed (at most 20,000 a second).
  [ "$loop" = progress-in-experiment ] && env+=(CAUSAL_EXPERIMENT_NS=20000000000)
  case "$way" in
    plain) binary="$cache/plain" ;;
    interposed) binary="$cache/plain"; env+=(LD_PRELOAD="$build/lib/libcausal_rt.so") ;;
    interposed+waits)
      binary="$cache/plain"; env+=(LD_PRELOAD="$build/lib/libcausal_rt.so" CAUSAL_WAITS=all) ;;
    hooks+waits) binary="$cache/hooks"; env+=(CAUSAL_WAITS=all) ;;
    empty-wrapper) binary="$cache/plain"; env+=(LD_PRELOAD="$cache/empty_wrapper.so") ;;
    *) binary="$cache/$way" ;;
  esac
  local out
  out="$(env "${env[@]}" "$binary" "$loop" "$n" keep-idle)"
  local ns libc=""
  ns="$(echo "$out" | sed -n 's/^ns_per_call=\([0-9.]*\).*/\1/p')"
  case "$out" in *libc_ns_per_call=*) libc="${out##*libc_ns_per_call=}" ;; esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$loop" "$way" "$experiment" "$ns" "$libc" >> "$raw"
}
for round in $(seq 1 "$rounds"); do
  for loop in poll0 nanosleep mutex semaphore; do
    run "$round" "$loop" plain 0 "$calls"
    run "$round" "$loop" empty-wrapper 0 "$calls"
    run "$round" "$loop" interposed 0 "$calls"
    run "$round" "$loop" hooks 0 "$calls"
    run "$round" "$loop" interposed 1 "$calls"
    run "$round" "$loop" hooks 1 "$calls"
    run "$round" "$loop" interposed+waits 0 "$calls"
    run "$round" "$loop" hooks+waits 0 "$calls"
  done
  run "$round" progress no-check 0 "$progress"
  run "$round" progress hooks 0 "$progress"
  run "$round" progress no-check 1 "$progress"
  run "$round" progress hooks 1 "$progress"
  run "$round" progress-in-experiment hooks 1 "$timed"
done
load_after="$(bench_load)"

python3 - "$raw" "$cache/results.md" "$rounds" "$load_before" "$load_after" "$(bench_machine)" <<'PY'
import statistics, sys
from collections import defaultdict
raw, out, rounds, before, after, machine = sys.argv[1:]
runs = defaultdict(list)
hook = defaultdict(list)  # in-process difference to libc's own function
for line in open(raw).read().splitlines()[1:]:
    _, loop, way, exp, ns, libc = line.split('\t')
    runs[(loop, way, exp)].append(float(ns))
    if libc:
        hook[(loop, way, exp)].append(float(ns) - float(libc))
def diff(key):
    v = hook.get(key)
    if not v: return '-'
    return f"{statistics.median(v):+.1f} ({min(v):+.1f} to {max(v):+.1f})"
def cell(key):
    v = runs.get(key)
    if not v: return '-'
    return f"{statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f})"
def extra(key, base):
    a, b = runs.get(key), runs.get(base)
    if not a or not b: return '-'
    return f"{statistics.median(a) - statistics.median(b):+.1f}"
lines = [f"Nanoseconds per call in thread CPU time, median (min-max) over {rounds} rounds of the"
         f" fastest of 7 loops; {machine}; load average before {before}, after {after}.", ""]
lines += ["Each call: ns per call, and the in-process difference to libc.so.6's own function (the"
          " hook's cost; plain: both are libc's, the noise floor).", "",
          "| loop | way | no experiment | minus libc's | experiment, nothing owed | minus libc's |",
          "|---|---|---|---|---|---|"]
for loop, label in (("poll0", "poll(NULL, 0, 0)"), ("nanosleep", "nanosleep({0, -1})"),
                    ("mutex", "pthread_mutex_lock + unlock"), ("semaphore", "sem_post + sem_wait")):
    for way in ("plain", "empty-wrapper", "interposed", "hooks"):
        lines.append(f"| {label} | {way} | {cell((loop, way, '0'))} | {diff((loop, way, '0'))} | "
                     f"{cell((loop, way, '1')) if way in ('interposed', 'hooks') else ''} | "
                     f"{diff((loop, way, '1')) if way in ('interposed', 'hooks') else ''} |")
lines += ["", "With --waits (CAUSAL_WAITS=all), no experiment: ns per call minus libc's, and what"
          " --waits adds to it (per round, the difference to the same way without it in that"
          " round; median, min to max):", "",
          "| loop | way | minus libc's | minus libc's, --waits=all | --waits adds |",
          "|---|---|---|---|---|"]
def added(loop, way):
    a = {}
    for line in open(raw).read().splitlines()[1:]:
        r, l, w, e, ns, libc = line.split('\t')
        if l == loop and e == '0' and libc and w in (way, way + '+waits'):
            a.setdefault(r, {})[w] = float(ns) - float(libc)
    d = [v[way + '+waits'] - v[way] for v in a.values() if len(v) == 2]
    if not d: return '-'
    return f"{statistics.median(d):+.1f} ({min(d):+.1f} to {max(d):+.1f})"
for loop, label in (("poll0", "poll(NULL, 0, 0)"), ("nanosleep", "nanosleep({0, -1})"),
                    ("mutex", "pthread_mutex_lock + unlock"), ("semaphore", "sem_post + sem_wait")):
    for way in ("interposed", "hooks"):
        lines.append(f"| {label} | {way} | {diff((loop, way, '0'))} | "
                     f"{diff((loop, way + '+waits', '0'))} | {added(loop, way)} |")
lines += ["", "A throughput point (increment and one volatile add per iteration), with and without the"
          " settling check:", "",
          "| build | no experiment | experiment, nothing owed |", "|---|---|---|"]
for way, label in (("no-check", "increment only (before)"), ("hooks", "check + increment (after)")):
    lines.append(f"| {label} | {cell(('progress', way, '0'))} | {cell(('progress', way, '1'))} |")
lines.append(f"| check's cost | {extra(('progress', 'hooks', '0'), ('progress', 'no-check', '0'))} | "
             f"{extra(('progress', 'hooks', '1'), ('progress', 'no-check', '1'))} |")
lines += ["", "Every visit timed (an experiment of 20 s, 8 x N visits, under the 20,000 a second"
          " allowed): " f"{cell(('progress-in-experiment', 'hooks', '1'))} ns per visit;"
          f" the timing's cost over the check: "
          f"{extra(('progress-in-experiment', 'hooks', '1'), ('progress', 'hooks', '1'))} ns"]
open(out, 'w').write('\n'.join(lines) + '\n')
print('\n'.join(lines))
PY
