#!/usr/bin/env bash
# bench/build-cost/run.sh - what does -fcausal-profile cost at build time, and in binary size?
#
# README
#   Builds three programs three ways and times the compile and the link steps, interleaved
#   (each round builds every program and variant once, the variant order rotating per round):
#     plain   clang -O2                              (the baseline)
#     causal  causal-clang -fcausal-profile -O2      (the pass, line-tables-only DWARF added by the
#                                                     plugin, causal-ld's two links + table)
#     coz     clang -O2 -g -gdwarf-4                 (what Coz needs: full DWARF 4)
#   Programs: the SQLite workload of bench/sqlite (insert_workload.c + the 9 MB amalgamation
#   sqlite3.c, fetched once into the cache by bench/common/fetch-sqlite.sh) and two examples,
#   figure1 (C++) and pipeline (C). Each source is compiled with -c, then the objects linked.
#   For each: compile and link wall time, median (min-max) over the rounds, and the ratio of
#   compile + link to plain's (median (min-max) of the per-round ratios); sizes of the last
#   round's binaries: file, stripped (llvm-strip --strip-all), .text, the causal_lines table,
#   the .debug_* sections. The runtime libraries are not in the binaries (libcausal_rt.so and
#   Coz's libcoz.so are loaded at run time); their sizes are given once.
#   Run time: a SQLite round takes about 1.5-2.5 min on 2 vCPUs (three -O2 builds of
#   sqlite3.c), the examples a few seconds; default 2 SQLite rounds and 5 example rounds:
#   about 4-5 minutes. --quick: examples only, 2 rounds, under a minute.
#
# usage: bench/build-cost/run.sh [--build-dir DIR] [--cache-dir DIR] [--budget-s N] [--quick]
#                                [--sqlite-reps N] [--reps N]
#   --build-dir    causal build tree or install prefix (default: $CAUSAL_BUILD_DIR, else
#                  ../../build relative to this script)
#   --cache-dir    objects, binaries and results (default: <build-dir>/bench-cache/build-cost)
#   --budget-s     time budget; sets --sqlite-reps to (budget - 60) / 120, within 1-3 (default 300)
#   --quick        smoke run: the examples only, 2 rounds
#   --sqlite-reps  rounds of the SQLite builds
#   --reps         rounds of the example builds (default 5)
# Results: <cache-dir>/results.md (Markdown), raw data in <cache-dir>/times.tsv and
# <cache-dir>/sizes.tsv.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
budget=300 quick=0 sqlite_reps="" reps=5
bench_args "--budget-s=budget --quick=quick! --sqlite-reps=sqlite_reps --reps=reps" "$@"
bench_positive --budget-s "$budget"
bench_positive --reps "$reps"
bench_positive --sqlite-reps "${sqlite_reps:-1}"
if [ -z "$sqlite_reps" ]; then
  sqlite_reps=$(((budget - 60) / 120))
  [ "$sqlite_reps" -ge 1 ] || sqlite_reps=1
  [ "$sqlite_reps" -le 3 ] || sqlite_reps=3
fi
programs="sqlite figure1 pipeline"
if [ "$quick" = 1 ]; then
  programs="figure1 pipeline"
  reps=2
fi
bench_setup build-cost "obj bin" bin/causal-clang bin/causal-clang++
llvm_bin="$(dirname "$(readlink -f "$clang")")"
size_tool="$llvm_bin/llvm-size"
strip_tool="$llvm_bin/llvm-strip"
[ -x "$size_tool" ] || size_tool=llvm-size-19
[ -x "$strip_tool" ] || strip_tool=llvm-strip-19

sqlite=""
case " $programs " in *" sqlite "*)
  sqlite="$("$here/../common/fetch-sqlite.sh" "$build/bench-cache/sqlite")" ;;
esac
sources_of() { # program: its sources, one a line
  case "$1" in
    sqlite) printf '%s\n' "$src/bench/sqlite/insert_workload.c" "$sqlite/sqlite3.c" ;;
    figure1) echo "$src/examples/figure1/figure1.cpp" ;;
    pipeline) echo "$src/examples/pipeline/pipeline.c" ;;
  esac
}
compiler_of() { # variant source
  local cxx=0
  case "$2" in *.cpp) cxx=1 ;; esac
  case "$1" in
    causal) if [ "$cxx" = 1 ]; then echo "$build/bin/causal-clang++ -fcausal-profile";
            else echo "$build/bin/causal-clang -fcausal-profile"; fi ;;
    *) if [ "$cxx" = 1 ]; then echo "$(dirname "$clang")/clang++"; else echo "$clang"; fi ;;
  esac
}
flags_of() { # variant
  case "$1" in
    coz) echo "-O2 -g -gdwarf-4" ;;
    *) echo "-O2" ;;
  esac
}

log="$cache/build.log"
: >"$log"
now_ns() { date +%s%N; }
# build_one PROGRAM VARIANT: compiles and links; prints "compile_ns link_ns".
build_one() {
  local program="$1" variant="$2" s compile_ns=0 start end
  local -a flags compiler objs=()
  read -r -a flags <<<"$(flags_of "$variant")"
  local extra=(-I"$src/include")
  [ "$program" != sqlite ] || extra+=(-I"$sqlite" -DSQLITE_THREADSAFE=1
                                      -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_DQS=0)
  while read -r s; do
    read -r -a compiler <<<"$(compiler_of "$variant" "$s")"
    local obj="$cache/obj/$program.$(basename "${s%.*}").$variant.o"
    rm -f "$obj"
    start=$(now_ns)
    "${compiler[@]}" "${flags[@]}" "${extra[@]}" -c "$s" -o "$obj" >>"$log" 2>&1 ||
      { echo "run.sh: compiling $s ($variant) failed, see $log" >&2; exit 1; }
    end=$(now_ns)
    compile_ns=$((compile_ns + end - start))
    objs+=("$obj")
  done < <(sources_of "$program")
  # Link with the driver of the main source's language.
  read -r -a compiler <<<"$(compiler_of "$variant" "$(sources_of "$program" | head -n 1)")"
  rm -f "$cache/bin/$program.$variant"
  start=$(now_ns)
  "${compiler[@]}" "${flags[@]}" "${objs[@]}" -pthread -o "$cache/bin/$program.$variant" \
    >>"$log" 2>&1 || { echo "run.sh: linking $program ($variant) failed, see $log" >&2; exit 1; }
  end=$(now_ns)
  echo "$compile_ns $((end - start))"
}

times="$cache/times.tsv"
printf 'round\tprogram\tvariant\tcompile_ns\tlink_ns\n' >"$times"
variants=(plain causal coz)
bench_mark_start
t0=$(date +%s)
max_reps=$reps
[ "$sqlite_reps" -le "$max_reps" ] || max_reps=$sqlite_reps
for round in $(seq 1 "$max_reps"); do
  for program in $programs; do
    if [ "$program" = sqlite ]; then [ "$round" -le "$sqlite_reps" ] || continue
    else [ "$round" -le "$reps" ] || continue; fi
    for k in 0 1 2; do
      v="${variants[$(((k + round - 1) % 3))]}"
      read -r compile_ns link_ns <<<"$(build_one "$program" "$v")"
      printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$program" "$v" "$compile_ns" "$link_ns" >>"$times"
    done
  done
  echo "round $round done ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
load_after="$(bench_load)"
echo "builds took $(($(date +%s) - t0)) s" >&2

sizes="$cache/sizes.tsv"
printf 'program\tvariant\tfile\tstripped\ttext\tcausal_lines\tdebug\n' >"$sizes"
for program in $programs; do
  for v in "${variants[@]}"; do
    bin="$cache/bin/$program.$v"
    "$strip_tool" --strip-all "$bin" -o "$bin.stripped"
    read -r text table debug <<<"$("$size_tool" -A "$bin" | awk '
      $1 == ".text" { text = $2 } $1 == "causal_lines" { table = $2 } $1 ~ /^\.debug_/ { debug += $2 }
      END { print text + 0, table + 0, debug + 0 }')"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$program" "$v" "$(stat -c %s "$bin")" \
      "$(stat -c %s "$bin.stripped")" "$text" "$table" "$debug" >>"$sizes"
    rm -f "$bin.stripped"
  done
done

runtime_sizes="libcausal_rt.so $(stat -c %s "$build/lib/libcausal_rt.so" 2>/dev/null || echo '?') bytes"
coz_lib="$(dpkg -L coz-profiler 2>/dev/null | grep '/libcoz\.so$' | head -n 1 || true)"
[ -z "$coz_lib" ] || runtime_sizes="$runtime_sizes, Coz's $(basename "$coz_lib") $(stat -c %s "$coz_lib") bytes"
bench_context_header "$started" "$load_before" "$load_after" \
  "rounds: SQLite $sqlite_reps, examples $reps; run-time libraries (not in the binaries): $runtime_sizes"
python3 - "$times" "$sizes" >"$cache/results.md" <<'EOF'
import csv, os, statistics, sys

times = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
sizes = list(csv.DictReader(open(sys.argv[2]), delimiter="\t"))
label = {"plain": "clang -O2", "causal": "causal-clang -fcausal-profile -O2",
         "coz": "clang -O2 -g -gdwarf-4 (Coz)"}
title = {"sqlite": "SQLite workload", "figure1": "figure1 (C++)", "pipeline": "pipeline (C)"}
programs = list(dict.fromkeys(r["program"] for r in times))


def spread(values, fmt):
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(values), min(values), max(values))


print(os.environ["BENCH_HEADER"])
print()
print("Build time: a row is one program built one way, each source compiled with -c and the "
      "objects linked, seconds as median (min-max) over the interleaved rounds; the ratio is "
      "compile + link against clang -O2's in the same round.")
print()
print("| program | build | compile s | link s | compile + link s | ratio to clang -O2 |")
print("|---|---|---|---|---|---|")
for program in programs:
    mine = [r for r in times if r["program"] == program]
    total = {(r["variant"], r["round"]): (int(r["compile_ns"]) + int(r["link_ns"])) / 1e9
             for r in mine}
    for v in ("plain", "causal", "coz"):
        rows = [r for r in mine if r["variant"] == v]
        if not rows:
            continue
        ratios = [total[(v, r["round"])] / total[("plain", r["round"])] for r in rows
                  if ("plain", r["round"]) in total]
        print("| %s | %s | %s | %s | %s | %s |" % (
            title.get(program, program), label[v],
            spread([int(r["compile_ns"]) / 1e9 for r in rows], "%.2f"),
            spread([int(r["link_ns"]) / 1e9 for r in rows], "%.2f"),
            spread([total[(v, r["round"])] for r in rows], "%.2f"),
            "1" if v == "plain" else spread(ratios, "%.2f")))
print()
print("Binary size: a row is one program's binary built one way, in KiB (ratio to clang -O2); "
      "stripped is after llvm-strip --strip-all (the causal_lines table is a loaded section "
      "and stays); .debug_* is every DWARF section together.")
print()
print("| program | build | file | stripped | .text | causal_lines | .debug_* |")
print("|---|---|---|---|---|---|---|")
for program in programs:
    plain = next(r for r in sizes if r["program"] == program and r["variant"] == "plain")
    for v in ("plain", "causal", "coz"):
        r = next((r for r in sizes if r["program"] == program and r["variant"] == v), None)
        if not r:
            continue

        def cell(key, ratio=True):
            value = int(r[key])
            if value == 0:
                return "0"
            text = "%.1f" % (value / 1024)
            if ratio and v != "plain" and int(plain[key]):
                text += " (%.2f)" % (value / int(plain[key]))
            return text

        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            title.get(program, program), label[v], cell("file"), cell("stripped"), cell("text"),
            cell("causal_lines", False), cell("debug", False)))
print()
EOF
cat "$cache/results.md"
echo "results: $cache/results.md, raw data: $times, $sizes" >&2
