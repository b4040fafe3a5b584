#!/bin/sh
# Regenerates tests/golden/*.txt (the lessons' text output at seed 42, no colour, 80 columns) after
# an intended change to a lesson or to the rendering. Review with `git diff tests/golden` afterwards.
# Usage: scripts/update-golden.sh [BUILD_DIR]   (default: build)
set -eu
cd "$(dirname "$0")/.."
build="${1:-build}"
cmake --build "$build" -j2 --target attnlab attnlab_lesson_tests
ATTNLAB_UPDATE_GOLDEN=1 ctest --test-dir "$build" -R lesson_golden --output-on-failure
