#!/usr/bin/env bash
# The README's first command: install the Debian packages, build attnlab, and run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
echo
# The main job: the guided tour, every lesson straight through on one sentence.
./build/attnlab tour
