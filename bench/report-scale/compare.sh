#!/usr/bin/env bash
# bench/report-scale/compare.sh - do two builds of causal report write the same outputs?
#
# README
#   A change meant to make `causal report` faster must not change what it writes. This
#   script runs two causal binaries (say the build of main and the build of a branch) on
#   the same inputs, in every view, and compares what they write byte for byte:
#     text      causal report INPUT
#     json      causal report --json INPUT
#     html      causal report --html PAGE INPUT (the page and the text)
#     samples   causal report --samples INPUT
#   For each view it compares stdout, stderr, the exit status and (html) the page. The
#   inputs: every profile of test/lit/report/Inputs (*.coz, *.jsonl, including the
#   malformed ones: their errors must stay the same too), Coz's published profiles where
#   Debian's coz-profiler installed them (/usr/share/coz-profiler/viewer/profiles), and
#   any further files given, e.g. the profiles bench/report-scale/run.sh writes (20 MB
#   with --quick, 206 MB by default). Prints one line per input and view that differs and
#   a summary; exits 1 if anything differs.
#   Run time: seconds for the test inputs; about as long as four reports per large profile
#   and binary (the two binaries run one after the other, not at once).
#
# usage: bench/report-scale/compare.sh [--keep DIR] OLD_CAUSAL NEW_CAUSAL [PROFILE...]
#   OLD_CAUSAL, NEW_CAUSAL  the causal executables (e.g. /work/main/build/bin/causal and
#                           build/bin/causal)
#   PROFILE                 further inputs (large profiles)
#   --keep DIR              write the outputs into DIR and keep them (default: a temporary
#                           directory, removed at the end)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/../.." && pwd)"
keep=""
if [ "${1:-}" = "--keep" ]; then
  keep="$2"
  shift 2
fi
if [ $# -lt 2 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
old="$1" new="$2"
shift 2
for bin in "$old" "$new"; do
  [ -x "$bin" ] || { echo "compare.sh: $bin is not an executable" >&2; exit 2; }
done

if [ -n "$keep" ]; then
  out="$keep"
  mkdir -p "$out"
else
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi

inputs=("$src"/test/lit/report/Inputs/*.coz "$src"/test/lit/report/Inputs/*.jsonl)
for coz in /usr/share/coz-profiler/viewer/profiles/*.coz; do
  [ -f "$coz" ] && inputs+=("$coz")
done
inputs+=("$@")

differ=0 compared=0
for input in "${inputs[@]}"; do
  [ -f "$input" ] || { echo "compare.sh: no such input $input" >&2; exit 2; }
  for view in text json html samples; do
    for side in old new; do
      bin="$old"
      [ "$side" = new ] && bin="$new"
      page="$out/page.html" # one name for both: the report says where it wrote it
      rm -f "$page"
      case "$view" in
        text) args=() ;;
        json) args=(--json) ;;
        html) args=(--html "$page") ;;
        samples) args=(--samples) ;;
      esac
      status=0
      "$bin" report "${args[@]}" "$input" >"$out/$side.out" 2>"$out/$side.err" || status=$?
      echo "$status" >"$out/$side.status"
      if [ -f "$page" ]; then mv "$page" "$out/$side.html"; else : >"$out/$side.html"; fi
    done
    compared=$((compared + 1))
    for part in out err status html; do
      if ! cmp -s "$out/old.$part" "$out/new.$part"; then
        echo "DIFFERS: $(basename "$input") $view ($part)"
        differ=$((differ + 1))
        if [ -n "$keep" ]; then
          cp "$out/old.$part" "$out/$(basename "$input").$view.old.$part"
          cp "$out/new.$part" "$out/$(basename "$input").$view.new.$part"
        fi
      fi
    done
  done
done
echo "compare.sh: $compared input x view runs, $differ differing outputs"
[ "$differ" = 0 ]
