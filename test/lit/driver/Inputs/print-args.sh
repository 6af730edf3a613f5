#!/bin/sh
# Stand-in for clang: prints its own file name (which real clang was run),
# the CAUSAL_REAL_LD it inherits, then each argument on its own line between
# brackets, so tests see exactly what the driver passed.
echo "program=${0##*/}"
echo "CAUSAL_REAL_LD=${CAUSAL_REAL_LD-unset}"
for arg in "$@"; do
  echo "[$arg]"
done
