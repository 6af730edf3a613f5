#!/usr/bin/env bash
# Configures and builds causal. Usage: scripts/build.sh [LLVM_MAJOR] [BUILD_DIR]
# (defaults: 19, build/ for 19 and build-llvm<N>/ otherwise).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
major=${1:-19}
build=${2:-$root/build}
[ "$major" = 19 ] || build=${2:-$root/build-llvm$major}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLLVM_DIR="/usr/lib/llvm-$major/lib/cmake/llvm" >/dev/null
cmake --build "$build" -j"$(nproc)"
