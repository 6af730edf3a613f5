#!/usr/bin/env bash
# bench/pbzip2/run.sh - a real multi-threaded program profiled with --confirm, and the change its
# confirmed top line suggests, made for real and timed.
#
# README
#   pbzip2 (parallel bzip2, C++ with pthreads; Debian bookworm's source package, fetched once
#   with bench/common/fetch-debian-source.sh into the cache directory, never committed) is
#   built three ways with its own Makefile:
#     plain    clang++ -O2 (the clang of the causal build, CAUSAL_CLANG)
#     causal   causal-clang++ -O2 -fcausal-profile -fcausal-progress-fn=outputBufferAdd: the
#              progress point is each return of outputBufferAdd(), which a consumer thread calls
#              once per block it has compressed, to hand the block to the writer thread: one
#              visit per unit of useful work (900 kB of input compressed), no source change
#     changed  plain with bench/pbzip2/keep-freed-memory.patch applied to a copy of the source:
#              the change the confirmed top line suggested (below)
#   Input: --input-mb MB (default 200) of deterministic English-like text made by make_input.py
#   (seeded, cached in the cache directory; bzip2 compresses it about 3.7:1). The command is
#   `pbzip2 -p<threads> -9 -c < input > output` (default 2 threads: the machine's 2 CPUs).
#   1. Profile: `causal run --confirm=K -- bash -c '<the command, --loops times>'` (several
#      pbzip2 runs per profiled command, each appending its run to the profile; the A/B runs
#      of the confirmation run the same loop). Every profiled output is compared (cmp) with the
#      plain build's, which is checked once against the input with `bzip2 -dc`.
#   2. Report: `causal report` of that profile (text and JSON): the top lines with their
#      samples, slopes and intervals, and the confirmations: verdict, A/B program speedup at
#      the A/B speedup, the prediction, pairs.
#   3. The real change: plain and changed runs interleaved (plain, changed, changed, plain,
#      ...), --reps each, wall time, CPU time (user + system) and minor page faults of each
#      (GNU time), outputs compared with plain's. Program speedup = 1 - median(changed wall) /
#      median(plain wall). Compared with what the confirmation predicts for the line sped up
#      by as much as the change sped it up (estimated as the CPU time the change saved divided
#      by the line's share of the samples): its D scaled linearly, and slope x that speedup.
#   Run time with the defaults: about 1 min to fetch and build and 20 s to make the input (both
#   cached afterwards), 1 min of profiling, 1 min of A/B runs per ranked line (60 s budget; a
#   command of 3 pbzip2 runs is never cut short), 2-3 min of timed runs: 7 minutes on 2 busy vCPUs
#   with one line ranked, about 9 with three. --quick: 40 MB, 4 loops, 1 line confirmed for 20 s,
#   3 reps: about 2 minutes (cached build); its numbers are not for publication.
#
# usage: bench/pbzip2/run.sh [--build-dir DIR] [--cache-dir DIR] [--input-mb MB] [--threads N]
#                            [--loops N] [--confirm K] [--confirm-budget S] [--reps N]
#                            [--stack-copy-bytes N] [--quick]
#   --build-dir       causal build tree (default: $CAUSAL_BUILD_DIR, else build/ at the top)
#   --cache-dir       source package, builds, input, profiles and results
#                     (default: <build-dir>/bench-cache/pbzip2)
#   --input-mb        size of the input in MB (default 200)
#   --threads         pbzip2's -p (default 2)
#   --loops           pbzip2 runs per profiled command (default 3)
#   --confirm         top lines to confirm (default 3)
#   --confirm-budget  seconds of A/B runs per line (default 60; a run is never cut short)
#   --reps            timed runs of each of plain and changed (default 5)
#   --stack-copy-bytes  CAUSAL_STACK_COPY_BYTES for the profiled runs (default: unset, the
#                     runtime's 2048): the user stack copied with each sample, from which a
#                     sample inside libbz2 (no frame pointers) is charged to its caller
#   --quick           smoke run (above)
# Needs: libbz2-dev, dpkg-dev (dpkg-source), bzip2, python3, GNU time (/usr/bin/time), network
# access for the one-time `apt-get source pbzip2`.
# Results: stdout and <cache-dir>/results.md; the profile <cache-dir>/profile.coz, its report
# report.txt and report.json, the timed runs runs.tsv, logs under <cache-dir>/logs/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
input_mb=200 threads=2 loops=3 confirm=3 confirm_budget=60 reps=5 quick=0 stack_copy_bytes=""
bench_args "--input-mb=input_mb --threads=threads --loops=loops --confirm=confirm \
--confirm-budget=confirm_budget --reps=reps --stack-copy-bytes=stack_copy_bytes --quick=quick!" "$@"
[ -z "$stack_copy_bytes" ] || bench_positive --stack-copy-bytes "$stack_copy_bytes"
if [ "$quick" = 1 ]; then
  input_mb=40 loops=4 confirm=1 confirm_budget=20 reps=3
fi
for opt in input_mb threads loops confirm confirm_budget reps; do
  bench_positive "--${opt//_/-}" "${!opt}"
done
bench_setup pbzip2 "bin build logs out" bin/causal bin/causal-clang++ lib/libcausal_rt.so

say() { echo "pbzip2: $*" >&2; }
die() { echo "run.sh: $*" >&2; exit 1; }

[ -f /usr/include/bzlib.h ] || die "bzlib.h missing (Debian: apt-get install libbz2-dev)"
[ -x /usr/bin/time ] || die "GNU time missing (Debian: apt-get install time)"
command -v bzip2 >/dev/null || die "bzip2 missing (Debian: apt-get install bzip2)"
clangxx="$(dirname "$clang")/clang++"
[ -x "$clangxx" ] || die "$clangxx missing (the C++ driver beside CAUSAL_CLANG)"

# ---- 1. source and builds ------------------------------------------------------------------
package="$("$here/../common/fetch-debian-source.sh" pbzip2 "$cache/source")"
say "source: $package"
build_log="$cache/logs/build.log"
: >"$build_log"
patch_file="$here/keep-freed-memory.patch"
# pbzip2's Makefile appends its own flags (-pthread, -D_FILE_OFFSET_BITS=64, ...) to CXXFLAGS
# from the environment. -Wno-reserved-user-defined-literal: its "%"PRIuMAX"" strings are an
# error for clang in C++11 and later, a warning for g++.
base_cxxflags="-O2 -Wno-reserved-user-defined-literal"
tool_stamp() { stat -c '%n %s %Y' "$@" 2>/dev/null | tr '\n' ' '; }
build_variant() { # NAME CXX CXXFLAGS [PATCH]
  local name="$1" cxx="$2" cxxflags="$3" patch="${4:-}" dir="$cache/build/$1" key
  key="$package|$cxx|$cxxflags|$(tool_stamp "$clangxx")"
  [ -z "$patch" ] || key="$key|$(cat "$patch")"
  [ "$name" != causal ] || key="$key|$(tool_stamp "$build/bin/causal-clang++" \
    "$build/lib/causal/CausalPlugin.so" "$build/libexec/causal/ld")"
  if [ -x "$cache/bin/pbzip2.$name" ] && [ "$(cat "$dir.key" 2>/dev/null)" = "$key" ]; then
    say "build $name: up to date"
    return
  fi
  say "building $name"
  rm -rf "$dir" "$dir.key" "$cache/bin/pbzip2.$name"
  cp -a "$cache/source" "$dir"
  if [ -n "$patch" ]; then
    patch -d "$dir" -p1 <"$patch" >>"$build_log" 2>&1 || die "applying $patch failed, see $build_log"
  fi
  {
    echo "== $name: CXXFLAGS='$cxxflags' make CXX=$cxx"
    (cd "$dir" && CXXFLAGS="$cxxflags" make CXX="$cxx" pbzip2)
  } >>"$build_log" 2>&1 || die "building pbzip2 ($name) failed, see $build_log"
  cp "$dir/pbzip2" "$cache/bin/pbzip2.$name"
  echo "$key" >"$dir.key"
}
progress_fn=outputBufferAdd
build_variant plain "$clangxx" "$base_cxxflags"
build_variant causal "$build/bin/causal-clang++" \
  "$base_cxxflags -fcausal-profile -fcausal-progress-fn=$progress_fn"
build_variant changed "$clangxx" "$base_cxxflags" "$patch_file"

# ---- 2. input and the reference output -----------------------------------------------------
input="$cache/input-${input_mb}MB.txt"
if [ ! -f "$input" ] || [ "$(stat -c %s "$input")" != $((input_mb * 1000000)) ]; then
  say "making the input (${input_mb} MB)"
  rm -f "$cache"/input-*MB.txt
  python3 "$here/make_input.py" $((input_mb * 1000000)) "$input.tmp"
  mv "$input.tmp" "$input"
fi
out="$cache/out"
rm -f "$out"/*
compress() { # BINARY OUTPUT: the command every variant runs
  "$1" -p"$threads" -9 -c <"$input" >"$2"
}
say "reference output (plain)"
compress "$cache/bin/pbzip2.plain" "$out/plain.bz2"
bzip2 -dc "$out/plain.bz2" | cmp -s - "$input" ||
  die "the plain build's output does not decompress to the input"

# ---- 3. profile and confirm ----------------------------------------------------------------
profile="$cache/profile.coz"
rm -f "$profile" "$cache/report.txt" "$cache/report.json"
bench_mark_start
uptime_before="$(uptime)"
say "profiling: causal run --confirm=$confirm --confirm-budget $confirm_budget, $loops pbzip2 run(s) per command"
profile_start=$SECONDS
status=0
profile_env=()
[ -z "$stack_copy_bytes" ] || profile_env=("CAUSAL_STACK_COPY_BYTES=$stack_copy_bytes")
# shellcheck disable=SC2016 # the loop is bash -c's program, its arguments follow
env "${profile_env[@]}" "$causal" run --confirm="$confirm" --confirm-budget "$confirm_budget" --output "$profile" -- \
  bash -c 'for _ in $(seq "$1"); do "$2" -p"$3" -9 -c <"$4" >"$5" || exit; done' \
  _ "$loops" "$cache/bin/pbzip2.causal" "$threads" "$input" "$out/causal.bz2" \
  2>"$cache/logs/causal-run.log" || status=$?
if [ "${status:-0}" != 0 ]; then
  # A profile too short to rank a line has nothing to confirm: reported, not fatal.
  grep -q 'ranks no line, so there is nothing to confirm' "$cache/logs/causal-run.log" || {
    tail -n 5 "$cache/logs/causal-run.log" >&2
    die "causal run failed (status $status), see $cache/logs/causal-run.log"
  }
  say "the profile ranks no line: nothing confirmed (run longer: --loops, --input-mb)"
fi
profile_s=$((SECONDS - profile_start))
profiled_same=different
cmp -s "$out/causal.bz2" "$out/plain.bz2" && profiled_same=same
say "profiled runs and confirmation: ${profile_s} s; output $profiled_same as plain's"
"$causal" report --top 5 "$profile" >"$cache/report.txt" 2>&1 || die "causal report failed"
"$causal" report --json --top 5 "$profile" >"$cache/report.json" 2>/dev/null
"$causal" report --samples --top 5 "$profile" >"$cache/report-samples.txt" 2>&1 || true
"$causal" report --samples --json --top 0 "$profile" >"$cache/report-samples.json" 2>/dev/null

# ---- 4. the real change, timed -------------------------------------------------------------
runs="$cache/runs.tsv"
printf 'round\tvariant\twall_s\tuser_s\tsys_s\tminor_faults\tsame_output\n' >"$runs"
say "timed runs: plain and changed interleaved, $reps each"
for round in $(seq 1 "$reps"); do
  order="plain changed"
  [ $((round % 2)) = 1 ] || order="changed plain"
  for variant in $order; do
    /usr/bin/time -o "$cache/logs/time.$variant.$round" -f '%e %U %S %R' \
      "$cache/bin/pbzip2.$variant" -p"$threads" -9 -c <"$input" >"$out/$variant.$round.bz2"
    read -r wall user sys faults <"$cache/logs/time.$variant.$round"
    same=0
    cmp -s "$out/$variant.$round.bz2" "$out/plain.bz2" && same=1
    rm -f "$out/$variant.$round.bz2"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$variant" "$wall" "$user" "$sys" "$faults" \
      "$same" >>"$runs"
    say "round $round $variant: ${wall} s, ${user} s user, ${sys} s system, $faults faults, same output $same"
  done
done
load_after="$(bench_load)"
uptime_after="$(uptime)"

# ---- 5. results ------------------------------------------------------------------------------
bench_context_header "$started" "$load_before" "$load_after" \
  "pbzip2 -p$threads -9 -c, ${input_mb} MB of generated text; profiled command: $loops run(s); confirm $confirm line(s), ${confirm_budget} s each; CAUSAL_STACK_COPY_BYTES ${stack_copy_bytes:-unset}" \
  "$package"
python3 - "$cache" "$runs" "$progress_fn" "$profiled_same" "$profile_s" "$uptime_before" \
  "$uptime_after" <<'EOF' >"$cache/results.md"
import json, os, re, statistics, sys
cache, runs_path, point, profiled_same, profile_s, up_before, up_after = sys.argv[1:8]
print(os.environ["BENCH_HEADER"])
print("uptime before: %s" % up_before.strip())
print("uptime after: %s" % up_after.strip())
print()
report = json.load(open(os.path.join(cache, "report.json")))

# Samples per line: `causal report --samples --json` (the A/B runs left out, as in the ranking).
hot = json.load(open(os.path.join(cache, "report-samples.json")))
total_samples = hot["total_samples"]
samples = {h["location"]: h["samples"] for h in hot["lines"]}

def short(line):
    return line.split("/build/causal/", 1)[-1]

def sample_cell(line):
    n = samples.get(line)
    if n is None:
        return "-"
    return "%d (%.1f %%)" % (n, 100.0 * n / total_samples)

def ci(pair, scale=1.0, fmt="%+.2f"):
    if not pair:
        return "[-]"
    return "[" + fmt % (pair[0] * scale) + ", " + fmt % (pair[1] * scale) + "]"

print("Profile: %d run(s) of pbzip2, %d experiments (%.0f s of experiments), A/B runs kept "
      "apart: %d run(s), %d experiments; progress point %s: %s visits. Profiled command and "
      "its confirmation took %s s; the profiled output was %s as the plain build's." % (
          report["runs"], report["experiments"], report["experiment_time_ns"] / 1e9,
          report.get("confirmation_runs", 0), report.get("confirmation_experiments", 0), point,
          sum(p["visits"] for p in report["progress_points"]), profile_s, profiled_same))
print()
print("Top lines of `causal report` (ranked by slope; samples: `causal report --samples`, "
      "share of all samples): a row is a line; slope = program speedup per unit of line "
      "speedup with its 95 % interval; the confirmation: verdict, A/B program speedup D at "
      "the A/B speedup S with its interval, the ranking's prediction P = slope x S, pairs.")
print()
print("| rank | line | function | samples | experiments | slope [95 % CI] | verdict | D at S [95 % CI] | P [95 % CI] | pairs |")
print("|---|---|---|---|---|---|---|---|---|---|")
for entry in report.get("lines", []):
    pt = entry["points"][0]
    c = entry.get("confirmation")
    if c:
        conf = ["**%s**" % c["verdict"],
                "%+.1f %% at %d %% %s" % (100 * c["estimate"], round(100 * c["speedup"]),
                                          ci(c.get("ci"), 100, "%+.1f")),
                ("%+.1f %% %s" % (100 * c["prediction"], ci(c.get("prediction_ci"), 100, "%+.1f"))
                 if c.get("prediction") is not None else "-"),
                str(c["pairs"])]
    else:
        conf = ["not confirmed", "-", "-", "-"]
    print("| %s | `%s` | %s | %s | %d | %+.2f %s | %s |" % (
        str(entry["rank"]) + ("" if entry.get("discovery", True) else "?"), short(entry["line"]),
        entry.get("function") or "-", sample_cell(entry["line"]), pt["experiments"],
        pt["slope"], ci(pt.get("slope_ci")), " | ".join(conf)))
for c in report.get("confirmations", []):
    if c.get("rank") is None:
        print("| - | `%s` | (not ranked) | %s | - | - | **%s** | %+.1f %% at %d %% | - | %d |" % (
            short(c["line"]), sample_cell(c["line"]), c["verdict"], 100 * c["estimate"],
            round(100 * c["speedup"]), c["pairs"]))
print()
nd = report.get("not_enough_data", [])
if nd:
    print("Not ranked (too little data): " + "; ".join(
        "`%s` (%s samples)" % (short(n["line"]), n.get("samples", "?")) for n in nd[:5]) + ".")
    print()

rows = [r.rstrip("\n").split("\t") for r in open(runs_path)][1:]
def col(variant, i):
    return [float(r[i]) for r in rows if r[1] == variant]
wall = {v: col(v, 2) for v in ("plain", "changed")}
cpu = {v: [u + s for u, s in zip(col(v, 3), col(v, 4))] for v in ("plain", "changed")}
faults = {v: col(v, 5) for v in ("plain", "changed")}
same = {v: all(r[6] == "1" for r in rows if r[1] == v) for v in ("plain", "changed")}
med = statistics.median
print("The real change (bench/pbzip2/keep-freed-memory.patch: `mallopt(M_MMAP_THRESHOLD, 32 MB)` "
      "and `mallopt(M_TRIM_THRESHOLD, 256 MB)` at the start of main, so the 7.5 MB of arrays each "
      "BZ2_bzBuffToBuffCompress call allocates and frees stay mapped for the next block) against "
      "plain, interleaved runs: a row is a build, median (min-max) over %d runs each." % len(wall["plain"]))
print()
user = {v: col(v, 3) for v in ("plain", "changed")}
system = {v: col(v, 4) for v in ("plain", "changed")}
def mm(xs):
    return "%.2f (%.2f-%.2f)" % (med(xs), min(xs), max(xs))
print("| build | wall s | CPU s (user + system) | user s | system s | minor page faults | output |")
print("|---|---|---|---|---|---|---|")
for v in ("plain", "changed"):
    print("| %s | %s | %s | %s | %s | %.0f | %s |" % (
        v, mm(wall[v]), mm(cpu[v]), mm(user[v]), mm(system[v]), med(faults[v]),
        "same as plain's in every run" if same[v] else "DIFFERENT in some run"))
print()
program = 1 - med(wall["changed"]) / med(wall["plain"])
cpu_saved = 1 - med(cpu["changed"]) / med(cpu["plain"])
print("Measured: program speedup %+.1f %% (1 - median wall changed / median wall plain); CPU "
      "time %+.1f %%." % (100 * program, -100 * cpu_saved))
top = report["lines"][0] if report.get("lines") else None
if top and top.get("confirmation") and total_samples:
    c = top["confirmation"]
    share = samples.get(top["line"], 0) / total_samples
    line_speedup = cpu_saved / share if share else float("nan")
    print("The top line `%s` has %.1f %% of the samples; if the CPU time saved was all its own, "
          "the change sped the line up by about %.0f %%. The confirmation measured D = %+.1f %% "
          "at S = %d %%; scaled linearly to %.0f %%: %+.1f %%; the slope's prediction at %.0f %%: "
          "%+.1f %%." % (short(top["line"]), 100 * share, 100 * line_speedup, 100 * c["estimate"],
                         round(100 * c["speedup"]), 100 * line_speedup,
                         100 * c["estimate"] * line_speedup / c["speedup"], 100 * line_speedup,
                         100 * top["points"][0]["slope"] * line_speedup))
EOF
cat "$cache/results.md"
say "results: $cache/results.md; report: $cache/report.txt"
