#!/usr/bin/env bash
# test/coz-viewer/run_test.sh - does Coz's own viewer read the profiles our runtime writes?
#
# usage: test/coz-viewer/run_test.sh --build-dir DIR --out DIR [--viewer DIR]
#   --build-dir  causal build tree or install prefix (bin/causal, bin/causal-clang++)
#   --out        work directory: programs, profiles, node_modules, screenshots
#   --viewer     Coz's viewer (default /usr/share/coz-profiler/viewer, Debian coz-profiler)
#   --chromium   the browser (default /usr/bin/chromium, else chromium on PATH)
#
# Builds examples/figure1 and examples/latency with `causal-clang(++) -fcausal-profile`, runs
# each three times under `causal run` with one fixed line and a fixed speedup (0, 30, 60 %)
# so a few seconds give a curve of three points, and loads the profiles into Coz's viewer in
# headless Chromium (viewer_check.js, driven by playwright-core installed here with npm).
# The viewer must draw exactly one plot, for the fixed line, with the example's progress
# point in its legend, without console errors, failed loads, network requests or viewer
# warnings. The same checks run on a hand-written profile in Coz's JSON Lines spelling, and
# a negative control (a profile with an unknown record type) must make the viewer warn.
# Every screenshot is printed as "artifact: <path>".
#
# Exit status: 0 pass, 1 fail. A missing chromium, node, npm or viewer is a failure that
# says what to install (CI installs them), never a silent pass.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/../.." && pwd)"
build=""
out=""
viewer=/usr/share/coz-profiler/viewer
chromium=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --viewer) viewer="$2"; shift 2 ;;
    --chromium) chromium="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d'; exit 0 ;;
    *) echo "run_test.sh: unknown argument '$1'" >&2; exit 1 ;;
  esac
done
if [ -z "$build" ] || [ -z "$out" ]; then
  echo "run_test.sh: --build-dir and --out are required" >&2
  exit 1
fi

die() { echo "FAIL: $*"; exit 1; }

# ---- tools ------------------------------------------------------------------------------
if [ -z "$chromium" ]; then
  for candidate in /usr/bin/chromium chromium chromium-browser; do
    if command -v "$candidate" >/dev/null 2>&1; then chromium="$(command -v "$candidate")"; break; fi
  done
fi
[ -n "$chromium" ] && [ -x "$chromium" ] ||
  die "chromium is not installed${chromium:+ at $chromium} (Debian: apt-get install chromium; CI installs it)"
command -v node >/dev/null 2>&1 || die "node is not installed (Debian: apt-get install nodejs npm)"
command -v npm >/dev/null 2>&1 || die "npm is not installed (Debian: apt-get install npm)"
[ -f "$viewer/index.htm" ] ||
  die "Coz's viewer is not at $viewer/index.htm (Debian: apt-get install coz-profiler)"
for tool in bin/causal bin/causal-clang bin/causal-clang++; do
  [ -x "$build/$tool" ] || die "$build/$tool is missing (build the project first)"
done

mkdir -p "$out"
out="$(cd "$out" && pwd)"
node_dir="$out/node"
if [ ! -f "$node_dir/node_modules/playwright-core/package.json" ]; then
  echo "installing playwright-core into $node_dir (npm install --no-save playwright-core)"
  mkdir -p "$node_dir"
  (cd "$node_dir" && npm install --no-save --no-audit --no-fund --loglevel=error \
     playwright-core) ||
    die "npm install playwright-core failed (is the npm registry reachable?)"
fi

# ---- profiles written by our runtime ----------------------------------------------------
# `causal run` flags when it has them, else the environment variables it maps them to.
fixed_flags() { # LINE SPEEDUP
  if "$build/bin/causal" run --help 2>/dev/null | grep -q -- '--fixed-line'; then
    echo "--fixed-line $1 --fixed-speedup $2"
  else
    echo "env CAUSAL_FIXED_LINE=$1 CAUSAL_FIXED_SPEEDUP=$2"
  fi
}

# profile_example NAME COMPILER SOURCE MARKER ARGS...: builds SOURCE, runs it at three fixed
# speedups of the line holding MARKER, appends to $out/NAME.coz. Prints the line number.
profile_example() {
  local name="$1" compiler="$2" source="$3" marker="$4"
  shift 4
  local line
  line="$(grep -n -- "$marker" "$source" | head -1 | cut -d: -f1)"
  [ -n "$line" ] || die "$source has no line marked '$marker'"
  "$build/bin/$compiler" -fcausal-profile -O2 -I"$src/include" -pthread "$source" \
    -o "$out/$name" >"$out/$name.build.log" 2>&1 ||
    die "building $source failed: $(cat "$out/$name.build.log")"
  local expected
  expected="$(CAUSAL_DISABLE=1 "$out/$name" "$@")" || die "$name $* (profiling off) failed"
  rm -f "$out/$name.coz"
  local speedup
  for speedup in 0 30 60; do
    local fixed output status
    read -r -a fixed <<<"$(fixed_flags "$(basename "$source"):$line" "$speedup")"
    if [ "${fixed[0]}" = env ]; then
      output="$("${fixed[@]}" "$build/bin/causal" run --output "$out/$name.coz" -- \
                  "$out/$name" "$@" 2>"$out/$name.run.log")"
    else
      output="$("$build/bin/causal" run "${fixed[@]}" --output "$out/$name.coz" -- \
                  "$out/$name" "$@" 2>"$out/$name.run.log")"
    fi
    status=$?
    [ "$status" -eq 0 ] || die "causal run $name (speedup $speedup %) exited with $status: \
$(cat "$out/$name.run.log")"
    [ "$output" = "$expected" ] || die "$name printed '$output' under causal run, '$expected' without"
  done
  grep -q '^experiment' "$out/$name.coz" ||
    die "our runtime wrote no experiment records to $out/$name.coz"
  echo "$line"
}

failures=0
check() { # NAME PROFILE viewer_check.js options...
  local name="$1" profile="$2"
  shift 2
  echo "== $name: $profile"
  node "$here/viewer_check.js" --playwright "$node_dir" --chromium "$chromium" \
    --viewer "$viewer" --profile "$profile" --out "$out/artifacts" --name "$name" "$@" ||
    failures=$((failures + 1))
}

# A profile whose run stalled is profiled again, up to three times in all: the viewer drops a
# speedup whose program speedup is outside [-1, 2], and on the 2-vCPU CI VMs figure1's thread
# pinned to one vCPU has been seen to make no progress for 100-400 ms at a time (even at 0 %,
# with no delay inserted; on the build before the probe of docs/runtime.md too), which put a
# 60 % point at -3.9. The viewer's reading of a given profile is what this test checks.
attempts=3
# profile_and_check NAME COMPILER SOURCE MARKER POINT ARGS...: profiles example NAME (ARGS: the
# program's arguments) and checks that the viewer draws the marked
# line's plot and names the point POINT, profiling again while it draws none.
profile_and_check() {
  local name="$1" compiler="$2" source="$3" marker="$4" point="$5" line attempt before
  shift 5
  for attempt in $(seq "$attempts"); do
    line="$(profile_example "$name" "$compiler" "$source" "$marker" "$@")" ||
      { echo "$line"; exit 1; }
    before=$failures
    # Three speedups per line: with "Minimum Points" at 3 the fixed line is drawn (at 4,
    # nothing is: figure1-min4 below).
    check "$name" "$out/$name.coz" --min-points 3 --expect-plots 1 \
      --expect-plot "$(basename "$source"):$line" --expect-point "$point"
    if [ "$failures" -eq "$before" ] || [ "$attempt" -eq "$attempts" ]; then
      return 0
    fi
    echo "$name: profiling again (attempt $attempt of $attempts drew no plot)"
    failures=$before
  done
}
src_fig="$src/examples/figure1/figure1.cpp"
round="$(grep -n -- '// ROUND-DONE' "$src_fig" | head -1 | cut -d: -f1)"
profile_and_check figure1 causal-clang++ "$src_fig" '// LINE-A' "figure1.cpp:$round" 100 4000000
check figure1-min4 "$out/figure1.coz" --min-points 4 --expect-plots 0 \
  --expect-point "figure1.cpp:$round"
profile_and_check latency causal-clang "$src/examples/latency/latency.c" '// HANDLE' request \
  3000 300000

# ---- hand-written profiles --------------------------------------------------------------
# Coz's JSON Lines spelling (what Coz writes by default since COZ_OUTPUT_FORMAT appeared: one
# flat object per record, "selected_samples" with an underscore). Two lines, two points.
json="$out/handwritten.jsonl"
{
  echo '{"type":"startup","time":1000}'
  for row in "a.c:10 0.00 100 2.0" "a.c:10 0.25 120 1.7" "a.c:10 0.50 140 1.4" \
             "b.c:20 0.00 100 2.0" "b.c:20 0.25 101 2.0" "b.c:20 0.50 99 2.0"; do
    read -r where speedup delta difference <<<"$row"
    echo "{\"type\":\"experiment\",\"selected\":\"/src/$where\",\"speedup\":$speedup,\
\"duration\":100000000,\"selected_samples\":40}"
    echo "{\"type\":\"throughput-point\",\"name\":\"done\",\"delta\":$delta}"
    echo "{\"type\":\"latency-point\",\"name\":\"request\",\"arrivals\":100,\"departures\":100,\
\"difference\":$difference}"
  done
  echo '{"type":"runtime","time":700000000}'
  echo '{"type":"samples","location":"/src/a.c:10","count":300}'
} >"$json"
check json-lines "$json" --min-points 3 --expect-plots 2 --expect-plot /src/a.c:10 \
  --expect-plot /src/b.c:20 --expect-point done --expect-point request

# Escaped names (docs/report.md, "Text values"): the viewer splits fields at tabs and at their
# first '=', so a name with an escaped tab and one with '=' and a space are one point each,
# shown as written.
escaped="$out/escaped-names.coz"
{
  printf 'startup\ttime=1\tprofiler=causal\n'
  for speedup in 0.00 0.25 0.50; do
    printf 'experiment\tselected=/src/a.c:10\tspeedup=%s\tduration=100000000\tselected-samples=40\n' \
      "$speedup"
    printf 'throughput-point\tname=tab\\there\tdelta=100\n'
    printf 'throughput-point\tname=k=v w\tdelta=100\n'
    printf 'latency-point\tname=lat\\tency\tarrivals=100\tdepartures=100\tdifference=2.0\n'
  done
  printf 'runtime\ttime=700000000\n'
  printf 'samples\tlocation=/src/a.c:10\tcount=300\n'
} >"$escaped"
check escaped-names "$escaped" --min-points 3 --expect-plots 1 --expect-plot /src/a.c:10 \
  --expect-point 'tab\there' --expect-point 'k=v w' --expect-point 'lat\tency'

# Negative control: the checks must see a viewer warning.
bad="$out/unknown-record.coz"
{
  printf 'startup\ttime=1\n'
  printf 'experiment\tselected=/src/a.c:10\tspeedup=0.00\tduration=100\tselected-samples=1\n'
  printf 'throughput-point\tname=done\tdelta=5\n'
  printf 'no-such-record\tx=1\n'
} >"$bad"
check negative-control "$bad" --min-points 1 --expect-warning "Invalid Profile"

echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
