#!/usr/bin/env bash
# Configures (once) and builds attnlab in ./build. Extra arguments go to the first cmake configure,
# e.g. scripts/build.sh -DATTNLAB_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
fi
cmake --build build -j"$(nproc)"
