#!/usr/bin/env bash
# The README's second command: build (if needed) and run every test through ctest.
# Tests labelled "cuda" print "skipped: no CUDA device" and count as skipped on machines without one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
