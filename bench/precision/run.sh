#!/usr/bin/env bash
# bench/precision/run.sh - how exact is the embedded line table on a real program?
#
# README
#   Builds a multi-threaded SQLite workload (sqlite_workload.c + the SQLite
#   amalgamation) with `causal-clang -fcausal-profile` at -O0 and -O2, plus a
#   copy of each built with the same command and -g added (the code bytes must
#   be identical: `causal lines --check` verifies it), runs the profiled
#   binaries with CAUSAL_SAMPLE_LOG set and checks the table against DWARF:
#     * share of code bytes whose file:line agrees with DWARF (bar: 100 %),
#     * share of samples that agree (bar: >= 95 % at -O2, >= 98 % at -O0),
#     * every DWARF line of a sampled function present in the table.
#   It also times the link step (causal-ld's two links vs one plain link, also
#   with ThinLTO) and measures the size the table adds.
#
#   The SQLite sources come from the npm package better-sqlite3
#   (`npm pack better-sqlite3`, file deps/sqlite3/sqlite3.c), fetched once
#   into the cache directory; nothing is committed.
#
# usage: bench/precision/run.sh [--build-dir DIR] [--cache-dir DIR] [--reps N]
#                               [--threads N] [--rounds N]
#   --build-dir  causal build or install prefix (default: $CAUSAL_BUILD_DIR,
#                else ../../build relative to this script)
#   --cache-dir  where the package and all outputs go
#                (default: <build-dir>/bench-cache/precision)
#   --reps       repetitions of each timed link (default 3), interleaved
#   --skip-lto   do not time ThinLTO links
#   --full-lto   also time full-LTO links (slow: one repetition)
# Figures go to stdout and to <cache-dir>/results.txt. Writes nothing else.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
reps=3 threads=4 rounds=100 skip_lto=0 full_lto=0
bench_args "--reps=reps --threads=threads --rounds=rounds --skip-lto=skip_lto! \
  --full-lto=full_lto!" "$@"
bench_setup precision "" bin/causal-clang bin/causal libexec/causal/ld
cc="$build/bin/causal-clang"
causal_ld="$build/libexec/causal/ld"

results="$cache/results.txt"
: > "$results"
say() { echo "$*" | tee -a "$results"; }

# ---- SQLite amalgamation ------------------------------------------------------
src="$("$here/../common/fetch-sqlite.sh" "$build/bench-cache/sqlite")"
sqlite_version="$(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$src/sqlite3.h")"
cp "$here/sqlite_workload.c" "$src/"

say "# causal line-table precision, $(date -u '+%Y-%m-%d %H:%M UTC')"
say "# machine: $(uname -m), $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)"
say "# compiler: $("$clang" --version | head -n 1); SQLite $sqlite_version"

defs=(-DSQLITE_THREADSAFE=1 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_DQS=0)
out="$cache/out"
mkdir -p "$out"

# Objects: the same command with and without -g.
compile() { # opt suffix extra-flags...
  local opt="$1" suffix="$2"
  shift 2
  "$cc" -fcausal-profile "$opt" "${defs[@]}" -I"$src" -c "$src/sqlite3.c" -o "$out/sqlite3$suffix.o" "$@"
  "$cc" -fcausal-profile "$opt" -I"$src" -c "$src/sqlite_workload.c" -o "$out/workload$suffix.o" "$@"
}
link() { # suffix output extra-flags...
  local suffix="$1" output="$2"
  shift 2
  "$cc" -fcausal-profile "$out/workload$suffix.o" "$out/sqlite3$suffix.o" -pthread -o "$output" "$@"
}

for opt in -O2 -O0; do
  o="${opt#-}"
  if [ ! -f "$out/sqlite3.$o.o" ] || [ ! -f "$out/sqlite3.$o.g.o" ]; then
    compile "$opt" ".$o"
    compile "$opt" ".$o.g" -g
  fi
  link ".$o" "$out/workload.$o"
  link ".$o.g" "$out/workload.$o.g" -g
done

# ---- precision -----------------------------------------------------------------
check_status=0
for opt in O2 O0; do
  if [ "$opt" = O2 ]; then min_samples=95; else min_samples=98; fi
  log="$out/samples.$opt.log"
  rm -f "$log" "$out/profile.$opt.coz"
  say ""
  say "## -$opt: $out/workload.$opt"
  start=$(date +%s.%N)
  run_status=0
  (cd "$out" && CAUSAL_SAMPLE_LOG="$log" CAUSAL_OUTPUT="$out/profile.$opt.coz" \
     "$out/workload.$opt" "$threads" "$rounds") > "$out/run.$opt.txt" 2> "$out/run.$opt.err" || run_status=$?
  end=$(date +%s.%N)
  say "run: $(cat "$out/run.$opt.txt") status=$run_status, $(echo "$end - $start" | bc) s"
  if [ -s "$out/run.$opt.err" ]; then
    say "run stderr: $(head -n 3 "$out/run.$opt.err" | tr '\n' ' ')"
  fi
  reference="$out/workload.$opt.g"
  if ! "$causal" lines --check --dwarf "$reference" "$out/workload.$opt" > "$out/compare.$opt.txt" 2>&1 &&
     grep -q "not comparable" "$out/compare.$opt.txt"; then
    # clang's -g changed the generated code (it happens at -O2): the -g copy
    # cannot serve as the reference. The binary's own line-tables-only DWARF
    # (not stripped) is the same line program a -g build of this code would
    # carry; check against it, and say so.
    say "-g copy not comparable: $(sed 's/^causal lines: error: //' "$out/compare.$opt.txt")"
    say "reference: the binary's own DWARF line table instead"
    reference="$out/workload.$opt"
  fi
  args=(lines --check --dwarf "$reference" "$out/workload.$opt" --min-bytes 100)
  if [ -s "$log" ]; then
    args+=(--samples "$log" --min-samples "$min_samples")
  else
    say "(no sample log written: the runtime did not record samples; byte figures only)"
  fi
  "$causal" "${args[@]}" > "$out/check.$opt.txt" 2>&1 || check_status=1
  tee -a "$results" < "$out/check.$opt.txt"
done

# ---- link time and size --------------------------------------------------------
# Plain: the real clang with the same objects and the runtime, one link, no
# table. causal: causal-clang, i.e. causal-ld's two links + table.
rt_flags=(-L"$build/lib" -Wl,-rpath,"$build/lib" -Wl,--push-state,--no-as-needed -lcausal_rt -Wl,--pop-state)
plain_link() { # suffix output extra...
  local suffix="$1" output="$2"
  shift 2
  "$clang" "$out/workload$suffix.o" "$out/sqlite3$suffix.o" -pthread "${rt_flags[@]}" -o "$output" "$@"
}
median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
range_of() { sort -n | awk 'NR==1{lo=$1} {hi=$1} END {printf "%s-%s", lo, hi}'; }
time_cmd() { local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }

time_pair() { # label suffix extra...
  local label="$1" suffix="$2"
  shift 2
  local plain_times=() causal_times=()
  for _ in $(seq "$reps"); do
    plain_times+=("$(time_cmd plain_link "$suffix" "$out/t.plain" "$@")")
    causal_times+=("$(time_cmd link "$suffix" "$out/t.causal" "$@")")
  done
  local pm cm
  pm=$(printf '%s\n' "${plain_times[@]}" | median)
  cm=$(printf '%s\n' "${causal_times[@]}" | median)
  say "$label: plain link median ${pm} s ($(printf '%s\n' "${plain_times[@]}" | range_of)), causal-ld median ${cm} s ($(printf '%s\n' "${causal_times[@]}" | range_of)), ratio $(echo "scale=2; $cm / $pm" | bc)"
}

say ""
say "## link time ($reps interleaved repetitions, seconds)"
time_pair "-O2 objects" ".O2"
time_pair "-O0 objects" ".O0"
if [ "$skip_lto" = 0 ]; then
  if [ ! -f "$out/sqlite3.thin.o" ]; then
    compile -O2 ".thin" -flto=thin
  fi
  time_pair "-O2 -flto=thin" ".thin" -flto=thin -O2
fi
if [ "$full_lto" = 1 ]; then
  if [ ! -f "$out/sqlite3.full.o" ]; then
    compile -O2 ".full" -flto
  fi
  saved_reps="$reps"
  reps=1
  time_pair "-O2 -flto (full)" ".full" -flto -O2
  reps="$saved_reps"
fi

say ""
say "## size"
for opt in O2 O0; do
  plain_link ".$opt" "$out/size.plain.$opt"
  table=$(size -A "$out/workload.$opt" | awk '$1=="causal_lines" {print $2}')
  text=$(size -A "$out/workload.$opt" | awk '$1==".text" {print $2}')
  say "-$opt: causal_lines $table bytes (.text $text bytes); file $(stat -c %s "$out/workload.$opt") bytes vs $(stat -c %s "$out/size.plain.$opt") linked plainly"
  say "-$opt: $("$causal" lines "$out/workload.$opt" | sed -n 2p)"
  debug=$(size -A "$out/workload.$opt" | awk '$1 ~ /^\.debug_/ {s += $2} END {print s + 0}')
  say "-$opt: line-tables-only DWARF (.debug_*) $debug bytes (not needed at run time; strippable)"
done
rm -f "$out"/t.plain "$out"/t.causal "$out"/size.plain.*
say ""
say "results in $results"
exit "$check_status"
