# bench/common/lib.sh - what every bench/<part>/run.sh does the same way. Sourced, not run.
#
#   bench_positive NAME VALUE        exits 2 unless VALUE is a positive integer
#   bench_number NAME VALUE          exits 2 unless VALUE is a non-negative integer
#   bench_cache_dir DIR              makes DIR and prints its absolute path
#   bench_require_build BUILD TOOL.. exits 1 unless each BUILD/TOOL exists (a causal build)
#   bench_real_clang BUILD           the clang the causal drivers wrap (CMake cache CAUSAL_CLANG)
#   bench_coz_usable                 true if `coz` and coz.h are installed; else says so
#   bench_nice_cmd                   sets the array nice_cmd to (nice -n -10) where allowed
#   bench_machine                    one line: CPU model, CPU count, kernel
#   bench_args "SPEC" "$@"           parses a run.sh's command line: -h/--help (the script's
#                                    header comment), --build-dir DIR and --cache-dir DIR (into
#                                    $build, default $CAUSAL_BUILD_DIR else build/ at the top,
#                                    and $cache), and SPEC's options: "--reps=reps" puts the
#                                    option's value in $reps, "--quick=quick!" sets $quick to 1
#   bench_setup NAME "SUBDIRS" TOOL...
#                                    after bench_args: $build made absolute, each BUILD/TOOL
#                                    required, $cache (default <build>/bench-cache/NAME) made,
#                                    with SUBDIRS in it, and absolute; sets $src, $causal, $clang
#   bench_fresh_runs FILE HEADER     removes the profiles and outputs of an earlier run, starts
#                                    the table FILE with HEADER (printf format), bench_mark_start
#   bench_check_coz                  sets $skip_coz to 1 unless Coz is wanted and usable, and
#                                    $with_coz to " coz" or "" (append it to a list of variants)
#   bench_load                       the load averages (1, 5, 15 min) now
#   bench_mark_start                 sets $load_before and $started (UTC) as the runs begin
#   bench_round_fits ROUND DONE [S]  true if round ROUND may start: the first, or another that
#                                    ends (mean time of the DONE rounds so far, plus S seconds)
#                                    within $budget s of $t0; else says why it stops
#   bench_reverse LIST               LIST (words) in reverse order
#   bench_context_header STARTED LOAD_BEFORE LOAD_AFTER SETUP [TOOLS]
#                                    exports BENCH_HEADER, the lines that open results.md:
#                                    machine, date and loads, tools (clang, Coz, TOOLS), setup

bench_positive() {
  case "$2" in '' | *[!0-9]* | 0) echo "run.sh: $1 needs a positive number" >&2; exit 2 ;; esac
}

bench_number() {
  case "$2" in '' | *[!0-9]*) echo "run.sh: $1 needs a number" >&2; exit 2 ;; esac
}

bench_cache_dir() {
  mkdir -p "$1" && (cd "$1" && pwd)
}

bench_require_build() {
  local build="$1" tool
  shift
  for tool in "$@"; do
    [ -e "$build/$tool" ] || { echo "run.sh: $build/$tool missing (build causal first)" >&2; exit 1; }
  done
}

bench_real_clang() {
  local clang
  clang="$(sed -n 's/^CAUSAL_CLANG:[A-Z]*=//p' "$1/CMakeCache.txt" 2>/dev/null || true)"
  [ -x "$clang" ] || clang=/usr/lib/llvm-19/bin/clang
  echo "$clang"
}

bench_coz_usable() {
  if command -v coz >/dev/null 2>&1 && [ -f /usr/include/coz.h ]; then
    return 0
  fi
  echo "run.sh: coz or /usr/include/coz.h missing (Debian: apt-get install coz-profiler);" \
       "Coz left out" >&2
  return 1
}

# Programs with pinned threads assume each thread has its CPU: on a shared 2-vCPU machine other
# jobs otherwise swamp the effects.
bench_nice_cmd() {
  nice_cmd=()
  if [ "$(nice -n -10 nice 2>/dev/null)" = "-10" ]; then nice_cmd=(nice -n -10); fi
}

bench_machine() {
  echo "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) vCPUs," \
       "Linux $(uname -r)"
}

bench_args() {
  local spec="--build-dir=build --cache-dir=cache $1" entry var
  shift
  build="${CAUSAL_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}"
  cache=""
  while [ $# -gt 0 ]; do
    var=""
    for entry in $spec; do
      [ "${entry%%=*}" = "$1" ] && var="${entry#*=}"
    done
    case "$1:$var" in
      -h: | --help:) sed -n '2,/^set /p' "$0" | sed '$d'; exit 0 ;;
      *:) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
      *!) printf -v "${var%!}" 1; shift ;;
      *)
        [ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
        printf -v "$var" '%s' "$2"
        shift 2 ;;
    esac
  done
}

bench_setup() {
  local name="$1" subdirs="$2" dir
  shift 2
  src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  build="$(cd "$build" && pwd)"
  bench_require_build "$build" "$@"
  cache="$(bench_cache_dir "${cache:-$build/bench-cache/$name}")"
  for dir in $subdirs; do mkdir -p "$cache/$dir"; done
  causal="$build/bin/causal"
  clang="$(bench_real_clang "$build")"
}

bench_check_coz() {
  [ "$skip_coz" = 1 ] || bench_coz_usable || skip_coz=1
  with_coz=""
  [ "$skip_coz" = 1 ] || with_coz=" coz"
}

bench_load() {
  cut -d' ' -f1-3 /proc/loadavg
}

bench_context_header() {
  local tools
  tools="$("$clang" --version | head -1); coz-profiler"
  tools="$tools $(dpkg-query -W -f='${Version}' coz-profiler 2>/dev/null || echo '?')${5:+; $5}"
  BENCH_HEADER="machine: $(bench_machine), perf_event_paranoid"
  BENCH_HEADER="$BENCH_HEADER $(cat /proc/sys/kernel/perf_event_paranoid)
date: $1; load average before $2, after $3
tools: $tools
setup: $4"
  export BENCH_HEADER
}

bench_mark_start() {
  load_before="$(bench_load)"
  started="$(date -u '+%Y-%m-%d %H:%M UTC')"
}

bench_round_fits() {
  local used=$(($(date +%s) - t0))
  [ "$1" -gt 1 ] || return 0
  [ $((used + used / $2 + ${3:-0})) -gt "$budget" ] || return 0
  echo "stopping after $2 rounds: another would exceed the budget of ${budget} s" >&2
  return 1
}

bench_reverse() {
  echo "$1" | tr ' ' '\n' | tac | tr '\n' ' '
}

bench_fresh_runs() {
  rm -f "$cache/profiles/"*.coz "$cache/out/"*.txt "$cache/out/"*.err
  # shellcheck disable=SC2059 # the header is a format: tabs
  printf "$2\n" >"$1"
  bench_mark_start
}
