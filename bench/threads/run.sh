#!/usr/bin/env bash
# bench/threads/run.sh - what a thread costs under the profiler: per thread started, per live thread.
#
# README
#   Builds test/lit/faults/Inputs/signals_and_fds.c (the fault tests' program) plain (clang
#   -O1) and with -fcausal-profile, and runs, interleaved, --rounds rounds of:
#     short N 0      N threads one after another, each created and joined at once: the cost of
#                    a thread's start and end (perf_event_open, ring mmap, munmap, close)
#     many M US      M threads alive at once, each spins US us of CPU, then all end: the cost
#                    of many live threads, and whether samples follow CPU time
#   plain and profiled (the binary run directly, CAUSAL_OUTPUT to the cache), and with
#   --before-build also profiled by that build's runtime (the same binary, its libcausal_rt.so
#   through LD_LIBRARY_PATH). Figures: the median (min-max) over rounds of wall time and CPU
#   time (user + system, from /usr/bin/time), the median over rounds of each round's
#   profiled/plain ratio, the extra CPU per thread, and for the profiled runs the
#   profile's samples-expected and samples-arrived (docs/runtime.md, "Samples expected and
#   arrived"). Run time: about 1-2 minutes on 2 vCPUs; --quick: 1 round, smaller counts.
#
# usage: bench/threads/run.sh [--build-dir DIR] [--before-build DIR] [--cache-dir DIR]
#                             [--budget-s N] [--quick] [--rounds N] [--short N] [--many M]
#                             [--spin-us US]
#   --build-dir  causal build tree (default: $CAUSAL_BUILD_DIR, else ../../build)
#   --before-build  a second causal build (e.g. of the commit before a change): its runtime
#                is measured too (variant "before")
#   --cache-dir  binaries and results (default: <build-dir>/bench-cache/threads)
#   --budget-s   accepted for bench/run-all
#   --quick      1 round, 500 short threads, 1000 live threads
#   --rounds     interleaved rounds (default 3)
#   --short      threads of the start/end case (default 2000)
#   --many       live threads of the many-threads case (default 5000)
#   --spin-us    CPU each live thread spins (default 200)
# Results: stdout and <cache-dir>/results.md (Markdown).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
rounds=3 short=2000 many=5000 spin_us=200 quick=0 budget="" before=""
bench_args "--before-build=before --budget-s=budget --quick=quick! --rounds=rounds \
  --short=short --many=many --spin-us=spin_us" "$@"
if [ "$quick" = 1 ]; then rounds=1; short=500; many=1000; fi
bench_positive --rounds "$rounds"
bench_positive --short "$short"
bench_positive --many "$many"
variants="plain prof"
if [ -n "$before" ]; then
  before="$(cd "$before" && pwd)"
  [ -f "$before/lib/libcausal_rt.so" ] ||
    { echo "run.sh: --before-build $before: no lib/libcausal_rt.so there" >&2; exit 2; }
  variants="plain before prof"
fi
bench_setup threads "profiles out" bin/causal-clang
source_c="$src/test/lit/faults/Inputs/signals_and_fds.c"
"$build/bin/causal-clang" -fcausal-profile -O1 -pthread "$source_c" -o "$cache/prof"
"$clang" -O1 -pthread "$source_c" -o "$cache/plain"
bench_mark_start

# run VARIANT CASE ARGS... -> appends "case variant wall cpu expected arrived" to rounds.tsv
run() {
  local variant="$1" case="$2" t
  shift 2
  t="$cache/out/time.txt"
  rm -f "$cache/profiles/p.coz"
  local binary="$cache/$variant" env=()
  [ "$variant" != before ] || { binary="$cache/prof"; env=("LD_LIBRARY_PATH=$before/lib"); }
  env "${env[@]}" CAUSAL_OUTPUT="$cache/profiles/p.coz" /usr/bin/time -f '%e %U %S' -o "$t" \
    "$binary" "$@" >/dev/null 2>"$cache/out/$variant.err"
  read -r wall user sys <"$t"
  local expected=- arrived=-
  if [ "$variant" != plain ] && [ -f "$cache/profiles/p.coz" ]; then
    expected="$(sed -n 's/.*samples-expected=\([0-9]*\).*/\1/p' "$cache/profiles/p.coz" | tail -1)"
    arrived="$(sed -n 's/.*samples-arrived=\([0-9]*\).*/\1/p' "$cache/profiles/p.coz" | tail -1)"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$variant" "$wall" \
    "$(echo "$user + $sys" | bc -l)" "${expected:--}" "${arrived:--}" >>"$cache/rounds.tsv"
}

printf 'case\tvariant\twall_s\tcpu_s\texpected\tarrived\n' >"$cache/rounds.tsv"
for ((r = 1; r <= rounds; r++)); do
  for variant in $variants; do
    run "$variant" short short "$short" 0
    run "$variant" many many "$many" "$spin_us"
  done
done

python3 - "$cache/rounds.tsv" "$short" "$many" "$spin_us" "$rounds" "$variants" \
  >"$cache/results.md" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
short, many, spin, rounds = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
profiled = [v for v in sys.argv[6].split() if v != "plain"]
names = {"prof": "profiled", "before": "profiled, before"}
def vals(case, variant, col):
    return [float(r[col]) for r in rows if r[0] == case and r[1] == variant and r[col] != "-"]
def med(case, variant, col):
    v = vals(case, variant, col)
    return statistics.median(v) if v else float("nan")
def spread(case, variant, col):
    v = vals(case, variant, col)
    return "%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v)) if v else "-"
def ratio(case, variant, col):
    # Each round's profiled run over the plain run of the same round.
    plain = vals(case, "plain", col)
    prof = vals(case, variant, col)
    return statistics.median(q / p for p, q in zip(plain, prof)) if plain and prof else float("nan")
print("| case | runtime | wall (s) | CPU (s) | ratio wall / CPU | extra CPU per thread | samples expected / arrived |")
print("|---|---|---|---|---|---|---|")
for case, label, n in (("short", "%s threads started and joined one by one" % short, int(short)),
                       ("many", "%d threads alive at once, %s us of CPU each" % (many, spin), many)):
    print("| %s | plain | %s | %s | | | |" % (label, spread(case, "plain", 2), spread(case, "plain", 3)))
    for v in profiled:
        print("| | %s | %s | %s | %.2f / %.2f | %.0f us | %.0f / %.0f |" % (
            names[v], spread(case, v, 2), spread(case, v, 3), ratio(case, v, 2), ratio(case, v, 3),
            (med(case, v, 3) - med(case, "plain", 3)) / n * 1e6, med(case, v, 4), med(case, v, 5)))
print()
print("Median (min-max) of %s interleaved round(s); ratios: the median of each round's profiled"
      " over plain run." % rounds)
PY
cat "$cache/results.md"
