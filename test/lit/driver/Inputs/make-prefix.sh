#!/bin/sh
# usage: make-prefix.sh <causal-clang> <dir>
# Builds a throw-away causal prefix in <dir> around a copy of the driver (the
# driver finds its prefix from its own location, so it must be copied, not
# linked), with stand-ins for the plugin and the link step: `clang -###`
# only checks that the linker is executable, and these tests must not depend
# on the real link step.
set -e
rm -rf "$2"
mkdir -p "$2/bin" "$2/lib/causal" "$2/libexec/causal" "$2/share/causal"
cp "$1" "$2/bin/causal-clang"
ln -s causal-clang "$2/bin/causal-clang++"
: > "$2/lib/causal/CausalPlugin.so"
for ld in ld ld.lld; do
  printf '#!/bin/sh\nexit 0\n' > "$2/libexec/causal/$ld"
  chmod +x "$2/libexec/causal/$ld"
done
