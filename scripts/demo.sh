#!/usr/bin/env bash
# Builds causal, compiles the bundled example with -fcausal-profile, runs it
# under the profiler and prints its hottest lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/build.sh" 19 "$root/build"
bin="$root/build/bin"
out="$root/build/demo"
mkdir -p "$out"
"$bin/causal-clang++" -fcausal-profile -O2 "$root/examples/hotline/hotline.cpp" -o "$out/hotline"
rm -f "$out/profile.coz"
"$bin/causal" run --output "$out/profile.coz" -- "$out/hotline"
echo
echo "Hottest lines of examples/hotline/hotline.cpp (profile: $out/profile.coz):"
"$bin/causal" report --samples "$out/profile.coz"
