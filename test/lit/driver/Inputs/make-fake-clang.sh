#!/bin/sh
# usage: make-fake-clang.sh <dir> [names...]
# Puts copies of print-args.sh named clang, clang++ (or the given names) in <dir>.
set -e
here=$(dirname "$0")
dir=$1
shift
[ $# -gt 0 ] || set -- clang clang++
rm -rf "$dir"
mkdir -p "$dir"
for name in "$@"; do
  cp "$here/print-args.sh" "$dir/$name"
  chmod +x "$dir/$name"
done
