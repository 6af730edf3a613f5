#!/usr/bin/env bash
# bench/sqlite/run.sh - SQLite profiled end to end, by causal and by Coz, on the same workload.
#
# README
#   The SQLite amalgamation (npm better-sqlite3, deps/sqlite3/sqlite3.c, fetched once by
#   bench/common/fetch-sqlite.sh into the cache) linked with insert_workload.c: a write-intensive
#   parallel workload after the Coz paper's SQLite case (each thread inserts rows into its own
#   table, one autocommit transaction per row, a progress point after every insert), built three
#   ways from the same source:
#     plain   clang -O2                                                ./prog ARGS
#     causal  causal-clang -fcausal-profile -O2                       causal run -- ./prog ARGS
#     coz     clang -O2 -g -gdwarf-4, the progress point mapped to coz.h by the force-included
#             bench/overhead/coz_shim.h                              coz run --- ./prog ARGS
#   (1) Profiles: causal and Coz each profile a run of the same length (--seconds, default 60 s:
#       the workload stops inserting at that time), with the profiler's defaults (experiments may
#       select any line of the program's sources, sqlite3.c included). Each profile is read with
#       `causal report --json` (it reads Coz's profiles too): the top lines (slope, largest
#       predicted program speed-up and the line speed-up where it was seen, experiments), how
#       many experiments ran and how many selected a sqlite3.c line. Throughput: rows inserted
#       per second during each profiled run, against plain runs of --seconds/8 just before and
#       just after them.
#   (2) Fixed work: every variant inserts the same rows (--check-rows per thread), in
#       interleaved rounds: wall time, ratio to plain, and the output, which must equal plain's
#       (a checksum of the tables; each thread also verifies its table's contents).
#   --before-build DIR adds a variant `before`: the same, built and profiled with another causal
#   build (e.g. of the commit before a change), so that the two profilers' top lines can be put
#   side by side from the same conditions. --change "FLAGS" adds a variant `changed`: the plain
#   build with FLAGS added to sqlite3.c's compilation (a real change, e.g.
#   -DSQLITE_DEFAULT_MEMSTATUS=0), timed in the fixed-work rounds: the true effect of the change
#   a profile suggests, next to what it predicted.
#   Run time: about 1.5 min to build (three -O2 builds of sqlite3.c, two at a time), 2.25 x
#   --seconds for (1), under a minute for (2): about 5 minutes by default. --quick: about 1 min
#   with cached objects (rebuilds them only if missing), 6 s profiles.
#
# usage: bench/sqlite/run.sh [--build-dir DIR] [--cache-dir DIR] [--budget-s N] [--quick]
#                            [--threads N] [--seconds S] [--check-rows N] [--reps N] [--skip-coz]
#                            [--before-build DIR] [--change FLAGS]
#   --build-dir   causal build tree or install prefix (default: $CAUSAL_BUILD_DIR, else
#                 ../../build relative to this script)
#   --cache-dir   binaries, profiles and results (default: <build-dir>/bench-cache/sqlite-profile);
#                 the SQLite sources are cached in <build-dir>/bench-cache/sqlite
#   --budget-s    time budget; sets --seconds to (budget - 180) / 3, within 10-90 (default 360)
#   --quick       smoke run: 6 s profiles, 1 fixed-work round, cached objects reused
#   --threads     inserting threads (default 4)
#   --seconds     length of each profiled run
#   --check-rows  rows per thread of the fixed-work runs (default 60000)
#   --reps        fixed-work rounds (default 3)
#   --skip-coz    leave out the Coz variant
#   --before-build  a second causal build tree, profiled too (variant `before`)
#   --change      compiler flags for sqlite3.c of variant `changed` (plain otherwise)
# Results: <cache-dir>/results.md (Markdown), raw data in <cache-dir>/runs.tsv and
# <cache-dir>/top-lines.tsv, profiles in <cache-dir>/profiles/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
budget=360 quick=0 threads=4 seconds="" check_rows=60000 reps=3 skip_coz=0 before="" change=""
bench_args "--budget-s=budget --quick=quick! --threads=threads --seconds=seconds \
  --check-rows=check_rows --reps=reps --skip-coz=skip_coz! --before-build=before --change=change" "$@"
bench_positive --budget-s "$budget"
bench_positive --threads "$threads"
bench_positive --check-rows "$check_rows"
bench_positive --reps "$reps"
bench_positive --seconds "${seconds:-1}"
if [ "$quick" = 1 ]; then
  seconds="${seconds:-6}"
  reps=1
  check_rows=5000
fi
if [ -z "$seconds" ]; then
  seconds=$(((budget - 180) / 3))
  [ "$seconds" -ge 10 ] || seconds=10
  [ "$seconds" -le 90 ] || seconds=90
fi
plain_seconds=$(((seconds + 7) / 8))
bench_setup sqlite-profile "bin obj profiles out" bin/causal bin/causal-clang
bench_check_coz
variants="plain causal$with_coz"
if [ -n "$before" ]; then
  before="$(cd "$before" && pwd)"
  for tool in causal causal-clang; do
    [ -x "$before/bin/$tool" ] || { echo "run.sh: --before-build: no $before/bin/$tool" >&2; exit 2; }
  done
  variants="$variants before"
fi
[ -z "$change" ] || variants="$variants changed"

# ---- build -------------------------------------------------------------------------------
sqlite="$("$here/../common/fetch-sqlite.sh" "$build/bench-cache/sqlite")"
sqlite_version="$(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$sqlite/sqlite3.h")"
defs=(-DSQLITE_THREADSAFE=1 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_DQS=0)
workload="$here/insert_workload.c"
build_log="$cache/build.log"
: >"$build_log"
flags_of() {
  case "$1" in
    plain) echo "$clang -O2" ;;
    causal) echo "$build/bin/causal-clang -fcausal-profile -O2" ;;
    coz) echo "$clang -O2 -g -gdwarf-4" ;;
    before) echo "$before/bin/causal-clang -fcausal-profile -O2" ;;
    changed) echo "$clang -O2 $change" ;;
  esac
}
compile_sqlite() { # variant
  local obj="$cache/obj/sqlite3.$1.o"
  if [ "$quick" = 1 ] && [ -f "$obj" ]; then return 0; fi
  local -a cmd
  read -r -a cmd <<<"$(flags_of "$1")"
  (set -x; "${cmd[@]}" "${defs[@]}" -I"$sqlite" -c "$sqlite/sqlite3.c" -o "$obj.tmp") \
    >>"$build_log.$1" 2>&1 && mv "$obj.tmp" "$obj"
}
echo "building sqlite3.c three ways (log: $build_log)" >&2
rm -f "$build_log".*
build_failed=0
compile_sqlite causal & pid_causal=$!
{ compile_sqlite plain && { [ "$skip_coz" = 1 ] || compile_sqlite coz; }; } & pid_rest=$!
wait "$pid_causal" || build_failed=1
wait "$pid_rest" || build_failed=1
for v in before changed; do
  case " $variants " in *" $v "*) compile_sqlite "$v" || build_failed=1 ;; esac
done
cat "$build_log".* >>"$build_log" 2>/dev/null || true
rm -f "$build_log".*
for v in $variants; do
  read -r -a cmd <<<"$(flags_of "$v")"
  extra=()
  [ "$v" != coz ] || extra=(-include "$here/../overhead/coz_shim.h" -ldl)
  (set -x; "${cmd[@]}" -I"$sqlite" -I"$src/include" "${extra[@]}" "$workload" \
     "$cache/obj/sqlite3.$v.o" -pthread -o "$cache/bin/insert_workload.$v") >>"$build_log" 2>&1 ||
    build_failed=1
done
if [ "$build_failed" = 1 ]; then
  echo "run.sh: building failed, see $build_log" >&2
  exit 1
fi

# ---- runs --------------------------------------------------------------------------------
# run_one VARIANT TAG ARGS...: runs the workload; prints "wall_ns status rows_per_second".
# Standard output to out/TAG.txt, standard error (profiler messages too) to out/TAG.err.
run_one() {
  local variant="$1" tag="$2"
  shift 2
  local bin="$cache/bin/insert_workload.$variant" out="$cache/out/$tag.txt" err="$cache/out/$tag.err"
  local profile="$cache/profiles/$tag.coz" start end status=0
  rm -f "$profile"
  start=$(date +%s%N)
  case "$variant" in
    plain | changed) "$bin" "$@" >"$out" 2>"$err" || status=$? ;;
    causal) "$causal" run --quiet --output "$profile" -- "$bin" "$@" >"$out" 2>"$err" || status=$? ;;
    before) "$before/bin/causal" run --output "$profile" -- "$bin" "$@" >"$out" 2>"$err" ||
      status=$? ;;
    coz) coz run -o "$profile" --- "$bin" "$@" >"$out" 2>"$err" || status=$? ;;
  esac
  end=$(date +%s%N)
  local rate
  rate="$(sed -n 's/^rows=.* rows_per_second=\([0-9]*\)$/\1/p' "$err" | tail -n 1)"
  echo "$((end - start)) $status ${rate:--}"
}

rm -f "$cache/out/"* "$cache/profiles/"*
runs="$cache/runs.tsv"
printf 'kind\tround\tvariant\tns\tstatus\trows_per_second\tsame_output\n' >"$runs"
record() { # kind round variant tag args...
  local kind="$1" round="$2" variant="$3" tag="$4"
  shift 4
  local ns status rate same=0
  read -r ns status rate <<<"$(run_one "$variant" "$tag" "$@")"
  cmp -s "$cache/out/$tag.txt" "$cache/out/$kind.plain.ref.txt" && same=1
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$round" "$variant" "$ns" "$status" "$rate" \
    "$same" >>"$runs"
}
bench_mark_start
t0=$(date +%s)

# (1) profiles of equal length, plain throughput measured before and after each.
echo "profiles: $seconds s each, $threads threads" >&2
run_one plain profile.plain.ref "$threads" 1000000000 "$plain_seconds" >/dev/null
for v in $variants; do
  [ "$v" != plain ] && [ "$v" != changed ] || continue
  record profile 1 plain "profile.plain.before-$v" "$threads" 1000000000 "$plain_seconds"
  record profile 1 "$v" "profile.$v" "$threads" 1000000000 "$seconds"
  record profile 1 plain "profile.plain.after-$v" "$threads" 1000000000 "$plain_seconds"
  echo "  $v done ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

# (2) fixed work, interleaved rounds, the variant order rotating.
echo "fixed work: $reps rounds of $check_rows rows per thread" >&2
run_one plain check.plain.ref "$threads" "$check_rows" >/dev/null
read -r -a variant_list <<<"$variants"
nvariants=${#variant_list[@]}
for round in $(seq 1 "$reps"); do
  for k in $(seq 0 $((nvariants - 1))); do
    v="${variant_list[$(((k + round - 1) % nvariants))]}"
    record check "$round" "$v" "check.$v.$round" "$threads" "$check_rows"
  done
done
load_after="$(bench_load)"
echo "runs took $(($(date +%s) - t0)) s" >&2

# ---- the tables --------------------------------------------------------------------------
for v in $variants; do
  reader="$causal"
  [ "$v" != before ] || reader="$before/bin/causal"
  [ ! -f "$cache/profiles/profile.$v.coz" ] ||
    "$reader" report --json --top 0 "$cache/profiles/profile.$v.coz" \
      >"$cache/profiles/profile.$v.json" 2>"$cache/profiles/profile.$v.report.err" || true
done
bench_context_header "$started" "$load_before" "$load_after" \
  "$threads threads; profiles of $seconds s, plain throughput runs of $plain_seconds s; fixed work $check_rows rows per thread, $reps rounds${before:+; before: $before ($(git -C "$before" log -1 --format=%h 2>/dev/null || echo "not a git tree"))}${change:+; changed: plain with $change}" "SQLite $sqlite_version"
SQLITE_CHANGE="$change" python3 - "$cache" "$sqlite/sqlite3.c" "$variants" <<'EOF' >"$cache/results.md"
import csv, json, os, statistics, sys

cache, sqlite_c, variants = sys.argv[1], sys.argv[2], sys.argv[3].split()
rows = list(csv.DictReader(open(os.path.join(cache, "runs.tsv")), delimiter="\t"))
sqlite_lines = open(sqlite_c, errors="replace").read().split("\n")
name = {"plain": "plain", "causal": "causal", "coz": "Coz", "before": "causal before",
        "changed": "plain, changed"}


def med(values, fmt):
    if not values:
        return "-"
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(values), min(values), max(values))


def enclosing_function(lines, index):
    # The nearest definition above: a line at column 0 with "name(" that is not a
    # declaration, preprocessor line or comment (SQLite's and the workload's style).
    for i in range(index, max(index - 4000, -1), -1):
        text = lines[i]
        if text[:1].isalpha() and "(" in text and not text.rstrip().endswith(";"):
            head = text.split("(", 1)[0].split()
            if head and head[-1].lstrip("*").isidentifier():
                return head[-1].lstrip("*")
    return ""


def source_text(location):
    path, _, line = location.rpartition(":")
    lines = []
    if os.path.basename(path) == "sqlite3.c":
        lines = sqlite_lines
    elif os.path.exists(path):
        lines = open(path, errors="replace").read().split("\n")
    text = ""
    if line.isdigit() and 0 < int(line) <= len(lines):
        text = lines[int(line) - 1].strip()
        function = enclosing_function(lines, int(line) - 1)
        if function:
            text = function + ": " + text
    if line == "0":
        return "(line 0: code without a line)"
    text = text.replace("|", "\\|").replace("`", "'")
    return (text[:57] + "...") if len(text) > 60 else text


def experiments_in(profile):
    total = in_sqlite = 0
    selected = set()
    if os.path.exists(profile):
        for line in open(profile, errors="replace"):
            if line.startswith("experiment\t"):
                fields = dict(f.split("=", 1) for f in line.rstrip("\n").split("\t")[1:] if "=" in f)
                where = fields.get("selected", "")
                total += 1
                selected.add(where)
                in_sqlite += os.path.basename(where.rpartition(":")[0]) == "sqlite3.c"
    return total, in_sqlite, len(selected)


print(os.environ["BENCH_HEADER"])
print()

# Profiles.
print("Profiles of equal length: a row is one profiled run of the insert workload; rows/s is its "
      "throughput while profiled, against the plain build's runs just before and after it.")
print()
print("| profiler | wall s | rows/s profiled | rows/s plain (before, after) | throughput ratio "
      "| experiments | on sqlite3.c lines | distinct lines tried | lines with a curve | output |")
print("|---|---|---|---|---|---|---|---|---|---|")
reports = {}
for v in variants:
    if v in ("plain", "changed"):
        continue
    mine = [r for r in rows if r["kind"] == "profile" and r["variant"] == v]
    # The plain runs of this profiler are the two recorded around it (before, after).
    idx = rows.index(mine[0])
    around = [rows[i] for i in (idx - 1, idx + 1) if 0 <= i < len(rows)]
    plain_rates = [float(r["rows_per_second"]) for r in around if r["rows_per_second"] != "-"]
    rate = float(mine[0]["rows_per_second"]) if mine[0]["rows_per_second"] != "-" else None
    profile = os.path.join(cache, "profiles", "profile.%s.coz" % v)
    total, in_sqlite, distinct = experiments_in(profile)
    report = {}
    try:
        report = json.load(open(os.path.join(cache, "profiles", "profile.%s.json" % v)))
    except (OSError, ValueError):
        pass
    reports[v] = report
    ok = mine[0]["status"] == "0" and mine[0]["same_output"] == "1"
    print("| %s | %.1f | %s | %s | %s | %d | %d | %d | %d | %s |" % (
        name[v], int(mine[0]["ns"]) / 1e9, "%.0f" % rate if rate else "-",
        ", ".join("%.0f" % x for x in plain_rates) or "-",
        "%.2f" % (rate / statistics.mean(plain_rates)) if rate and plain_rates else "-",
        total, in_sqlite, distinct, len(report.get("lines", [])),
        "same" if ok else "DIFFERENT (status %s)" % mine[0]["status"]))
print()

# Top lines side by side.
top = 5
columns = [v for v in variants if v not in ("plain", "changed")]
print("Top %d lines of each profile, as `causal report --json` ranks them (by slope: predicted "
      "program speed-up per unit of line speed-up); max is the largest predicted program "
      "speed-up on the line's curve and, in brackets, the line speed-up where it was seen; "
      "n is the number of experiments on the line." % top)
print()
header = "| rank |"
rule = "|---|"
for v in columns:
    header += " %s: line | source | slope | max | n |" % name[v]
    rule += "---|---|---|---|---|"
print(header)
print(rule)
with open(os.path.join(cache, "top-lines.tsv"), "w") as tsv:
    tsv.write("profiler\trank\tline\tslope\tslope_ci_low\tslope_ci_high\tmax_impact\t"
              "max_impact_speedup\texperiments\n")
    for v in columns:
        for entry in reports[v].get("lines", []):
            p = entry["points"][0]
            tsv.write("%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n" % (
                v, entry["rank"], entry["line"], p.get("slope"), (p.get("slope_ci") or [None])[0],
                (p.get("slope_ci") or [None, None])[1], p.get("max_impact"),
                p.get("max_impact_speedup"), entry["experiments"]))
for rank in range(1, top + 1):
    cells = "| %d |" % rank
    for v in columns:
        lines = reports[v].get("lines", [])
        if rank > len(lines):
            cells += " - | | | | |"
            continue
        entry = lines[rank - 1]
        p = entry["points"][0]
        location = entry["line"]
        short = "%s:%s" % (os.path.basename(location.rpartition(":")[0]), location.rpartition(":")[2])
        slope = p.get("slope")
        maximum = p.get("max_impact")
        text = source_text(location)
        cells += " %s | %s | %s | %s | %d |" % (
            short, text if text.startswith("(") else "`%s`" % text if text else "",
            "%+.2f" % slope if slope is not None else "-",
            "%+.0f%% (%.0f%%)" % (100 * maximum, 100 * p.get("max_impact_speedup", 0))
            if maximum is not None else "-", entry["experiments"])
    print(cells)
print()

# Fixed work.
print("Fixed work: a row is one variant inserting the same rows, over the interleaved rounds; the "
      "ratio is the median (min-max) of the per-round ratios to plain.")
print()
print("| variant | wall s, median (min-max) | ratio to plain | rows/s, median | output |")
print("|---|---|---|---|---|")
check = [r for r in rows if r["kind"] == "check"]
plain_ns = {r["round"]: int(r["ns"]) for r in check if r["variant"] == "plain"}
for v in variants:
    mine = [r for r in check if r["variant"] == v]
    if not mine:
        continue
    ratios = [int(r["ns"]) / plain_ns[r["round"]] for r in mine if r["round"] in plain_ns]
    rates = [float(r["rows_per_second"]) for r in mine if r["rows_per_second"] != "-"]
    bad = [r for r in mine if r["status"] != "0" or r["same_output"] != "1"]
    print("| %s | %s | %s | %s | %s |" % (
        name[v], med([int(r["ns"]) / 1e9 for r in mine], "%.2f"),
        "1" if v == "plain" else med(ratios, "%.2f"),
        "%.0f" % statistics.median(rates) if rates else "-",
        "same in every round" if not bad else "DIFFERENT in %d of %d rounds" % (len(bad), len(mine))))
print()
changed = [r for r in check if r["variant"] == "changed" and r["round"] in plain_ns]
if changed:
    # The true effect, as a profile predicts it: the program's speed-up, plain time over
    # changed time minus one, per round.
    gains = [plain_ns[r["round"]] / int(r["ns"]) - 1 for r in changed]
    print("The change (%s), its true effect: the program is %s faster (median, min-max over the "
          "rounds, plain wall time over changed wall time minus one)." % (
              os.environ.get("SQLITE_CHANGE", "?"),
              "%+.1f %% (%+.1f to %+.1f %%)" % (100 * statistics.median(gains), 100 * min(gains),
                                                100 * max(gains))))
    print()
EOF
cat "$cache/results.md"
echo "results: $cache/results.md, raw data: $runs, $cache/top-lines.tsv" >&2
