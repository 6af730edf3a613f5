#!/usr/bin/env bash
# bench/sqlite-waits/run.sh - what SQLite's inserting threads wait for (docs/waits.md), scripted.
#
# README
#   bench/sqlite's workload (insert_workload.c: THREADS threads, each inserting rows into its own
#   table, one autocommit transaction per row) linked with the SQLite amalgamation (fetched once by
#   bench/common/fetch-sqlite.sh), built three ways:
#     causal    causal-clang -fcausal-profile -O2         recorded by `causal run --waits`
#     plain     clang -O2                                  the change's baseline
#     memstat0  clang -O2 -DSQLITE_DEFAULT_MEMSTATUS=0     the change the wait-for graph suggests:
#               no memory statistics, so sqlite3_malloc/sqlite3_free take no global mutex
#   all with -DSQLITE_THREADSAFE=1 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_DQS=0 (bench/sqlite's).
#   (1) One `causal run --waits` of --seconds: the sidecar's size (and per second), the episodes
#       recorded, and `causal waits --merge-roles` (its knots: threads, weight, the vertex waited
#       for most, the heaviest edges with the lines where they wait and are woken) into
#       results.md; the whole text, merged and per thread, in <cache-dir>/waits.txt.
#   (2) The change tried: plain and memstat0 alternating for --rounds rounds of --ab-seconds each:
#       rows per second of each run, and memstat0's ratio to the plain run of its round.
#   Run time: about 1.5 min to build (three -O2 builds of sqlite3.c; reused with --quick when
#   present), --seconds for (1) (default 20 s), 2 x --rounds x --ab-seconds for (2) (30 s):
#   about 2.5 minutes. --quick: 4 s of recording, one round of 2 s runs.
#   A loaded machine lowers the rates and raises the share of waiting: docs/waits.md's figures
#   say what load they were measured under; read the direction, not the size.
#
# usage: bench/sqlite-waits/run.sh [--build-dir DIR] [--cache-dir DIR] [--quick] [--threads N]
#                                  [--seconds S] [--rounds N] [--ab-seconds S]
#   --build-dir   causal build tree or install prefix (default: $CAUSAL_BUILD_DIR, else
#                 ../../build relative to this script)
#   --cache-dir   binaries, the recording and results (default: <build-dir>/bench-cache/sqlite-waits);
#                 the SQLite sources are cached in <build-dir>/bench-cache/sqlite
#   --quick       smoke run: 4 s recording, 1 round of 2 s runs, cached objects reused
#   --threads     inserting threads (default 4)
#   --seconds     length of the recorded run (default 20)
#   --rounds      rounds of the change's A/B runs (default 3)
#   --ab-seconds  length of each A/B run (default 5)
# Results: <cache-dir>/results.md (Markdown), <cache-dir>/waits.txt, <cache-dir>/ab.tsv; the
# recording in <cache-dir>/profiles/waits.coz and waits.coz.waits.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
quick=0 threads=4 seconds="" rounds="" ab_seconds=""
bench_args "--quick=quick! --threads=threads --seconds=seconds --rounds=rounds \
  --ab-seconds=ab_seconds" "$@"
if [ "$quick" = 1 ]; then
  seconds="${seconds:-4}" rounds="${rounds:-1}" ab_seconds="${ab_seconds:-2}"
fi
seconds="${seconds:-20}" rounds="${rounds:-3}" ab_seconds="${ab_seconds:-5}"
bench_positive --threads "$threads"
bench_positive --seconds "$seconds"
bench_positive --rounds "$rounds"
bench_positive --ab-seconds "$ab_seconds"
bench_setup sqlite-waits "bin obj profiles out" bin/causal bin/causal-clang

# ---- build -------------------------------------------------------------------------------
sqlite="$("$here/../common/fetch-sqlite.sh" "$build/bench-cache/sqlite")"
sqlite_version="$(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$sqlite/sqlite3.h")"
defs=(-DSQLITE_THREADSAFE=1 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_DQS=0)
workload="$here/../sqlite/insert_workload.c"
build_log="$cache/build.log"
: >"$build_log"
compiler_of() { # variant
  case "$1" in
    causal) echo "$build/bin/causal-clang -fcausal-profile -O2" ;;
    plain) echo "$clang -O2" ;;
    memstat0) echo "$clang -O2 -DSQLITE_DEFAULT_MEMSTATUS=0" ;;
  esac
}
build_variant() { # variant
  local obj="$cache/obj/sqlite3.$1.o" bin="$cache/bin/insert_workload.$1"
  local -a cmd
  read -r -a cmd <<<"$(compiler_of "$1")"
  if [ "$quick" != 1 ] || [ ! -f "$obj" ]; then
    (set -x; "${cmd[@]}" "${defs[@]}" -I"$sqlite" -c "$sqlite/sqlite3.c" -o "$obj.tmp") \
      >>"$build_log.$1" 2>&1 && mv "$obj.tmp" "$obj" || return 1
  fi
  (set -x; "${cmd[@]}" -I"$sqlite" -I"$src/include" "$workload" "$obj" -pthread -o "$bin") \
    >>"$build_log.$1" 2>&1
}
echo "building sqlite3.c three ways (log: $build_log)" >&2
build_failed=0
build_variant causal & pid_causal=$!
{ build_variant plain && build_variant memstat0; } & pid_rest=$!
wait "$pid_causal" || build_failed=1
wait "$pid_rest" || build_failed=1
cat "$build_log".* >>"$build_log" 2>/dev/null || true
rm -f "$build_log".*
if [ "$build_failed" = 1 ]; then
  echo "run.sh: building failed, see $build_log" >&2
  exit 1
fi

# ---- (1) the recording ---------------------------------------------------------------------
bench_mark_start
profile="$cache/profiles/waits.coz"
rm -f "$profile" "$profile.waits"
echo "recording ${seconds} s with causal run --waits" >&2
status=0
"$causal" run --waits --output "$profile" -- "$cache/bin/insert_workload.causal" "$threads" \
  1000000000 "$seconds" >"$cache/out/waits.txt" 2>"$cache/out/waits.err" || status=$?
if [ "$status" != 0 ] || [ ! -s "$profile.waits" ]; then
  echo "run.sh: the recorded run failed (status $status), see $cache/out/waits.err" >&2
  exit 1
fi
{
  echo "== causal waits --merge-roles"
  "$causal" waits --merge-roles "$profile" 2>&1 || true
  echo
  echo "== causal waits"
  "$causal" waits "$profile" 2>&1 || true
} >"$cache/waits.txt"
"$causal" waits --merge-roles --json "$profile" >"$cache/out/waits.json"

# ---- (2) the change tried ------------------------------------------------------------------
ab="$cache/ab.tsv"
printf 'round\tvariant\tstatus\trows_per_second\n' >"$ab"
for round in $(seq 1 "$rounds"); do
  order="plain memstat0"
  [ $((round % 2)) = 1 ] || order="memstat0 plain"
  for variant in $order; do
    status=0
    "$cache/bin/insert_workload.$variant" "$threads" 1000000000 "$ab_seconds" \
      >"$cache/out/$variant.$round.txt" 2>"$cache/out/$variant.$round.err" || status=$?
    rate="$(sed -n 's/^rows=.* rows_per_second=\([0-9]*\)$/\1/p' "$cache/out/$variant.$round.err" |
      tail -n 1)"
    printf '%s\t%s\t%s\t%s\n' "$round" "$variant" "$status" "${rate:--}" >>"$ab"
  done
done
load_after="$(bench_load)"

# ---- results -------------------------------------------------------------------------------
bench_context_header "$started" "$load_before" "$load_after" \
  "SQLite $sqlite_version, $threads threads, ${seconds} s recorded; A/B: $rounds rounds of ${ab_seconds} s"
python3 - "$cache/out/waits.json" "$profile.waits" "$seconds" "$ab" >"$cache/results.md" <<'PY'
import json, os, sys
waits_json, sidecar, seconds, ab_path = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
print(os.environ.get("BENCH_HEADER", ""))
print()
data = json.load(open(waits_json))
size = os.path.getsize(sidecar)
print("(1) `causal run --waits`: %s episodes, %.1f MB sidecar (%.2f MB/s, %.0f MB scaled to 60 s)"
      % (data.get("episodes", "?"), size / 1e6, size / 1e6 / seconds, size / 1e6 / seconds * 60))
print()
vertices = data.get("vertices", [])
knots = data.get("knots", [])
if not knots:
    print("No knot.")
for knot in knots[:3]:
    most = knot.get("most_waited_for", -1)
    print("Knot %d: %.1f %% of the run time, {%s}, waited for most: %s%s" % (
        knot["rank"], 100 * knot["share"], ", ".join(knot["labels"]),
        vertices[most]["label"] if 0 <= most < len(vertices) else "-",
        " (background)" if knot.get("background") else ""))
print()
print("| edge | weight | waits at | woken at |")
print("|---|---|---|---|")
edges = sorted(data.get("edges", []), key=lambda e: -e["weight_ns"])
for e in edges[:6]:
    top = lambda lines: lines[0]["line"] if lines else "-"
    print("| %s -> %s | %.1f %% | %s | %s |" % (e["from_label"], e["to_label"], 100 * e["share"],
                                             top(e["wait_lines"]), top(e["wake_lines"])))
print()
rows = [l.rstrip("\n").split("\t") for l in open(ab_path)][1:]
by_round = {}
for rnd, variant, status, rate in rows:
    by_round.setdefault(rnd, {})[variant] = (status, rate)
print("(2) The change: -DSQLITE_DEFAULT_MEMSTATUS=0 (no global allocator mutex), rows per second")
print()
print("| round | plain | memstat0 | ratio |")
print("|---|---|---|---|")
for rnd in sorted(by_round, key=int):
    p, m = by_round[rnd].get("plain", ("?", "-")), by_round[rnd].get("memstat0", ("?", "-"))
    ratio = "%.2fx" % (float(m[1]) / float(p[1])) if p[1] not in ("-", "0") and m[1] != "-" else "-"
    print("| %s | %s%s | %s%s | %s |" % (rnd, p[1], "" if p[0] == "0" else " (status %s)" % p[0],
                                        m[1], "" if m[0] == "0" else " (status %s)" % m[0], ratio))
PY
cat "$cache/results.md"
