#!/usr/bin/env bash
# fetch-sqlite.sh DIR: makes DIR/sqlite3.c and DIR/sqlite3.h, the SQLite
# amalgamation shipped in the npm package better-sqlite3 (deps/sqlite3/),
# fetched with `npm pack` once and cached in DIR. Prints DIR. Nothing is
# committed: benchmarks call this at run time.
set -euo pipefail
dir="$1"
if [ ! -f "$dir/sqlite3.c" ] || [ ! -f "$dir/sqlite3.h" ]; then
  command -v npm >/dev/null || { echo "fetch-sqlite: npm is needed (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$dir/npm"
  (cd "$dir/npm" && npm pack better-sqlite3 --silent >/dev/null)
  tarball="$(ls "$dir"/npm/better-sqlite3-*.tgz | head -n 1)"
  tar -xzf "$tarball" -C "$dir/npm" package/deps/sqlite3/sqlite3.c package/deps/sqlite3/sqlite3.h
  cp "$dir/npm/package/deps/sqlite3/sqlite3.c" "$dir/npm/package/deps/sqlite3/sqlite3.h" "$dir/"
  rm -rf "$dir/npm"
fi
echo "$dir"
