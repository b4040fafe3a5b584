#!/bin/sh
# Regenerates the golden text output of the lessons after an intended change to a lesson or to the
# rendering: tests/golden/*.txt (seeded random weights: --random --seed 42) and
# tests/golden/trained/*.txt (the shipped model data/models/translate-small, and lm-small for the
# causal mask; written only when the model is in the tree). No colour, 80 columns.
# Review with `git diff tests/golden` afterwards.
# Usage: scripts/update-golden.sh [BUILD_DIR]   (default: build)
set -eu
cd "$(dirname "$0")/.."
build="${1:-build}"
cmake --build "$build" -j2 --target attnlab attnlab_lesson_tests
ATTNLAB_UPDATE_GOLDEN=1 ctest --test-dir "$build" -R lesson_golden --output-on-failure
