#!/usr/bin/env bash
# fetch-debian-source.sh PACKAGE DEST: makes DEST the unpacked Debian source package PACKAGE
# (`apt-get source --download-only` and `dpkg-source -x`), once: a DEST whose .causal-package
# names a version of PACKAGE is kept as it is. Prints that version's name (e.g.
# pigz_2.6-1) on stdout. Nothing is committed: benchmarks call this at run time.
#
# apt runs with a private configuration: deb-src entries derived from this machine's deb
# entries (/etc/apt/sources.list, sources.list.d/*.list and *.sources), its lists, cache and
# logs in DEST.fetch/ (the downloaded .dsc and tarballs stay in DEST.fetch/download). The
# system's apt configuration and state are not touched; no root needed. Needs dpkg-dev
# (dpkg-source) and network access to the Debian mirror the first time.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: fetch-debian-source.sh PACKAGE DEST" >&2; exit 2; }
package="$1"
dest="$2"
die() { echo "fetch-debian-source: $*" >&2; exit 1; }

if [ -f "$dest/.causal-package" ]; then
  version="$(cat "$dest/.causal-package")"
  if [ "${version%%_*}" = "$package" ]; then
    echo "$version"
    exit 0
  fi
fi
command -v dpkg-source >/dev/null || die "dpkg-source missing (Debian: apt-get install dpkg-dev)"
echo "fetch-debian-source: fetching the $package source package (once)" >&2

work="$dest.fetch"
apt="$work/apt"
parts="$apt/sources.d"
rm -rf "$apt"
mkdir -p "$parts" "$apt/lists/partial" "$apt/cache/archives/partial" "$work/download"
n=0
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  sed 's/^Types:.*/Types: deb-src/' "$f" >"$parts/$n-$(basename "$f")"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >"$parts/$n-$(basename "$f")"
done
[ "$n" -gt 0 ] || die "no apt sources found in /etc/apt to derive deb-src entries from"
opts=(-q -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$parts"
  -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Dir::Cache::pkgcache=
  -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User="$(id -un)")
if ! apt-get "${opts[@]}" update >"$work/update.log" 2>&1; then
  tail -n 3 "$work/update.log" >&2
  die "fetching $package's source failed: 'apt-get update' with deb-src entries derived from
/etc/apt failed (log: $work/update.log). Network access to the Debian mirror is needed once."
fi
if ! ls "$apt/lists/"*Sources* >/dev/null 2>&1; then
  tail -n 3 "$work/update.log" >&2
  die "fetching $package's source failed: 'apt-get update' with deb-src entries derived from
/etc/apt got no Sources index (log: $work/update.log). Network access to the Debian mirror is
needed once."
fi
if ! (cd "$work/download" && apt-get "${opts[@]}" source --download-only "$package") \
  >"$work/source.log" 2>&1; then
  tail -n 3 "$work/source.log" >&2
  die "fetching $package's source failed: 'apt-get source --download-only $package' failed
(log: $work/source.log)."
fi
dsc="$(find "$work/download" -maxdepth 1 -name "${package}_*.dsc" | sort -V | tail -n 1)"
[ -n "$dsc" ] || die "fetching $package's source failed: no ${package}_*.dsc in $work/download"
rm -rf "$dest.tmp"
dpkg-source --no-copy -x "$dsc" "$dest.tmp" >"$work/extract.log" 2>&1 ||
  die "extracting $dsc failed (log: $work/extract.log)"
version="$(basename "$dsc" .dsc)"
echo "$version" >"$dest.tmp/.causal-package"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
rm -rf "$apt"
echo "$version"
