#!/usr/bin/env bash
# bench/paths-sqlite/run.sh - call paths of two SQLite functions: what they cost, what they say.
#
# README
#   bench/sqlite's workload (insert_workload.c: threads inserting rows, SQLite amalgamation
#   fetched by bench/common/fetch-sqlite.sh) with sqlite3_mutex_enter and sqlite3Malloc chosen
#   for call-path profiling (issue 13): the two shared helpers at the top of SQLite's causal
#   profile, whose callers a user needs to know. Builds of the same sources (SQLITE_PRIVATE
#   defined empty, so that internal functions have addresses the -finstrument-functions hooks
#   can compare with):
#     plain     clang -O2
#     causal    causal-clang -fcausal-profile -O2 (no function chosen)
#     chosen    causal-clang -fcausal-profile -fcausal-paths=sqlite3_mutex_enter,sqlite3Malloc -O2
#     cyg       clang -O2 -finstrument-functions (every function calls a hook at entry and
#               exit; the hooks, cyg_hooks.c, count the two chosen functions' entries)
#     xray      clang -O2 -fxray-instrument with xray-attr-list.txt (only the two functions)
#   and runs of the same fixed work (every thread inserts --rows rows), in interleaved rounds:
#     plain, causal (causal run), chosen-off (causal run, paths not enabled),
#     chosen-on (causal run --paths: walks sampled where a function is hot, the default
#     --paths-walk-one-in auto), chosen-exact (--paths-walk-one-in 1: every entry walked),
#     chosen-walk16 and chosen-walk64 (--paths-walk-one-in 16 / 64: the stack walked at 1 entry
#     in K; docs/paths.md "Sampled walks"), chosen-cpu (causal run --paths --paths-cpu-clock),
#     cyg, xray-off (sleds unpatched), xray-on (XRay's profiling mode: call trees).
#   Every causal run has experiments off (CAUSAL_EXPERIMENTS=0: sampling only), so the
#   differences are the paths' alone. Each run's output must equal plain's.
#   Tables: wall time per variant (median, range) and its ratio to the variant it adds to
#   (chosen-off / causal, chosen-on / chosen-off, ...), the entries counted, and the per-caller
#   split of both functions from `causal paths report` of the last chosen-on run.
#   Run time: about 2 minutes to build (five -O2 builds of sqlite3.c), then about 8 x --reps
#   x (a plain run's time).
#   --curves S: causal curves per caller (issue 13, experiments per calling context), after the
#   cost rounds (or alone with --skip-cost). A sampling run of S seconds (chosen build, --paths,
#   no experiments) finds each chosen function's most sampled line (the profile's `samples`
#   records name their function) and its three immediate callers with the most samples (`causal
#   paths report --json`: the callers tree's first level). Then, for each function, runs of S
#   seconds each: `causal run --fixed-line LINE` (the whole line) and `causal run --fixed-line
#   LINE --path CALLER` per caller, speedups drawn by Coz's rule, all into one profile read by
#   `causal report --json`: one curve per caller under the line. Adds 9 x S seconds.
#
# usage: bench/paths-sqlite/run.sh [--build-dir DIR] [--cache-dir DIR] [--threads N]
#                                  [--rows N] [--reps N] [--quick] [--curves S] [--skip-cost]
#   --threads  inserting threads (default 4)
#   --rows     rows per thread (default 30000)
#   --reps     rounds (default 3)
#   --quick    smoke run: 3,000 rows per thread, one round
#   --curves   seconds of each run of the per-caller curves (default 0: none)
#   --skip-cost  no cost rounds (with --curves: the curves only)
# Results: <cache-dir>/results.md, raw data in <cache-dir>/runs.tsv, the paths reports in
# <cache-dir>/out/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
threads=4 rows=30000 reps=3 quick=0 curves=0 skip_cost=0
bench_args "--threads=threads --rows=rows --reps=reps --quick=quick! --curves=curves \
  --skip-cost=skip_cost!" "$@"
if [ "$quick" = 1 ]; then rows=3000 reps=1; fi
bench_positive --threads "$threads"
bench_positive --rows "$rows"
bench_positive --reps "$reps"
bench_setup paths-sqlite "bin obj out profiles" bin/causal bin/causal-clang

sqlite="$("$here/../common/fetch-sqlite.sh" "$build/bench-cache/sqlite")"
sqlite_version="$(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$sqlite/sqlite3.h")"
# SQLITE_PRIVATE empty: SQLite's internal functions (sqlite3Malloc is one) get external linkage in
# every build, so that the -finstrument-functions hooks can compare with sqlite3Malloc's address.
defs=(-DSQLITE_THREADSAFE=1 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_DQS=0 -DSQLITE_PRIVATE=)
workload="$here/../sqlite/insert_workload.c"
chosen_fns=sqlite3_mutex_enter,sqlite3Malloc
build_log="$cache/build.log"
: >"$build_log"
flags_of() {
  case "$1" in
    plain) echo "$clang -O2" ;;
    causal) echo "$build/bin/causal-clang -fcausal-profile -O2" ;;
    chosen) echo "$build/bin/causal-clang -fcausal-profile -fcausal-paths=$chosen_fns -O2" ;;
    cyg) echo "$clang -O2 -finstrument-functions" ;;
    xray) echo "$clang -O2 -fxray-instrument -fxray-instruction-threshold=1 -fxray-attr-list=$here/xray-attr-list.txt" ;;
  esac
}
builds="plain causal chosen cyg xray"
build_one() { # variant
  local -a cmd extra=()
  read -r -a cmd <<<"$(flags_of "$1")"
  (set -x; "${cmd[@]}" "${defs[@]}" -I"$sqlite" -c "$sqlite/sqlite3.c" -o "$cache/obj/sqlite3.$1.o") \
    >"$build_log.$1" 2>&1 || return 1
  case "$1" in
    cyg) extra=("$here/cyg_hooks.c" "$here/cyg_choose.c") ;;
  esac
  # The workload itself is compiled the same way, except the hooks' files (no
  # instrumentation of their own: no_instrument_function).
  (set -x; "${cmd[@]}" -I"$sqlite" -I"$src/include" "$workload" "${extra[@]}" \
     "$cache/obj/sqlite3.$1.o" -pthread -o "$cache/bin/insert_workload.$1") >>"$build_log.$1" 2>&1
}
echo "building sqlite3.c five ways (log: $build_log)" >&2
failed=0
set -- $builds
while [ $# -gt 0 ]; do
  build_one "$1" & p1=$!
  p2=""
  if [ $# -ge 2 ]; then build_one "$2" & p2=$!; fi
  wait "$p1" || failed=1
  [ -z "$p2" ] || wait "$p2" || failed=1
  shift; [ $# -eq 0 ] || shift
done
cat "$build_log".* >>"$build_log" 2>/dev/null || true
rm -f "$build_log".*
[ "$failed" = 0 ] || { echo "run.sh: building failed, see $build_log" >&2; exit 1; }

# ---- Per-caller causal curves (--curves) -------------------------------------------------
per_caller_curves() {
  local dir="$cache/curves" bin="$cache/bin/insert_workload.chosen" fn line caller
  mkdir -p "$dir"
  rm -f "$dir"/*
  echo "per-caller curves: sampling run of $curves s" >&2
  env CAUSAL_EXPERIMENTS=0 "$causal" run --quiet --paths --output "$dir/sample.coz" -- \
    "$bin" "$threads" 1000000000 "$curves" >/dev/null 2>"$dir/sample.err"
  for fn in sqlite3_mutex_enter sqlite3Malloc; do
    "$causal" paths report "$dir/sample.coz" --function "$fn" --json --metric samples \
      >"$dir/paths.$fn.json" 2>>"$dir/sample.err"
  done
  # One line per function: FUNCTION<TAB>FILE:LINE<TAB>CALLER<TAB>CALLER...
  python3 - "$dir" >"$dir/plan.tsv" <<'PY'
import json, os, re, sys
d = sys.argv[1]
best = {}
for line in open(os.path.join(d, "sample.coz")):
    if not line.startswith("samples\t"):
        continue
    f = dict(x.split("=", 1) for x in line.rstrip("\n").split("\t")[1:] if "=" in x)
    fn, n = f.get("function"), int(f.get("count", "0"))
    if fn and n > best.get(fn, ("", 0))[1]:
        best[fn] = (f["location"], n)
for fn in ["sqlite3_mutex_enter", "sqlite3Malloc"]:
    if fn not in best:
        continue
    report = json.load(open(os.path.join(d, "paths.%s.json" % fn)))
    callers = []
    for function in report.get("functions", []):
        tree = function.get("tree") or {}
        kids = sorted(tree.get("children", []), key=lambda k: -k.get("samples", 0))
        callers += [k["function"] for k in kids if k.get("function")][:3]
    print("\t".join([fn, best[fn][0]] + callers))
PY
  while IFS=$'\t' read -r -a plan; do
    fn="${plan[0]}" line="${plan[1]}"
    for caller in "" "${plan[@]:2}"; do
      echo "  $fn: $line ${caller:+via $caller} ($(date -u +%H:%M:%S))" >&2
      env "$causal" run --quiet --output "$dir/curves.coz" --fixed-line "$line" \
        ${caller:+--path "$caller"} -- "$bin" "$threads" 1000000000 "$curves" \
        >/dev/null 2>>"$dir/runs.err" || echo "  (exit status $?)" >&2
    done
  done <"$dir/plan.tsv"
  "$causal" report --json --top 0 --min-speedups 2 "$dir/curves.coz" >"$dir/curves.json" \
    2>"$dir/report.err" || true
  python3 - "$dir" <<'PY' >"$cache/curves.md"
import json, os, sys
d = sys.argv[1]
report = json.load(open(os.path.join(d, "curves.json")))
lines = {e["line"]: e for e in report.get("lines", [])}
print("Per-caller causal curves (fixed-line runs of the same length; the line's whole curve first).")
print()
print("| function | line | context | calls share | samples share | experiments | slope (95 % CI) | largest predicted speedup |")
print("|---|---|---|---|---|---|---|---|")
for row in open(os.path.join(d, "plan.tsv")):
    fn, line, *callers = row.rstrip("\n").split("\t")
    paths = json.load(open(os.path.join(d, "paths.%s.json" % fn)))
    shares = {}
    for function in paths.get("functions", []):
        for k in (function.get("tree") or {}).get("children", []):
            shares[k.get("function")] = k.get("shares", {})
    for caller in [""] + callers:
        name = line + (" (via %s)" % caller if caller else "")
        e = lines.get(name)
        short = os.path.basename(line)
        share = shares.get(caller, {}) if caller else {}
        fmt = lambda x: "%.0f %%" % (100 * x) if isinstance(x, (int, float)) else ""
        if not e:
            print("| %s | %s | %s | %s | %s | 0 | - | - |" % (fn, short, caller or "(whole line)",
                  fmt(share.get("calls")), fmt(share.get("samples"))))
            continue
        p = e["points"][0]
        ci = p.get("slope_ci") or [None, None]
        slope = "%+.2f" % p["slope"] if p.get("slope") is not None else "-"
        if ci[0] is not None:
            slope += " (%+.2f..%+.2f)" % (ci[0], ci[1])
        top = "%+.1f %% at %.0f %%" % (100 * p.get("max_impact", 0), 100 * p.get("max_impact_speedup", 0)) \
            if p.get("max_impact") is not None else "-"
        print("| %s | %s | %s | %s | %s | %d | %s | %s |" % (fn, short, caller or "(whole line)",
              fmt(share.get("calls")), fmt(share.get("samples")), e["experiments"], slope, top))
PY
  cat "$cache/curves.md"
}
if [ "$skip_cost" = 1 ]; then
  [ "$curves" -gt 0 ] && per_caller_curves
  exit 0
fi

runs="$cache/runs.tsv"
bench_fresh_runs "$runs" 'round\tvariant\tns\tstatus\tsame_output'
rm -f "$cache/out/"*
run_variant() { # variant round
  local v="$1" round="$2" bin out err profile start end status=0
  case "$v" in
    plain | causal | cyg) bin="$cache/bin/insert_workload.$v" ;;
    chosen-*) bin="$cache/bin/insert_workload.chosen" ;;
    xray-*) bin="$cache/bin/insert_workload.xray" ;;
  esac
  out="$cache/out/$v.$round.txt" err="$cache/out/$v.$round.err" profile="$cache/profiles/$v.$round.coz"
  rm -f "$profile" "$profile.paths"
  start=$(date +%s%N)
  case "$v" in
    plain | cyg) "$bin" "$threads" "$rows" >"$out" 2>"$err" || status=$? ;;
    xray-off) env XRAY_OPTIONS="patch_premain=false" "$bin" "$threads" "$rows" >"$out" 2>"$err" || status=$? ;;
    xray-on) env XRAY_OPTIONS="patch_premain=true xray_mode=xray-profiling verbosity=0 xray_logfile_base=$cache/out/xray-$round." \
      "$bin" "$threads" "$rows" >"$out" 2>"$err" || status=$? ;;
    causal | chosen-off) env CAUSAL_EXPERIMENTS=0 "$causal" run --quiet --output "$profile" -- \
      "$bin" "$threads" "$rows" >"$out" 2>"$err" || status=$? ;;
    chosen-on) env CAUSAL_EXPERIMENTS=0 "$causal" run --quiet --paths --output "$profile" -- \
      "$bin" "$threads" "$rows" >"$out" 2>"$err" || status=$? ;;
    chosen-cpu) env CAUSAL_EXPERIMENTS=0 "$causal" run --quiet --paths --paths-cpu-clock \
      --output "$profile" -- "$bin" "$threads" "$rows" >"$out" 2>"$err" || status=$? ;;
    chosen-exact) env CAUSAL_EXPERIMENTS=0 "$causal" run --quiet --paths --paths-walk-one-in 1 \
      --output "$profile" -- "$bin" "$threads" "$rows" >"$out" 2>"$err" || status=$? ;;
    chosen-walk*) env CAUSAL_EXPERIMENTS=0 "$causal" run --quiet --paths \
      --paths-walk-one-in "${v#chosen-walk}" --output "$profile" -- "$bin" "$threads" "$rows" \
      >"$out" 2>"$err" || status=$? ;;
  esac
  end=$(date +%s%N)
  local same=0
  cmp -s "$out" "$cache/out/plain.ref.txt" && same=1
  printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$v" "$((end - start))" "$status" "$same" >>"$runs"
}
"$cache/bin/insert_workload.plain" "$threads" "$rows" >"$cache/out/plain.ref.txt"
variants="plain causal chosen-off chosen-on chosen-exact chosen-walk16 chosen-walk64 chosen-cpu"
variants="$variants cyg xray-off xray-on"
read -r -a variant_list <<<"$variants"
n=${#variant_list[@]}
for round in $(seq 1 "$reps"); do
  for k in $(seq 0 $((n - 1))); do
    run_variant "${variant_list[$(((k + round - 1) % n))]}" "$round"
  done
  echo "  round $round done ($(date -u +%H:%M:%S))" >&2
done
load_after="$(bench_load)"
for fn in sqlite3_mutex_enter sqlite3Malloc; do
  "$causal" paths report "$cache/profiles/chosen-on.$reps.coz" --function "$fn" \
    >"$cache/out/paths.$fn.txt" 2>&1 || true
  "$causal" paths report "$cache/profiles/chosen-exact.$reps.coz" --function "$fn" --depth 1 \
    >"$cache/out/paths-exact.$fn.txt" 2>&1 || true
  "$causal" paths report "$cache/profiles/chosen-on.$reps.coz" --function "$fn" --folded \
    --metric calls >"$cache/out/paths.$fn.folded" 2>&1 || true
done

bench_context_header "$started" "$load_before" "$load_after" \
  "$threads threads, $rows rows each, $reps interleaved rounds; causal runs with experiments off" \
  "SQLite $sqlite_version"
python3 - "$cache" "$reps" <<'PY' >"$cache/results.md"
import csv, os, re, statistics, sys

cache, reps = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(open(os.path.join(cache, "runs.tsv")), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault(r["variant"], []).append(int(r["ns"]) / 1e9)
base = {"causal": "plain", "chosen-off": "causal", "chosen-on": "chosen-off", "chosen-cpu": "chosen-off",
        "chosen-exact": "chosen-off", "chosen-walk16": "chosen-off", "chosen-walk64": "chosen-off",
        "cyg": "plain", "xray-off": "plain", "xray-on": "xray-off"}
what = {
    "plain": "clang -O2",
    "causal": "causal run, nothing chosen",
    "chosen-off": "two functions chosen, paths not enabled",
    "chosen-on": "causal run --paths (walks sampled where hot: --paths-walk-one-in auto)",
    "chosen-exact": "causal run --paths --paths-walk-one-in 1 (every entry walked)",
    "chosen-cpu": "causal run --paths --paths-cpu-clock",
    "chosen-walk16": "causal run --paths --paths-walk-one-in 16",
    "chosen-walk64": "causal run --paths --paths-walk-one-in 64",
    "cyg": "-finstrument-functions, every function",
    "xray-off": "-fxray-instrument on the two, unpatched",
    "xray-on": "XRay profiling mode (call trees) on the two",
}
print(os.environ.get("BENCH_HEADER", ""))
print()
# The ratio of each round's run to its base's in the same round (the rounds run the variants
# in turn, so a VM's speed swings hit both alike), median (range) over the rounds.
by_round = {}
for r in rows:
    by_round[(r["variant"], r["round"])] = int(r["ns"]) / 1e9
def round_ratios(v, b):
    return [by_round[(v, k)] / by_round[(b, k)] for (w, k) in by_round
            if w == v and (b, k) in by_round]
print("| variant | what | wall s, median (range) | ratio | to | per-round ratio, median (range) | all outputs same |")
print("|---|---|---|---|---|---|---|")
for v in ["plain", "causal", "chosen-off", "chosen-on", "chosen-exact", "chosen-walk16", "chosen-walk64",
          "chosen-cpu",
          "cyg", "xray-off", "xray-on"]:
    t = by.get(v, [])
    if not t:
        continue
    med = statistics.median(t)
    ratio, to, paired = "", "", ""
    if v in base and by.get(base[v]):
        ratio = "%.3f" % (med / statistics.median(by[base[v]]))
        to = base[v]
        pr = round_ratios(v, base[v])
        if pr:
            paired = "%.3f (%.3f-%.3f)" % (statistics.median(pr), min(pr), max(pr))
    same = all(r["same_output"] == "1" and r["status"] == "0" for r in rows if r["variant"] == v)
    print("| %s | %s | %.2f (%.2f-%.2f) | %s | %s | %s | %s |" % (v, what[v], med, min(t), max(t), ratio,
                                                               to, paired, "yes" if same else "NO"))
print()
for fn in ["sqlite3_mutex_enter", "sqlite3Malloc"]:
    for name, args, variant in [("paths", "", "chosen-on"), ("paths-exact", " --depth 1", "chosen-exact")]:
        path = os.path.join(cache, "out", "%s.%s.txt" % (name, fn))
        if os.path.exists(path):
            print("`causal paths report --function %s%s` (last %s run):" % (fn, args, variant))
            print()
            print("```")
            print(open(path).read().rstrip())
            print("```")
            print()
cyg = [l for l in open(os.path.join(cache, "out", "cyg.%d.err" % reps)) if l.startswith("cyg entries")] \
    if os.path.exists(os.path.join(cache, "out", "cyg.%d.err" % reps)) else []
if cyg:
    print("-finstrument-functions hooks counted: " + cyg[-1].strip())
PY
cat "$cache/results.md"
[ "$curves" -gt 0 ] && per_caller_curves
exit 0
