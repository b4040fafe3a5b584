#!/usr/bin/env bash
# The README's first command: install the Debian packages, build attnlab, and run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
echo
echo "== attnlab attention on a shipped example (data/examples/causal_four_tokens.json) =="
./build/attnlab attention --input data/examples/causal_four_tokens.json
