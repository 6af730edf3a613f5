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
