#!/usr/bin/env bash
# bench/report-scale/run.sh - time and memory of `causal report` on a large profile.
#
# README
#   make-profile.py (this folder) writes a profile that looks like one appended to by many
#   real runs (default: 200 MB, 1000 runs of a program with 1200 sampled lines, about 330
#   experiments per run with causal's fields, throughput and latency points, samples records,
#   the last 5 runs A/B runs of `causal confirm`); the same arguments write the same file.
#   Each view of it is then run --reps times, one after another:
#     text      causal report PROFILE
#     json      causal report --json PROFILE
#     html      causal report --html PAGE PROFILE (the text too)
#     samples   causal report --samples PROFILE (reading only, no analysis)
#   and measured with /usr/bin/time: wall time, CPU time (user + system) and peak resident
#   memory (ru_maxrss). The figures are the median over the reps (memory: the largest). Peak
#   memory does not depend on the machine's load; time does: on a busy machine, CPU time is
#   the better figure. The claim measured (docs/report.md, "Memory"): the report's memory
#   grows with the number of distinct lines and speedups, not with the size of the file.
#   Run time: about 1 minute to write the profile (kept while the generator and its
#   arguments are unchanged), then the reps (a few seconds each on an idle machine).
#   --quick: 20 MB, 100 runs, 1 rep.
#
# usage: bench/report-scale/run.sh [--build-dir DIR] [--cache-dir DIR] [--size-mb N]
#                                  [--runs N] [--reps N] [--quick]
#   --build-dir  causal build tree or install prefix (default: $CAUSAL_BUILD_DIR, else
#                ../../build relative to this script)
#   --cache-dir  the profile and results (default: <build-dir>/bench-cache/report-scale)
#   --size-mb    size of the generated profile (default 200)
#   --runs       runs in it (default 1000)
#   --reps       runs of each view (default 3)
# Results: stdout and <cache-dir>/results.md; raw figures <cache-dir>/runs.tsv, the outputs
# in <cache-dir>/out. Writes nothing else.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../common/lib.sh"
size_mb=200 runs=1000 reps=3 quick=0
bench_args "--size-mb=size_mb --runs=runs --reps=reps --quick=quick!" "$@"
if [ "$quick" = 1 ]; then size_mb=20; runs=100; reps=1; fi
bench_positive --size-mb "$size_mb"
bench_positive --runs "$runs"
bench_positive --reps "$reps"
bench_setup report-scale "profiles out" bin/causal
[ -x /usr/bin/time ] || { echo "run.sh: /usr/bin/time missing (Debian: apt-get install time)" >&2; exit 1; }

profile="$cache/profiles/scale-${size_mb}mb-${runs}runs.coz"
stamp="$profile.args"
want="$(sha256sum "$here/make-profile.py" | cut -c1-16) --size-mb $size_mb --runs $runs"
if [ ! -s "$profile" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  rm -f "$profile" "$stamp"
  python3 "$here/make-profile.py" "$profile" --size-mb "$size_mb" --runs "$runs" >&2
  echo "$want" >"$stamp"
fi
bytes=$(stat -c %s "$profile")
records_of() { grep -c "^$1	" "$profile" || true; }
experiments=$(records_of experiment)
samples=$(records_of samples)
lines=$(grep '^samples	' "$profile" | cut -f2 | sort -u | wc -l)

rm -f "$cache/out/"*
bench_mark_start
printf 'view\trep\twall_s\tcpu_s\tmax_rss_kb\n' >"$cache/runs.tsv"
for rep in $(seq 1 "$reps"); do
  for view in text json html samples; do
    case "$view" in
      text) args=() ;;
      json) args=(--json) ;;
      html) args=(--html "$cache/out/report.html") ;;
      samples) args=(--samples) ;;
    esac
    /usr/bin/time -f '%e %U %S %M' -o "$cache/out/time.txt" \
      "$causal" report "${args[@]}" "$profile" >"$cache/out/$view.out" 2>"$cache/out/$view.err" ||
      { echo "run.sh: causal report ${args[*]} failed, see $cache/out/$view.err" >&2; exit 1; }
    read -r wall user sys rss <"$cache/out/time.txt"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    printf '%s\t%s\t%s\t%s\t%s\n' "$view" "$rep" "$wall" "$cpu" "$rss" >>"$cache/runs.tsv"
    echo "$view rep $rep: $wall s wall, $cpu s CPU, $((rss / 1024)) MB peak" >&2
  done
done
load_after="$(bench_load)"

{
  echo "machine: $(bench_machine)"
  echo "date: $started; load average before $load_before, after $load_after"
  echo "profile: $((bytes / 1000000)) MB, $runs runs, $experiments experiments, $samples samples" \
       "records of $lines distinct lines (bench/report-scale/make-profile.py)"
  echo "causal: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo
  echo "| view | wall time (s) | CPU time (s) | peak memory (MB) |"
  echo "|---|---:|---:|---:|"
  for view in text json html samples; do
    awk -F'\t' -v view="$view" '
      $1 == view { n++; wall[n] = $3; cpu[n] = $4; if ($5 > rss) rss = $5 }
      function median(a, n,   i, j, t) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      END { printf "| %s | %.2f | %.2f | %.0f |\n", view, median(wall, n), median(cpu, n), rss / 1024 }
    ' "$cache/runs.tsv"
  done
} >"$cache/results.md"
cat "$cache/results.md"
