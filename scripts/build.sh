#!/usr/bin/env bash
# Configures (the first time) and builds attnlab in ./build: Release, with Ninja where it is installed
# and the compiler cache of scripts/compiler-cache.sh (ccache). Extra arguments go to cmake's configure:
# on the first build, or to change an existing build's settings, e.g. scripts/build.sh -DATTNLAB_CUDA=OFF.
# ATTNLAB_TARGETS="attnlab" builds only those targets (scripts/setup.sh: the lab without its tests).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/compiler-cache.sh
if [ ! -f build/CMakeCache.txt ]; then
  generator=()
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${cache_configure_args[@]}" "$@"
elif [ $# -gt 0 ]; then
  cmake build "$@"
fi
targets=()
if [ -n "${ATTNLAB_TARGETS:-}" ]; then
  read -r -a names <<<"$ATTNLAB_TARGETS"
  targets=(--target "${names[@]}")
fi
cache_begin build
cmake --build build -j"$(nproc)" "${targets[@]}"
cache_report "build.sh"
