#!/usr/bin/env bash
# Runs the whole test suite: builds with LLVM 22 and runs the lit tests there
# (the accuracy tests of causal experiments, label `accuracy`, run once, with
# the primary toolchain), then builds with LLVM 19 (the primary toolchain) and
# runs everything, then builds the runtime, the profile library, the report
# and their unit tests with ASan+UBSan and with TSan and runs those
# (scripts/test-sanitizers.sh).
#
# usage: scripts/test.sh [--no-sanitizers]
#   --no-sanitizers  leave out the sanitizer builds and runs (about 15 min of
#                    the suite on 2 CPUs)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
sanitizers=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitizers) sanitizers=0 ;;
    *) echo "test.sh: unknown argument '$arg' (usage: scripts/test.sh [--no-sanitizers])" >&2; exit 2 ;;
  esac
done

echo "== LLVM 22: build and lit tests"
bash "$root/scripts/build.sh" 22 "$root/build-llvm22"
(cd "$root/build-llvm22" && ctest -L lit -LE accuracy --output-on-failure -j"$jobs")

echo "== LLVM 19: build and all tests"
bash "$root/scripts/build.sh" 19 "$root/build"
(cd "$root/build" && ctest --output-on-failure -j"$jobs")

if [ "$sanitizers" = 1 ]; then
  echo "== sanitizers: the unit tests with ASan+UBSan, then TSan"
  bash "$root/scripts/test-sanitizers.sh"
fi
