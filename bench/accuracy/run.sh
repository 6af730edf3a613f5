#!/usr/bin/env bash
# bench/accuracy/run.sh - do the predictions come true? Virtual vs real speedups of one line.
#
# README
#   Programs in this folder have a line (marked "// KNOB", or "// AFTER_END" for the
#   afterend case) whose cost is a build-time knob: -DLINE_COST_PERCENT=P (afterend:
#   -DAFTER_COST_PERCENT=P) makes it run P % of its iterations, a real speedup of the
#   line by s = 100 - P %:
#     serial     one thread; the line is 40 % of each round         (right answer: 0.4 s)
#     parallel   Figure 1 of the Coz paper: threads a (the line, CPU 0) and b (80 % of a,
#                CPU 1) meet main at two barriers a round            (min(s, 20 %))
#     lock       two threads (CPUs 0, 1), the line is the critical section of a saturated
#                mutex                                               (s up to 75 %, 87.5 % at 100)
#     openloop   latency: a generator sleeps 3 ms between arrivals; two workers mark
#                BEGIN/END around the request's work, 60 % of it the line  (0.6 s)
#     afterend   openloop's bookkeeping after END: no request waits for it  (0)
#     closedloop latency: two clients wait for their replies from one server; the line is
#                60 % of the service                    (>= 0.6 s: queueing shrinks too)
#     closedshort the closed loop with the line 15 % of the service (0.18 ms a request, less
#                than a sample period); not in the default list
#     heartbeat  throughput of two workers (the line 40 % of a round) beside a thread
#                that sleeps 1 ms between heartbeats                 (0.4 s)
#     barrier    two threads sleep 200 / 800 us, compute 1000 (the line) / 200 us, meet at
#                a barrier                     (at most 16.7 %; a few % with real sleeps)
#   Wait cases (issue 14; not in the default list, `--cases waits` runs them all): the
#   knob scales the length of a WAIT (a sleep, or a reply the program waits for on a
#   socket) on the marked line, and the prediction is a wait experiment, `causal run
#   --fixed-wait FILE:KNOB` (the report names the line "FILE:KNOB (KIND wait)"); Coz cannot
#   select a wait, so its column is n/a for them:
#     devicewait  one thread: a 2 ms timer wait (the line), a 0.1 ms one, ~0.5 ms of CPU a round
#                                                 (0.6-0.7 s: the wait's share)
#     waitbarrier two threads wait 3 ms (A, the line) / 1 ms (B), compute ~0.2 ms, meet at a
#                 barrier                   (1 - max(3 (1 - s) + 0.2, 1.2) / 3.2, about)
#     shortwait   the same program, the line is B's shorter wait (SHORT_KNOB) (0)
#     waitoverlap a reader waits 1 ms per item (the line) and queues it for a worker
#                 that computes 2.5 ms per item: the worker is the bottleneck   (0)
#     netwait     a client waits in recv (the line) for a server process that answers
#                 after 2 ms, then computes ~0.5 ms: a network wait (as devicewait)
#   Path cases (issue 13, P7; not in the default list, `--cases paths` runs them all):
#   pathcaller.c's line KNOB is the one line of the chosen function helper, called by
#   serial_stage on main (the round's critical path: half of it) and by side_stage on a
#   second thread (a fifth of the round; the thread then waits at the barrier anyway). The
#   prediction is an experiment per calling context, `causal run --fixed-line FILE:KNOB
#   --path CALLER` on a build with -fcausal-paths=helper (the report names the line
#   "FILE:KNOB (via CALLER)"); Coz cannot select a calling context, so its column is n/a
#   (but for pathline):
#     viaserial   the line's calls from serial_stage only (knob SERIAL_COST_PERCENT)  (0.5 s)
#     viaside     the line's calls from side_stage only (knob SIDE_COST_PERCENT)     (0)
#     pathline    the line as a whole, a plain --fixed-line experiment (knob LINE_COST_PERCENT:
#                 both callers' calls)                                           (0.5 s)
#   Free runs of viaserial and viaside add --path-experiments (pairs of a line and a caller).
#   Latency cases (openloop, afterend, closedloop) print their own mean latency
#   (BEGIN to END) on standard error (PRINT_MEAN_LATENCY=1); their true effect is 1 - latency(P) / latency(100),
#   the others' 1 - time(P) / time(100).
#   True effect: the plain clang -O2 builds at P = 100 (baseline), 75, 50, 0 are run in
#   each round (--truth-reps times each; the median counts); true program speedup at
#   s = 1 - time(P) / time(100) of the same round (latency cases: mean latencies).
#   Predicted: the baseline program (P = 100) is run under `causal run --fixed-line
#   FILE:KNOB --fixed-speedup S` (causal-clang -fcausal-profile -O2) and under `coz run
#   --fixed-line ... --fixed-speedup S` (clang -O2 -g -gdwarf-4, causal.h mapped to coz.h
#   by bench/overhead/coz_shim.h), S = 0, 25, 50, 100, one run each per round (order
#   reversed every other round), default experiment lengths. Each round's four runs form
#   one profile per profiler; `causal report --json --min-speedups 2` (no evidence minimum: the same analysis
#   for both profilers' files, phase correction on) gives the predicted program speedup at
#   s, with its bootstrap interval. Tables: median and min-max over the rounds; for a line
#   whose right answer is 0, how many rounds' intervals include 0.
#   With 2 rounds or more, the fixed-line profiles of all rounds are also appended to one
#   (<cache-dir>/profiles/CASE.causal.all.coz) and read the same way: the column "causal,
#   rounds in one profile" gives its value at s with its interval, which resamples runs as
#   clusters (docs/report.md, "Runs as clusters") and so holds the run-to-run variation.
#   Every run's output is compared with the baseline's; runs that differ or fail are listed.
#   Programs run at nice -10 where allowed (the two-thread cases assume each thread has its
#   CPU; on a shared 2-vCPU machine other jobs otherwise swamp the effects).
#   With the kernel's autogroups (/proc/sys/kernel/sched_autogroup_enabled) a nice value
#   counts only within its session: beside other sessions' jobs, run the bench in a session
#   of its own at nice -10, e.g. setsid sh -c 'echo -10 > /proc/self/autogroup && exec
#   bench/accuracy/run.sh ...' (the path cases' runs took 3-4x as long without it).
#   Run time: rounds of 12 runs per program of about 0.5-2 s each; 5 rounds took 4.4 minutes
#   (builds included) on a shared 2-vCPU VM at load 3-6. --quick: 1 round of short runs,
#   about 40 s.
#
# usage: bench/accuracy/run.sh [--build-dir DIR] [--cache-dir DIR] [--budget-s N] [--quick]
#                              [--reps N] [--skip-coz] [--cases "serial parallel ..."]
#                              [--free-runs N] [--ab] [--truth-reps N] [--report-only]
#   --build-dir  causal build tree or install prefix (default: $CAUSAL_BUILD_DIR, else
#                ../../build relative to this script)
#   --cache-dir  binaries, profiles and results (default: <build-dir>/bench-cache/accuracy)
#   --budget-s   start another round only if it is expected (mean round time so far) to end
#                within this many seconds of the start (default 480; one round always runs)
#   --quick      smoke run: 1 round, short runs (numbers not for publication)
#   --reps       rounds (default 5)
#   --skip-coz   leave out Coz
#   --free-runs  also N free runs per case and round (`causal run` with no fixed line or
#                speedup, appended to one profile per round): the prediction at s is read
#                from the points of the line's curve within 10 points of s, each scaled
#                linearly to s, weighted by their experiments (default 0: none)
#   --truth-reps plain runs per knob value, case and round (default 1); the round's truth
#                is the median of their times (latency cases: of their mean latencies); a
#                repeat whose output differs from the first run's is listed with status 98
#   --ab         also A/B runs (line and wait cases): per speedup s > 0, `causal run
#                --fixed-line FILE:KNOB --ab-speedup s` (experiments alternate 0 and s within
#                the run, appended to one profile per round); the prediction is the report's
#                confirmation estimate with its interval over pairs (docs/report.md,
#                "Confirmation"), in which the run-to-run changes of the machine's speed
#                cancel: each s window is compared with the 0 windows beside it
#                (predicted.tsv: experiments and pairs in the two experiment columns)
#   --report-only  no builds or runs: the reports and tables again from the profiles and
#                <cache-dir>/runs.tsv of an earlier run (give the same --cases and
#                --free-runs), read by this build's `causal report`
#   --cases      subset of: serial parallel lock openloop afterend closedloop heartbeat
#                barrier (the default: all of these), closedshort, and the wait cases devicewait
#                waitbarrier shortwait waitoverlap netwait and the path cases viaserial
#                viaside pathline; the word "waits" stands for the five wait cases,
#                "paths" for the three path cases
# Results: stdout and <cache-dir>/results.md, raw data <cache-dir>/runs.tsv (run times) and
# <cache-dir>/predicted.tsv (one row per case, profiler, round, speedup). Writes nothing else.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
reps=5 budget=480 quick=0 skip_coz=0 free_runs=0 report_only=0 ab=0 truth_reps=1
cases="serial parallel lock openloop afterend closedloop heartbeat barrier"
bench_args "--budget-s=budget --quick=quick! --reps=reps --skip-coz=skip_coz! --free-runs=free_runs --cases=cases \
--ab=ab! --report-only=report_only! --truth-reps=truth_reps" "$@"
bench_positive --reps "$reps"
bench_positive --truth-reps "$truth_reps"
wait_cases="devicewait waitbarrier shortwait waitoverlap netwait"
path_cases="viaserial viaside pathline"
cases="$(echo " $cases " | sed "s/ waits / $wait_cases /g; s/ paths / $path_cases /g")"
bench_number --budget-s "$budget"
bench_number --free-runs "$free_runs"
[ "$quick" = 0 ] || reps=1
t0=$(date +%s) # the budget counts from here: builds, runs, analysis
bench_setup accuracy "bin profiles out" bin/causal bin/causal-clang
bench_check_coz
profilers="causal$with_coz"

bench_nice_cmd

knobs="100 75 50 0"          # LINE_COST_PERCENT of the true-effect builds
speedups="0 25 50 100"       # virtual speedups of the profiled runs
args_of() {                  # about 1-2.5 s of plain run time each on a 2-vCPU VM
  case "$1:$quick" in
    serial:0) echo 2000 ;;   serial:1) echo 300 ;;    # rounds
    parallel:0) echo 1000 ;; parallel:1) echo 200 ;;  # rounds of two threads
    lock:0) echo 4000 ;;     lock:1) echo 800 ;;      # items per thread
    openloop:0|afterend:0) echo 600 ;; openloop:1|afterend:1) echo 150 ;; # requests
    closedloop:0|closedshort:0) echo 300 ;; closedloop:1|closedshort:1) echo 80 ;; # requests per client
    heartbeat:0) echo 1500 ;; heartbeat:1) echo 300 ;; # rounds per worker
    barrier:0) echo 1000 ;;  barrier:1) echo 200 ;;   # rounds
    devicewait:0|netwait:0) echo 1000 ;; devicewait:1|netwait:1) echo 200 ;; # rounds
    waitbarrier:0|shortwait:0) echo 800 ;; waitbarrier:1|shortwait:1) echo 150 ;; # rounds
    waitoverlap:0) echo 1000 ;; waitoverlap:1) echo 200 ;; # items
    viaserial:0|viaside:0|pathline:0) echo 1000 ;; viaserial:1|viaside:1|pathline:1) echo 200 ;; # rounds
    *) echo "run.sh: unknown case '$1'" >&2; exit 2 ;;
  esac
}
source_of() {
  case "$1" in
    afterend) echo openloop ;; closedshort) echo closedloop ;; shortwait) echo waitbarrier ;;
    viaserial|viaside|pathline) echo pathcaller ;;
    *) echo "$1" ;;
  esac
}
cflags_of() { case "$1" in closedshort) echo -DKNOB_SHARE=15 ;; esac; } # besides the knob's
marker_of() { case "$1" in afterend) echo AFTER_END ;; shortwait) echo SHORT_KNOB ;; *) echo KNOB ;; esac; }
knob_macro_of() {
  case "$1" in
    afterend) echo AFTER_COST_PERCENT ;; shortwait) echo SHORT_COST_PERCENT ;;
    viaserial) echo SERIAL_COST_PERCENT ;; viaside) echo SIDE_COST_PERCENT ;; *) echo LINE_COST_PERCENT ;;
  esac
}
knob_line() { grep -n "// $(marker_of "$1")\$" "$here/$(source_of "$1").c" | cut -d: -f1; }
point_of() {
  case "$1" in lock|waitoverlap) echo item ;; openloop|afterend|closedloop|closedshort) echo request ;; *) echo round ;; esac
}
is_latency() { [ "$(point_of "$1")" = request ]; }
# A wait case: the knob shortens a wait, the prediction is a wait experiment (--fixed-wait), no Coz.
is_wait() { case " $wait_cases " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# A path case: the program chooses helper (-fcausal-paths); via cases select a calling context
# (--path CALLER, the report's line "FILE:LINE (via CALLER)"), no Coz.
is_path() { case " $path_cases " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
caller_of() { case "$1" in viaserial) echo serial_stage ;; viaside) echo side_stage ;; esac; }
no_coz() { is_wait "$1" || [ -n "$(caller_of "$1")" ]; }
profilers_of() { if no_coz "$1"; then echo causal; else echo "$profilers"; fi; }
# The variants of a case at speedup $2: the profilers, and the A/B run (--ab) where s > 0.
variants_of() {
  profilers_of "$1"
  [ "$ab" = 0 ] || [ "$2" = 0 ] || [ -n "$(caller_of "$1")" ] || echo ab
}

build_log="$cache/build.log"
: >"$build_log"
for c in $cases; do
  args_of "$c" >/dev/null
  [ "$(knob_line "$c" | wc -l)" = 1 ] ||
    { echo "run.sh: no single $(marker_of "$c") line in $(source_of "$c").c" >&2; exit 1; }
  [ "$report_only" = 0 ] || continue
  read -ra extra <<<"$(cflags_of "$c")"
  common=(-O2 -I"$src/include" -pthread "${extra[@]}" "$here/$(source_of "$c").c")
  {
    set -x
    for k in $knobs; do
      "$clang" "${common[@]}" -D"$(knob_macro_of "$c")"="$k" -o "$cache/bin/$c.plain$k"
    done
    chosen=()
    ! is_path "$c" || chosen=(-fcausal-paths=helper)
    "$build/bin/causal-clang" -fcausal-profile "${chosen[@]}" "${common[@]}" -o "$cache/bin/$c.causal"
    if [ "$skip_coz" = 0 ] && ! no_coz "$c"; then
      "$clang" -g -gdwarf-4 -include "$src/bench/overhead/coz_shim.h" "${common[@]}" -ldl \
        -o "$cache/bin/$c.coz"
    fi
    set +x
  } >>"$build_log" 2>&1 || { echo "run.sh: building $c failed, see $build_log" >&2; exit 1; }
done

# out_file CASE VARIANT SPEEDUP ROUND: where run_one puts that run's standard output.
out_file() { echo "$cache/out/$1.$2.$3.$4.txt"; }

# run_one CASE VARIANT SPEEDUP ROUND: prints "ns status"; program output to out_file.
# VARIANT: plainP (knob P, no profiler), causal, coz, freeI (I-th free run). ns: the run time, or for a plain run
# of a latency case the mean latency the program printed on standard error.
run_one() {
  local c="$1" variant="$2" speedup="$3" round="$4"
  local out err
  out="$(out_file "$c" "$variant" "$speedup" "$round")"
  err="${out%.txt}.err"
  local profile="$cache/profiles/$c.$variant.$round.coz"
  local line="$here/$(source_of "$c").c:$(knob_line "$c")"
  local start end status=0 select=--fixed-line via=() free=()
  ! is_wait "$c" || select=--fixed-wait
  [ -z "$(caller_of "$c")" ] || { via=(--path "$(caller_of "$c")"); free=(--path-experiments); }
  # shellcheck disable=SC2046
  set -- $(args_of "$c")
  start=$(date +%s%N)
  case "$variant" in
    plain*) PRINT_MEAN_LATENCY=1 "${nice_cmd[@]}" "$cache/bin/$c.$variant" "$@" >"$out" 2>"$err" ||
              status=$? ;;
    causal) "${nice_cmd[@]}" "$causal" run --quiet --output "$profile" "$select" "$line" "${via[@]}" \
              --fixed-speedup "$speedup" -- "$cache/bin/$c.causal" "$@" \
              >"$out" 2>"$err" || status=$? ;;
    ab) "${nice_cmd[@]}" "$causal" run --quiet --output "$cache/profiles/$c.ab.$round.coz" "$select" "$line" \
          --ab-speedup "$speedup" -- "$cache/bin/$c.causal" "$@" >"$out" 2>"$err" || status=$? ;;
    free*) "${nice_cmd[@]}" "$causal" run --quiet --output "$cache/profiles/$c.free.$round.coz" "${free[@]}" \
             -- "$cache/bin/$c.causal" "$@" >"$out" 2>"$err" || status=$? ;;
    coz) "${nice_cmd[@]}" coz run -o "$profile" --fixed-line "$line" --fixed-speedup "$speedup" \
           --- "$cache/bin/$c.coz" "$@" >"$out" 2>"$err" || status=$? ;;
  esac
  end=$(date +%s%N)
  local ns=$((end - start))
  if is_latency "$c" && [ "${variant#plain}" != "$variant" ]; then
    ns="$(sed -n 's/^mean-latency-ns=//p' "$err" | tail -1)"
    if [ -z "$ns" ]; then # no latency line: counts as a failed run
      ns=0
      [ "$status" != 0 ] || status=99
    fi
  fi
  echo "$ns $status"
}

runs="$cache/runs.tsv"
rounds_done=0
if [ "$report_only" = 1 ]; then
  [ -f "$runs" ] || { echo "run.sh: --report-only: no $runs" >&2; exit 1; }
  rounds_done="$(awk -F'\t' 'NR > 1 && $1 > n { n = $1 } END { print n + 0 }' "$runs")"
  reps=0 # no round runs
  bench_mark_start
else
  bench_fresh_runs "$runs" 'round\tcase\tvariant\tspeedup\tns\tstatus'
fi
for round in $(seq 1 "$reps"); do
  # Another round only if it fits in the budget at the mean round time so far.
  bench_round_fits "$round" "$rounds_done" || break
  order="$speedups"
  [ $((round % 2)) = 1 ] || order="$(bench_reverse "$speedups")"
  for c in $cases; do
    # Each round: per speedup, the real build and each profiler's run one after the other,
    # so that all variants of a speedup see the same machine; the profiler order rotates.
    i=0
    for s in $order; do
      k=$((100 - s))
      list="plain$k $(variants_of "$c" "$s" | tr '\n' ' ')"
      [ $(((round + i) % 2)) = 0 ] || list="$(bench_reverse "$list")"
      for v in $list; do
        n=1
        [ "${v#plain}" = "$v" ] || n=$truth_reps
        out="$(out_file "$c" "$v" "$s" "$round")"
        for rep in $(seq 1 "$n"); do
          read -r ns status <<<"$(run_one "$c" "$v" "$s" "$round")"
          # The runs of one build write the same output file: a repeat whose output differs
          # from the first run's fails with status 98 (the table compares the last one only).
          if [ "$rep" = 1 ]; then
            cp "$out" "$out.first"
          elif [ "$status" = 0 ] && ! cmp -s "$out" "$out.first"; then
            status=98
          fi
          printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$c" "$v" "$s" "$ns" "$status" >>"$runs"
        done
      done
      i=$((i + 1))
    done
    for i in $(seq 1 "$free_runs"); do
      read -r ns status <<<"$(run_one "$c" "free$i" 0 "$round")"
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$c" "free$i" 0 "$ns" "$status" >>"$runs"
    done
  done
  rounds_done=$round
  echo "round $round of $reps done ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
load_after="$(bench_load)"
elapsed=$(($(date +%s) - t0))

# Predictions: one report per case, profiler and round.
reports="$cache/reports"
mkdir -p "$reports"
rm -f "$reports/"*.json
report_of="$profilers"
[ "$free_runs" = 0 ] || report_of="$report_of free"
[ "$ab" = 0 ] || report_of="$report_of ab"
for c in $cases; do
  for p in $report_of; do
    for round in $(seq 1 "$rounds_done"); do
      profile="$cache/profiles/$c.$p.$round.coz"
      [ -f "$profile" ] || continue
      "$causal" report --json --min-speedups 2 --min-experiments 1 --min-evidence-visits 0 "$profile" \
        >"$reports/$c.$p.$round.json" 2>>"$cache/report.log" || true
    done
  done
done

# The fixed-line rounds appended to one profile: its curve points compare runs of every
# round, and their intervals take the run-to-run variation from the runs resampled as
# clusters (docs/report.md, "Runs as clusters").
for c in $cases; do
  [ "$rounds_done" -ge 2 ] || break
  all="$cache/profiles/$c.causal.all.coz"
  : >"$all"
  for round in $(seq 1 "$rounds_done"); do
    [ ! -f "$cache/profiles/$c.causal.$round.coz" ] || cat "$cache/profiles/$c.causal.$round.coz" >>"$all"
  done
  [ ! -s "$all" ] ||
    "$causal" report --json --min-speedups 2 --min-experiments 1 --min-evidence-visits 0 "$all" \
      >"$reports/$c.causal.all.json" 2>>"$cache/report.log" || true
done

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
coz_version="$(dpkg-query -W -f='${Version}' coz-profiler 2>/dev/null || echo '?')"
[ "$report_only" = 1 ] && [ -f "$cache/header.txt" ] || {
  echo "machine: $cpu, $(nproc) vCPUs, Linux $(uname -r)"
  echo "date: $started; $rounds_done round(s), $elapsed s in all; load average before $load_before," \
       "after $load_after; priority: ${nice_cmd[*]:-normal}; plain runs per knob and round: $truth_reps"
  echo "compilers: $("$clang" --version | head -1); coz-profiler $coz_version"
} >"$cache/header.txt"
cases_lines=""
for c in $cases; do
  kind=line
  ! is_wait "$c" || kind=wait
  [ -z "$(caller_of "$c")" ] || kind="via=$(caller_of "$c")"
  cases_lines="$cases_lines $c:$here/$(source_of "$c").c:$(knob_line "$c"):$(point_of "$c"):$kind"
done
python3 "$here/table.py" --runs "$runs" --reports "$reports" --outputs "$cache/out" \
  --header "$cache/header.txt" --cases "$cases_lines" --predicted-tsv "$cache/predicted.tsv" \
  >"$cache/results.md"
cat "$cache/results.md"
echo "results: $cache/results.md, raw: $runs, $cache/predicted.tsv" >&2
