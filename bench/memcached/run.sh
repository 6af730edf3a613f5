#!/usr/bin/env bash
# bench/memcached/run.sh - causal vs Coz on a real server: memcached under a load generator.
#
# README
#   memcached (Debian bookworm's source package, fetched once with `apt-get source` into the
#   cache directory, never committed) is configured once with its own configure script and
#   built three ways:
#     (a) plain    clang -O2 (CAUSAL_CLANG of the build tree)
#     (b) off      causal-clang -fcausal-profile -fcausal-progress-fn=resp_finish -O2, run with
#                  CAUSAL_DISABLE=1; the progress point is named at build time, no source change
#     (c) causal   the same binary under `causal run` (experiments on, default settings)
#     (d) coz      clang -O2 -g -gdwarf-4 under `coz run`. Coz has no build-time progress points,
#                  so this script patches ITS COPY of memcached.c (in the cache directory):
#                  `#include <coz.h>` and COZ_PROGRESS_NAMED("resp_finish") before the return of
#                  resp_finish(), i.e. the same point as (b).
#   resp_finish() (memcached.c) releases a response after it was sent: one visit per request.
#   Each run starts `memcached -t 2 -U 0 -l 127.0.0.1` on a free loopback port, waits until it
#   accepts connections, drives it with memaslap (Debian: memcaslap, libmemcached-tools;
#   1 thread, 16 connections, 90 % get / 10 % set) for a fixed time, checks the server with a
#   fixed set/get/delete exchange, and stops it with SIGTERM (memcached then returns from main,
#   so both profilers write their profile at exit). Variants are interleaved within rounds,
#   the order rotating per round. Reported: ops/s (memaslap's TPS) per variant, median and
#   min-max over the rounds, the ratio to (a), experiments per profiled run, and the top 5
#   lines of `causal report` on our profiles and on Coz's (our reader reads both), side by side.
#   A run counts as correct when the server exits 0, prints on stdout what (a) prints (nothing),
#   and gives the expected answers to the check exchange (STORED, the value, DELETED, a miss).
#   Run time: --budget-s (default 480 s) including the build. First use: about 100 s to fetch,
#   configure and build on 2 vCPUs (the fetch and configure are cached; each variant is rebuilt
#   when its compiler or the causal tools changed). The rest is split over 3 rounds, profiled
#   runs 2.5x as long as unprofiled ones, at most 12 s / 30 s, plus about 4 s per run to start,
#   check and stop: 3 rounds took 4.8 minutes, i.e. about 6.5 minutes with a fresh build.
#   --quick: 1 round of 3 s / 8 s runs, about 35 s with a cached build (+ about 100 s for a
#   fresh one); its numbers are not for publication.
#   --before-build DIR adds a variant (f): (c) built and run with another causal build (e.g. of
#   the commit before a change), its top lines read by that build's own `causal report`, beside
#   (c)'s: the two from the same conditions.
#   --waits-s N adds a variant (e) `causal run --waits` (the off-CPU recording of
#   docs/waits.md, with experiments) of N seconds to every round, and reports the sidecar's
#   size (bytes per second of run and scaled to 60 s), episodes and drops, and the knots of
#   `causal waits` over its runs, per thread and merged by role (<cache-dir>/waits.txt).
#   --change-args "ARGS" adds a variant (g) `changed`: the plain build started with ARGS added to
#   its command line (a real change to the server, e.g. "-o hashpower=18" for shorter hash
#   chains), run as long as (a) in every round: its true effect is its ops/s over (a)'s of the
#   same round, reported per round and as a median.
#
# usage: bench/memcached/run.sh [--build-dir DIR] [--cache-dir DIR] [--budget-s N] [--quick]
#                               [--rounds N] [--skip-coz] [--waits-s N] [--before-build DIR]
#                               [--change-args ARGS]
#   --build-dir  causal build tree or install prefix (default: $CAUSAL_BUILD_DIR, else
#                ../../build relative to this script)
#   --cache-dir  source package, builds, profiles and results
#                (default: <build-dir>/bench-cache/memcached)
#   --budget-s   wall-clock seconds for the whole script (default 480)
#   --quick      smoke run: 1 round of short runs
#   --rounds     rounds (default 3; --quick: 1)
#   --skip-coz   leave out variant (d)
#   --waits-s    add variant (e), runs of N seconds
#   --before-build  a second causal build tree, variant (f)
#   --change-args   server arguments of variant `changed` (the plain build otherwise)
# Needs: libevent-dev (memcached's build), libmemcached-tools (memaslap), coz-profiler, dpkg-dev
# (dpkg-source), network access for the one-time `apt-get source memcached`.
# Results: stdout and <cache-dir>/results.md (Markdown); raw figures <cache-dir>/runs.tsv and
# report.{causal,coz}.json (`causal report --json`); logs, profiles, memaslap output under
# <cache-dir>/runs/, the build log <cache-dir>/build.log. Writes nothing outside the cache dir.
set -euo pipefail

script_start=$SECONDS
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
budget=480 quick=0 rounds="" skip_coz=0 waits_s="" before="" change_args=""
bench_args "--budget-s=budget --quick=quick! --rounds=rounds --skip-coz=skip_coz! --waits-s=waits_s \
  --before-build=before --change-args=change_args" "$@"
[ -z "$waits_s" ] || bench_positive --waits-s "$waits_s"
bench_positive --budget-s "$budget"
[ -n "$rounds" ] || { [ "$quick" = 1 ] && rounds=1 || rounds=3; }
bench_positive --rounds "$rounds"
bench_setup memcached "" bin/causal bin/causal-clang

say() { echo "memcached: $*" >&2; }
die() { echo "run.sh: $*" >&2; exit 1; }

loadgen="$(command -v memcaslap || command -v memaslap || true)"
[ -n "$loadgen" ] || die "memaslap missing (Debian: apt-get install libmemcached-tools)"
[ -f /usr/include/event2/event.h ] || die "libevent headers missing (Debian: apt-get install libevent-dev)"
bench_check_coz
variants="plain off causal$with_coz"
[ -z "$waits_s" ] || variants="$variants waits"
if [ -n "$before" ]; then
  before="$(cd "$before" && pwd)"
  for tool in bin/causal bin/causal-clang lib/causal/CausalPlugin.so libexec/causal/ld; do
    [ -e "$before/$tool" ] || die "--before-build: no $before/$tool"
  done
  variants="$variants before"
fi
[ -z "$change_args" ] || variants="$variants changed"

# ---- 1. memcached's Debian source package, fetched once ------------------------------------
# bench/common/fetch-debian-source.sh: a private apt configuration (deb-src entries derived from
# this machine's deb entries, lists and downloads beside the source); /etc/apt is not touched.
package="$("$here/../common/fetch-debian-source.sh" memcached "$cache/source")"
[ -f "$cache/source/memcached.c" ] || die "$cache/source has no memcached.c: remove it and run again"
say "source: $package"

# ---- 2. configure once, build three ways ---------------------------------------------------
mkdir -p "$cache/bin" "$cache/build"
build_log="$cache/build.log"
: >"$build_log"
configured="$cache/build/configured"
configure_key="$package $("$clang" --version | head -n 1)"
if [ ! -f "$configured/.causal-key" ] || [ "$(cat "$configured/.causal-key")" != "$configure_key" ]; then
  say "configuring (once per source package and compiler)"
  rm -rf "$configured"
  cp -a "$cache/source" "$configured"
  (cd "$configured" && CC="$clang" CFLAGS=-O2 ./configure --disable-docs) >>"$build_log" 2>&1 ||
    die "memcached's configure failed, see $build_log"
  echo "$configure_key" >"$configured/.causal-key"
fi
# configure's CFLAGS (-O2 and its warning flags) minus -Werror, the same for every variant: the
# profilers' flags and coz.h are not what memcached's -Werror is meant for.
base_cflags="$(sed -n 's/^CFLAGS = //p' "$configured/Makefile" | sed 's/-Werror\( \|$\)//')"
base_libs="$(sed -n 's/^LIBS = //p' "$configured/Makefile")"

# Each variant is rebuilt when its compiler command or the causal tools it depends on changed.
tool_stamp() { stat -c '%n %s %Y' "$@" 2>/dev/null | tr '\n' ' '; }
causal_tools=("$build/bin/causal-clang" "$build/lib/causal/CausalPlugin.so"
  "$build/libexec/causal/ld")
# COZ_PROGRESS_NAMED("resp_finish") before the one return of resp_finish(), coz.h included
# after memcached.h. Checked: exactly one point and one include, else the build stops.
coz_patch='      /^#include "memcached.h"$/ && !inc { print; print "#include <coz.h>"; inc = 1; next }
      /^mc_resp\* resp_finish\(conn \*c, mc_resp \*resp\) \{$/ { infn = 1 }
      infn && /^    return next;$/ { print "    COZ_PROGRESS_NAMED(\"resp_finish\");"; points++ }
      infn && /^}/ { infn = 0 }
      { print }
      END { if (!inc || points != 1) exit 1 }'
build_variant() {
  local name="$1" cc="$2" cflags="$3" libs="$4" key dir="$cache/build/$1"
  key="$cc|$cflags|$libs|$(tool_stamp "$clang")"
  [ "$name" != causal ] || key="$key|$(tool_stamp "${causal_tools[@]}")"
  [ "$name" != before ] || key="$key|$(tool_stamp "$before/bin/causal-clang" \
    "$before/lib/causal/CausalPlugin.so" "$before/libexec/causal/ld")"
  [ "$name" != coz ] || key="$key|$coz_patch"
  if [ -x "$cache/bin/memcached.$name" ] && [ -f "$dir.key" ] && [ "$(cat "$dir.key")" = "$key" ]; then
    say "build $name: up to date"
    return
  fi
  say "building $name"
  rm -rf "$dir" "$dir.key" "$cache/bin/memcached.$name"
  cp -a "$configured" "$dir"
  if [ "$name" = coz ]; then
    awk "$coz_patch" "$configured/memcached.c" >"$dir/memcached.c" ||
      die "patching memcached.c for Coz failed: resp_finish() or its return not found as expected"
  fi
  {
    echo "== $name: make CC=$cc CFLAGS=$cflags LIBS=$libs"
    (cd "$dir" && make -j2 memcached CC="$cc" CFLAGS="$cflags" LIBS="$libs")
  } >>"$build_log" 2>&1 || die "building memcached ($name) failed, see $build_log"
  cp "$dir/memcached" "$cache/bin/memcached.$name"
  echo "$key" >"$dir.key"
}
build_variant plain "$clang" "$base_cflags" "$base_libs"
build_variant causal "$build/bin/causal-clang" \
  "$base_cflags -fcausal-profile -fcausal-progress-fn=resp_finish" "$base_libs"
[ "$skip_coz" = 1 ] || build_variant coz "$clang" "$base_cflags -g -gdwarf-4" "$base_libs -ldl"
[ -z "$before" ] || build_variant before "$before/bin/causal-clang" \
  "$base_cflags -fcausal-profile -fcausal-progress-fn=resp_finish" "$base_libs"
build_s=$((SECONDS - script_start))
say "build done after ${build_s} s"

# ---- 3. run lengths from the budget ----------------------------------------------------------
# A round: (a) and (b) run D s, (c) and (d) P = 2.5 D s; each run also takes about 6 s to start,
# check and stop. 40 s are kept for the reports.
nvariants=$(wc -w <<<"$variants")
if [ "$quick" = 1 ]; then
  plain_s=3
  profiled_s=8
else
  left=$((budget - build_s - 40))
  per_round=$((left / rounds - 6 * nvariants))
  # D from per_round = 2 D + (nvariants - 2) * 2.5 D
  plain_s=$((per_round * 2 / (4 + 5 * (nvariants - 2))))
  [ "$plain_s" -le 12 ] || plain_s=12
  if [ "$plain_s" -lt 4 ]; then
    say "budget too small for $rounds rounds after the build (${build_s} s); using 4 s / 10 s runs"
    plain_s=4
  fi
  profiled_s=$((plain_s * 5 / 2))
fi
say "$rounds round(s): ${plain_s} s unprofiled, ${profiled_s} s profiled runs"

# ---- 4. one run ------------------------------------------------------------------------------
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# A fixed exchange whose answers must be the same for every variant.
check_server() {
  timeout 10 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "set causal_check 0 0 5\r\nhello\r\nget causal_check\r\ndelete causal_check\r\nget causal_check\r\nquit\r\n" >&3
    cat <&3' _ "$1" | tr -d '\r'
}
expected_check="$(printf 'STORED\nVALUE causal_check 0 5\nhello\nEND\nDELETED\nEND')"
runs_dir="$cache/runs"
rm -rf "$runs_dir"
mkdir -p "$runs_dir"
user="$(id -un)"

# run_one VARIANT ROUND SECONDS: prints "ops_per_s status same_output experiments"
run_one() {
  local variant="$1" round="$2" secs="$3" port base bin
  port="$(free_port)"
  base="$runs_dir/$variant.$round"
  local pidfile="$base.pid" profile="$base.profile.coz"
  local -a server=(-u "$user" -l 127.0.0.1 -p "$port" -U 0 -t 2 -m 64 -c 1024 -P "$pidfile")
  case "$variant" in
    plain) bin=("$cache/bin/memcached.plain") ;;
    changed) bin=("$cache/bin/memcached.plain" $change_args) ;;
    off) bin=(env CAUSAL_DISABLE=1 "$cache/bin/memcached.causal") ;;
    causal) bin=("$build/bin/causal" run --quiet --output "$profile" -- "$cache/bin/memcached.causal") ;;
    waits) bin=("$build/bin/causal" run --quiet --waits --output "$profile" -- "$cache/bin/memcached.causal") ;;
    coz) bin=(coz run -o "$profile" --- "$cache/bin/memcached.coz") ;;
    before) bin=("$before/bin/causal" run --output "$profile" -- "$cache/bin/memcached.before") ;;
  esac
  "${bin[@]}" "${server[@]}" >"$base.stdout" 2>"$base.stderr" &
  local wrapper=$! t=0 pid=""
  # Ready: the pid file is written after the listening sockets are open.
  while [ $t -lt 300 ]; do
    if [ -s "$pidfile" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      pid="$(cat "$pidfile")"
      break
    fi
    kill -0 "$wrapper" 2>/dev/null || break
    sleep 0.1
    t=$((t + 1))
  done
  local ops="-" status=0 same=0
  if [ -n "$pid" ]; then
    timeout $((secs + 60)) "$loadgen" -s "127.0.0.1:$port" -t "${secs}s" -T 1 -c 16 \
      >"$base.loadgen" 2>&1 || true
    ops="$(sed -n 's/.*TPS: \([0-9][0-9]*\).*/\1/p' "$base.loadgen" | tail -n 1)"
    [ -n "$ops" ] || ops="-"
    check_server "$port" >"$base.check" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
  else
    echo "server did not start within 30 s" >>"$base.stderr"
  fi
  # memcached leaves its event loop within about a second of SIGTERM; the profilers then write.
  t=0
  while kill -0 "$wrapper" 2>/dev/null && [ $t -lt 300 ]; do sleep 0.1; t=$((t + 1)); done
  if kill -0 "$wrapper" 2>/dev/null; then
    echo "still running 30 s after SIGTERM: killed" >>"$base.stderr"
    [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null || true
    kill -KILL "$wrapper" 2>/dev/null || true
  fi
  wait "$wrapper" || status=$?
  # Same stdout as (a) in round 1 (memcached prints nothing) and the expected check answers.
  if cmp -s "$base.stdout" "$runs_dir/plain.1.stdout" &&
    [ "$(cat "$base.check")" = "$expected_check" ]; then
    same=1
  fi
  local exps="-"
  [ -f "$profile" ] && exps="$(grep -c '^experiment' "$profile" || true)"
  echo "$ops $status $same $exps"
}

runs="$cache/runs.tsv"
printf 'round\tvariant\tseconds\tops_per_s\tstatus\tsame_output\texperiments\n' >"$runs"
bench_mark_start
read -r -a variant_list <<<"$variants"
for round in $(seq 1 "$rounds"); do
  # (a) first in round 1: every other run's output is compared with it.
  for k in $(seq 0 $((nvariants - 1))); do
    variant="${variant_list[$(((k + round - 1) % nvariants))]}"
    case "$variant" in plain | off | changed) secs=$plain_s ;; waits) secs=$waits_s ;; *) secs=$profiled_s ;; esac
    read -r ops status same exps <<<"$(run_one "$variant" "$round" "$secs")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$variant" "$secs" "$ops" "$status" "$same" \
      "$exps" >>"$runs"
    say "round $round $variant: $ops ops/s, exit $status, same output $same, experiments $exps"
  done
done
load_after="$(bench_load)"

# ---- 5. reports --------------------------------------------------------------------------------
report_json() { # PROFILER: all rounds' profiles combined
  local -a files=()
  local reader="$build/bin/causal"
  [ "$1" != before ] || reader="$before/bin/causal"
  local f
  for f in "$runs_dir"/"$1".*.profile.coz; do [ -s "$f" ] && files+=("$f"); done
  if [ ${#files[@]} -eq 0 ]; then
    echo '{"error": "no profile written"}'
    return
  fi
  "$reader" report --json --top 5 --bootstrap 200 --point resp_finish "${files[@]}" \
    2>"$cache/report.$1.stderr" || echo '{"error": "causal report failed"}'
}
rm -f "$cache"/report.*.json "$cache"/report.*.stderr
report_json causal >"$cache/report.causal.json"
[ "$skip_coz" = 1 ] || report_json coz >"$cache/report.coz.json"
[ -z "$before" ] || report_json before >"$cache/report.before.json"

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
coz_version="$(dpkg-query -W -f='${Version}' coz-profiler 2>/dev/null || echo '?')"
loadgen_version="$(dpkg-query -W -f='${Version}' libmemcached-tools 2>/dev/null || echo '?')"
python3 - "$runs" "$cache" "$rounds" <<EOF >"$cache/results.md"
import csv, json, os, statistics, sys
runs_path, cache, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = list(csv.DictReader(open(runs_path), delimiter="\t"))
order = [v for v in ("plain", "off", "changed", "causal", "coz", "waits", "before")
         if any(r["variant"] == v for r in rows)]
label = {"plain": "(a) plain clang -O2", "off": "(b) -fcausal-profile, CAUSAL_DISABLE=1",
         "causal": "(c) causal run", "coz": "(d) coz run", "waits": "(e) causal run --waits",
         "before": "(f) causal run, the --before-build",
         "changed": "(g) plain, started with $change_args"}
ops = {(r["variant"], r["round"]): float(r["ops_per_s"]) for r in rows if r["ops_per_s"] != "-"}
secs = {r["variant"]: r["seconds"] for r in rows}

def mm(xs, fmt):
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(xs), min(xs), max(xs))

print("memcached ($package, \`-t 2\`, loopback) driven by memaslap (libmemcached-tools "
      "$loadgen_version: 1 thread, 16 connections, 90 % get / 10 % set); progress point: "
      "each return of resp_finish(), one per request.")
print()
print("machine: $cpu, $(nproc) vCPUs, Linux $(uname -r), perf_event_paranoid "
      "$(cat /proc/sys/kernel/perf_event_paranoid)")
print("date: $started; %d round(s), variants interleaved; load average before $load_before, "
      "after $load_after" % rounds)
print("compilers: $("$clang" --version | head -1); coz-profiler $coz_version")
print()
print("A row is one build/run mode; ops/s is memaslap's TPS over the run (profiled runs include "
      "the delays the profiler inserts), median (min-max) over "
      "the rounds; the ratio is per round against (a) of the same round.")
print()
print("| variant | run s | ops/s, median (min-max) | ratio to (a), median (min-max) "
      "| experiments per run, median (min-max) | correct runs |")
print("|---|---|---|---|---|---|")
for v in order:
    vr = [r for r in rows if r["variant"] == v]
    t = [ops[(v, r["round"])] for r in vr if (v, r["round"]) in ops]
    ratios = [ops[(v, r["round"])] / ops[("plain", r["round"])] for r in vr
              if (v, r["round"]) in ops and ("plain", r["round"]) in ops]
    exps = [int(r["experiments"]) for r in vr if r["experiments"] not in ("-", "")]
    good = sum(1 for r in vr if r["status"] == "0" and r["same_output"] == "1" and r["ops_per_s"] != "-")
    print("| %s | %s | %s | %s | %s | %d of %d |" % (
        label[v], secs[v], mm(t, "%.0f") if t else "-",
        ("1" if v == "plain" else mm(ratios, "%.2f")) if ratios else "-",
        mm(exps, "%.0f") if exps and v in ("causal", "coz", "waits", "before") else "-", good,
        len(vr)))
print()
bad = [r for r in rows if r["status"] != "0" or r["same_output"] != "1" or r["ops_per_s"] == "-"]
if bad:
    print("runs that failed, gave no ops/s, or printed/answered something else than expected:")
    for r in bad:
        print("  round %s %s: exit status %s, same output %s, ops/s %s" % (
            r["round"], r["variant"], r["status"], r["same_output"], r["ops_per_s"]))
else:
    print("every server exited 0 after SIGTERM, printed what (a) printed and answered the check "
          "exchange (set, get, delete, get) as expected.")
print()
gains = [ops[("changed", r)] / ops[("plain", r)] - 1 for r in sorted({r["round"] for r in rows})
         if ("changed", r) in ops and ("plain", r) in ops]
if gains:
    print("The change (\`$change_args\`), its true effect: ops/s of (g) over (a) of the same "
          "round, minus one: median %+.1f %% (min %+.1f %%, max %+.1f %%) over %d rounds; per "
          "round: %s." % (100 * statistics.median(gains), 100 * min(gains), 100 * max(gains),
                          len(gains), ", ".join("%+.1f %%" % (100 * g) for g in gains)))
    print()

def top(profiler):
    path = os.path.join(cache, "report.%s.json" % profiler)
    if not os.path.exists(path):
        return None, "not run"
    try:
        data = json.load(open(path))
    except ValueError:
        return None, "unreadable report"
    if "error" in data:
        return None, data["error"]
    return data, ""

reports = {p: top(p) for p in ("causal", "coz", "before") if p in order}
columns = [p for p in ("causal", "coz", "before") if p in order]
heads = {"causal": "causal", "coz": "Coz", "before": "causal before"}
print("Top 5 lines of \`causal report --top 5\` (the same reader for both profiles, default "
      "ranking by slope, 95 % bootstrap intervals) over all rounds' profiles of each profiler. "
      "A row is a rank; slope = program speedup (rate of resp_finish) per unit of line speedup, "
      "max = the largest predicted program speedup and the line speedup it was measured at.")
print()

def short(line):
    # .../build/<variant>/thread.c:122 -> thread.c:122
    for v in ("causal", "coz", "before"):
        mark = "/build/%s/" % v
        if mark in line:
            return line.split(mark, 1)[1]
    return line

def cells(data, rank):
    lines = data.get("lines", []) if data else []
    if rank >= len(lines):
        return ["-", "-", "-"]
    entry = lines[rank]
    pt = entry["points"][0]
    ci = pt.get("slope_ci") or [float("nan")] * 2
    return ["\`%s\` (%d exp.)" % (short(entry["line"]), pt["experiments"]),
            "%+.2f [%+.2f, %+.2f]" % (pt["slope"], ci[0], ci[1]),
            "%+.1f %% @ %.0f %%" % (100 * pt["max_impact"], 100 * pt["max_impact_speedup"])]

print("| rank |" + "".join(" %s: line | slope [95 %% CI] | max |" % heads[p] for p in columns))
print("|---|" + "---|---|---|" * len(columns))
for rank in range(5):
    row = [str(rank + 1)]
    for p in columns:
        data, err = reports.get(p, (None, "not run"))
        row += cells(data, rank)
    print("| " + " | ".join(row) + " |")
print()
for p, name in (("causal", "causal run"), ("coz", "coz run"), ("before", "causal run, before")):
    if p not in reports:
        continue
    data, err = reports[p]
    if data is None:
        print("- %s: %s." % (name, err))
        continue
    points = {q["name"]: q["visits"] for q in data.get("progress_points", [])}
    print("- %s: %d experiments in %d run(s) (%d used), %.0f s of experiments; resp_finish "
          "visits recorded: %s; %d line(s) with a curve (>= 5 distinct speedups incl. 0 %%), "
          "%d line(s) with too little data." % (
              name, data["experiments"], data["runs"], data["experiments_used"],
              data["experiment_time_ns"] / 1e9, points.get("resp_finish", 0),
              len(data.get("lines", [])), len(data.get("not_enough_data", []))))
EOF
# ---- 6. the off-CPU recording (--waits-s) -------------------------------------------------------
if [ -n "$waits_s" ]; then
  waits_files=()
  for f in "$runs_dir"/waits.*.profile.coz; do [ -s "$f.waits" ] && waits_files+=("$f"); done
  {
    echo
    echo "Off-CPU recording, (e): \`causal run --waits\` for ${waits_s} s per round."
    echo
    echo "| round | sidecar bytes | bytes per s | scaled to 60 s | episodes recorded |"
    echo "|---|---|---|---|---|"
    for f in "${waits_files[@]}"; do
      bytes=$(stat -c %s "$f.waits")
      round=$(basename "$f" | cut -d. -f2)
      "$build/bin/causal" waits --json "$f" >"$f.waits.json" 2>/dev/null || true
      python3 - "$f.waits.json" "$bytes" "$waits_s" "$round" <<'PY'
import json, sys
path, size, secs, rnd = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
try:
    data = json.load(open(path))
except ValueError:
    data = {}
print("| %s | %d | %.0f | %.1f MB | %s |" % (rnd, size, size / secs, size / secs * 60 / 1e6,
      data.get("episodes", "?")))
PY
    done
    echo
    echo "\`causal waits\` of each round's (e) run, merged by role and per thread: <cache-dir>/waits.txt."
  } >>"$cache/results.md"
  for f in "${waits_files[@]}"; do
    echo "== $(basename "$f"): causal waits --merge-roles"
    "$build/bin/causal" waits --merge-roles "$f" 2>&1 || true
    echo
    echo "== $(basename "$f"): causal waits"
    "$build/bin/causal" waits "$f" 2>&1 || true
    echo
  done >"$cache/waits.txt"
fi

cat "$cache/results.md"
say "results: $cache/results.md, raw: $runs"
