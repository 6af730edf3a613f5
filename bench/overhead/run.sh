#!/usr/bin/env bash
# bench/overhead/run.sh - what does profiling cost? Wall time with and without the profiler, and Coz.
#
# README
#   Builds each example with progress points (figure1, contention, pipeline, latency) and the
#   hotline example (no progress point) four ways and times them, interleaved in one session
#   (each round runs every example and variant once, the variant order rotating per round):
#     (a) plain    plain clang -O2                                    ./prog ARGS
#     (b) off      causal-clang -fcausal-profile -O2                  CAUSAL_DISABLE=1 ./prog ARGS
#     (c) causal   the same binary under the profiler, experiments on (defaults: lines chosen
#                  from samples, random speedups)                     causal run -- ./prog ARGS
#     (d) coz      plain clang -O2 -g -gdwarf-4, the example's causal.h progress points mapped to
#                  Coz's coz.h by the force-included coz_shim.h     coz run --- ./prog ARGS
#   plus an "empty" row: hotline with 0 rounds, i.e. start-up and exit only.
#   For each example and variant: median and min-max wall time over the rounds, and the ratio
#   to (a) as the median (min-max) of the per-round ratios (a variant and its (a) ran seconds
#   apart, so the ratios are less exposed to the machine's speed swings than the times).
#   Checks that every variant prints what (a) prints and exits 0, and counts the experiment
#   and progress-point records each profiler wrote (Coz writes none for a program without
#   progress points, and none at all for binaries whose DWARF it cannot read: gcc-12's
#   DW_AT_GNU_locviews, DWARF 5).
#   Run time: about 2 s per program run; 5 rounds take about 4-6 minutes on 2 vCPUs.
#
# usage: bench/overhead/run.sh [--build-dir DIR] [--cache-dir DIR] [--reps N] [--skip-coz]
#                              [--examples "figure1 contention ..."]
#   --build-dir  causal build tree or install prefix (default: $CAUSAL_BUILD_DIR, else
#                ../../build relative to this script)
#   --cache-dir  binaries, profiles and results (default: <build-dir>/bench-cache/overhead)
#   --reps       rounds (default 5)
#   --skip-coz   leave out variant (d)
#   --examples   subset of: figure1 contention pipeline latency hotline empty
# Results: stdout and <cache-dir>/results.md (Markdown table), raw times in
# <cache-dir>/times.tsv. Writes nothing else.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
reps=5 skip_coz=0 examples="figure1 contention pipeline latency hotline empty"
bench_args "--reps=reps --skip-coz=skip_coz! --examples=examples" "$@"
bench_positive --reps "$reps"
# $clang: the real clang the wrappers use (CMake cache CAUSAL_CLANG), for the plain builds.
bench_setup overhead "bin profiles out" bin/causal bin/causal-clang bin/causal-clang++
clangxx="$(dirname "$clang")/clang++"
bench_check_coz
variants="plain off causal$with_coz"

# ---- the programs ------------------------------------------------------------------------
# Arguments: about 1.5 s of plain run time each on these VMs.
source_of() {
  case "$1" in
    figure1) echo "$src/examples/figure1/figure1.cpp" ;;
    contention) echo "$src/examples/contention/contention.c" ;;
    pipeline) echo "$src/examples/pipeline/pipeline.c" ;;
    latency) echo "$src/examples/latency/latency.c" ;;
    hotline | empty) echo "$src/examples/hotline/hotline.cpp" ;;
    *) echo "run.sh: unknown example '$1'" >&2; exit 2 ;;
  esac
}
args_of() {
  case "$1" in
    figure1) echo "20" ;;          # rounds of two threads
    contention) echo "200" ;;      # items per thread
    pipeline) echo "800" ;;        # items
    latency) echo "2400" ;;        # requests
    hotline) echo "0 240" ;;       # exit status, rounds
    empty) echo "0 0" ;;           # start-up and exit only
  esac
}

build_log="$cache/build.log"
: >"$build_log"
built=""
for ex in $examples; do
  file="$(source_of "$ex")"
  name="$(basename "${file%.*}")"
  case " $built " in *" $name "*) continue ;; esac
  built="$built $name"
  case "$file" in *.cpp) cc="$clangxx"; causal_cc="$build/bin/causal-clang++" ;;
                  *) cc="$clang"; causal_cc="$build/bin/causal-clang" ;; esac
  common=(-O2 -I"$src/include" -pthread "$file")
  {
    set -x
    "$cc" "${common[@]}" -o "$cache/bin/$name.plain"
    "$causal_cc" -fcausal-profile "${common[@]}" -o "$cache/bin/$name.causal"
    if [ "$skip_coz" = 0 ]; then
      "$cc" -g -gdwarf-4 -include "$here/coz_shim.h" "${common[@]}" -ldl -o "$cache/bin/$name.coz"
    fi
    set +x
  } >>"$build_log" 2>&1 || { echo "run.sh: building $file failed, see $build_log" >&2; exit 1; }
done

binary_of() { basename "${1%.*}"; }

# run_one EXAMPLE VARIANT ROUND: prints "ns status"; stdout of the program to $cache/out/.
run_one() {
  local ex="$1" variant="$2" round="$3"
  local bin
  bin="$cache/bin/$(binary_of "$(source_of "$ex")")"
  local -a args
  read -r -a args <<<"$(args_of "$ex")"
  local out="$cache/out/$ex.$variant.$round.txt" profile="$cache/profiles/$ex.$variant.coz"
  local start end status=0
  start=$(date +%s%N)
  case "$variant" in
    plain) "$bin.plain" "${args[@]}" >"$out" 2>/dev/null || status=$? ;;
    off) CAUSAL_DISABLE=1 "$bin.causal" "${args[@]}" >"$out" 2>/dev/null || status=$? ;;
    causal) "$build/bin/causal" run --quiet --output "$profile" -- "$bin.causal" "${args[@]}" \
              >"$out" 2>/dev/null || status=$? ;;
    coz) coz run -o "$profile" --- "$bin.coz" "${args[@]}" >"$out" 2>/dev/null || status=$? ;;
  esac
  end=$(date +%s%N)
  echo "$((end - start)) $status"
}

times="$cache/times.tsv"
bench_fresh_runs "$times" 'round\texample\tvariant\tns\tstatus\tsame_output'
read -r -a variant_list <<<"$variants"
nvariants=${#variant_list[@]}
for round in $(seq 1 "$reps"); do
  for ex in $examples; do
    for k in $(seq 0 $((nvariants - 1))); do
      variant="${variant_list[$(((k + round - 1) % nvariants))]}"
      read -r ns status <<<"$(run_one "$ex" "$variant" "$round")"
      printf '%s\t%s\t%s\t%s\t%s\t?\n' "$round" "$ex" "$variant" "$ns" "$status" >>"$times"
    done
  done
  echo "round $round of $reps done ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
# Every run's output against round 1 of (a).
python3 - "$times" "$cache/out" <<'EOF'
import csv, filecmp, os, sys
path, outdir = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(path), delimiter="\t"))
for r in rows:
    ref = os.path.join(outdir, "%s.plain.1.txt" % r["example"])
    mine = os.path.join(outdir, "%s.%s.%s.txt" % (r["example"], r["variant"], r["round"]))
    r["same_output"] = "1" if os.path.exists(ref) and filecmp.cmp(ref, mine, shallow=False) else "0"
with open(path, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), delimiter="\t", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
EOF
load_after="$(bench_load)"

# ---- the table -----------------------------------------------------------------------------
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
coz_version="$(dpkg-query -W -f='${Version}' coz-profiler 2>/dev/null || echo '?')"
python3 - "$times" "$cache/profiles" "$reps" >"$cache/results.md" <<EOF
import csv, os, statistics, sys
times, profiles, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = list(csv.DictReader(open(times), delimiter="\t"))
examples = list(dict.fromkeys(r["example"] for r in rows))
variants = list(dict.fromkeys(r["variant"] for r in rows))
order = [v for v in ("plain", "off", "causal", "coz") if v in variants]
label = {"plain": "(a) plain", "off": "(b) off", "causal": "(c) causal run", "coz": "(d) coz run"}
ns = {(r["example"], r["variant"], int(r["round"])): int(r["ns"]) for r in rows}
bad = [r for r in rows if r["status"] != "0" or r["same_output"] != "1"]

def records(ex, variant):
    path = os.path.join(profiles, "%s.%s.coz" % (ex, variant))
    if not os.path.exists(path):
        return "-"
    exps = points = 0
    for line in open(path, errors="replace"):
        kind = line.split("\t", 1)[0].strip()
        if line.startswith("{"):
            kind = line.split('"type":"', 1)[-1].split('"', 1)[0]
        exps += kind == "experiment"
        points += kind in ("throughput-point", "latency-point", "progress-point")
    return "%.0f / %.0f" % (exps / reps, points / reps)

print("machine: $cpu, $(nproc) vCPUs, Linux $(uname -r), perf_event_paranoid "
      "$(cat /proc/sys/kernel/perf_event_paranoid)")
print("date: $started; %d rounds; load average before $load_before, after $load_after" % reps)
print("compilers: $(basename "$clang") ($("$clang" --version | head -1)); coz-profiler $coz_version")
print()
print("| example | variant | wall s, median (min-max) | ratio to (a), median (min-max) "
      "| experiments / point records per run |")
print("|---|---|---|---|---|")
for ex in examples:
    for v in order:
        t = [ns[(ex, v, k)] / 1e9 for k in range(1, reps + 1) if (ex, v, k) in ns]
        if not t:
            continue
        ratios = [ns[(ex, v, k)] / ns[(ex, "plain", k)] for k in range(1, reps + 1)
                  if (ex, v, k) in ns and (ex, "plain", k) in ns]
        ratio = ("%.2f (%.2f-%.2f)" % (statistics.median(ratios), min(ratios), max(ratios))
                 if v != "plain" else "1")
        print("| %s | %s | %.3f (%.3f-%.3f) | %s | %s |" % (
            ex, label[v], statistics.median(t), min(t), max(t), ratio,
            records(ex, v) if v in ("causal", "coz") else "-"))
print()
if bad:
    print("runs that failed or printed something else than (a):")
    for r in bad:
        print("  round %s %s %s: exit status %s, same output %s" % (
            r["round"], r["example"], r["variant"], r["status"], r["same_output"]))
else:
    print("every run exited 0 and printed the same as (a).")
EOF
cat "$cache/results.md"
echo "results: $cache/results.md, raw times: $times" >&2
