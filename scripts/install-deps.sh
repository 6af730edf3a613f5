#!/usr/bin/env bash
# Installs what building and testing causal needs on Debian bookworm (run as
# root). Safe to run again: apt-get skips what is already installed.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3 file binutils make dpkg-dev meson
  clang-19 llvm-19-dev libclang-19-dev llvm-19-tools lld-19 libclang-rt-19-dev   # primary toolchain
  clang-22 llvm-22-dev libclang-22-dev llvm-22-tools lld-22 libclang-rt-22-dev   # also supported
  libgtest-dev googletest libunwind-dev                                          # tests, runtime
  chromium fonts-dejavu-core                                                     # HTML report and Coz viewer tests
  coz-profiler                                                                   # coz.h, Coz's viewer, the Coz comparison
  libevent-dev libmemcached-tools                                                # bench/memcached: build deps, memaslap
)
# npm fetches the SQLite amalgamation for the precision benchmark and test;
# keep an npm that came with another nodejs package.
command -v npm >/dev/null 2>&1 || packages+=(npm)

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${packages[@]}"
