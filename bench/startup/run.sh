#!/usr/bin/env bash
# bench/startup/run.sh - time to main, with and without -fcausal-profile, for a
# tiny program and for the SQLite amalgamation (a large binary), interleaved.
#
# The claim measured: the runtime's start-up cost does not grow with the size
# of the binary (registration is O(1) per image; no DWARF is read).
#
# usage: bench/startup/run.sh [--build-dir DIR] [--runs N]
# Each variant is launched N times per round, 5 rounds interleaved; the
# figures are medians (min-max) of the per-round medians, in microseconds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${CAUSAL_BUILD_DIR:-$here/../../build}"
runs=40
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
build="$(cd "$build" && pwd)"
work="$build/bench-cache/startup"
mkdir -p "$work"
cc="$build/bin/causal-clang"
clang="$(sed -n 's/^ *CAUSAL_CLANG:FILEPATH=//p' "$build/CMakeCache.txt")"
sqlite="$("$here/../common/fetch-sqlite.sh" "$build/bench-cache/sqlite")"

"$clang" -O2 "$here/launch.c" -o "$work/launch"
probe="$here/main_probe.c"
sqlite_main="$work/sqlite_main.c"
cat > "$sqlite_main" <<'C'
#include "sqlite3.h"
#include <stdio.h>
int main(void) { /* never reached when timing: the probe exits first */
  sqlite3 *db;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) return 1;
  sqlite3_exec(db, "create table t(x); insert into t values (1);", 0, 0, 0);
  sqlite3_close(db);
  puts(sqlite3_libversion());
  return 0;
}
C
build_variant() { # name compiler flags sources...
  local name="$1" compiler="$2" flags="$3"; shift 3
  [ -x "$work/$name" ] || "$compiler" $flags -O2 -I"$sqlite" "$@" "$probe" -o "$work/$name" -lpthread -ldl -lm
}
build_variant tiny-plain "$clang" "" "$here/tiny.c"
build_variant tiny-causal "$cc" "-fcausal-profile" "$here/tiny.c"
build_variant sqlite-plain "$clang" "" "$sqlite_main" "$sqlite/sqlite3.c"
build_variant sqlite-causal "$cc" "-fcausal-profile" "$sqlite_main" "$sqlite/sqlite3.c"

echo "machine: $(nproc) cores, $(uname -r); $(date -u +%Y-%m-%d)"
printf "%-14s %10s %8s\n" variant "size(KiB)" "rows"
for v in tiny-plain tiny-causal sqlite-plain sqlite-causal; do
  rows=$("$build/bin/causal" lines "$work/$v" 2>/dev/null | sed -n "s/.* \([0-9]*\) rows.*/\1/p" | head -n1 || true)
  printf "%-14s %10d %8s\n" "$v" $(( $(stat -c %s "$work/$v") / 1024 )) "${rows:--}"
done

declare -A medians cpus
for round in 1 2 3 4 5; do
  for v in tiny-plain tiny-causal sqlite-plain sqlite-causal; do
    out=$(cd "$work" && CAUSAL_OUTPUT=/dev/null "$work/launch" "$runs" "$work/$v")
    medians[$v]="${medians[$v]:-} $(echo "$out" | sed -n 's/^median_us=\([0-9.]*\).*/\1/p')"
    cpus[$v]="${cpus[$v]:-} $(echo "$out" | sed -n 's/.*cpu_median_us=\([0-9.]*\).*/\1/p')"
  done
done
summary() { # name values...
  local name="$1"; shift
  echo "$*" | tr ' ' '\n' | sed '/^$/d' | sort -n |
    awk -v name="$name" '{a[NR]=$1} END {printf "%-14s %8.1f (%.1f-%.1f)\n", name, a[int((NR+1)/2)], a[1], a[NR]}'
}
echo
echo "CPU time to main, us: median of 5 round medians (min-max), $runs launches per round"
for v in tiny-plain tiny-causal sqlite-plain sqlite-causal; do summary "$v" ${cpus[$v]}; done
echo
echo "wall time to main, us: same"
for v in tiny-plain tiny-causal sqlite-plain sqlite-causal; do summary "$v" ${medians[$v]}; done
exit 0
