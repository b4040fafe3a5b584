#!/usr/bin/env bash
# The test suite again, built with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DATTNLAB_SANITIZE=ON) in ./build-asan. Every report is fatal: a test that triggers one fails.
# Extra arguments go to ctest (e.g. -R unit). See docs/hardening.md.
#
# Every test but those labelled "slow" (ctest -LE slow): the shipped models' quality, the tour and
# lesson 10 on the wide model, the golden lessons on the trained models, the PyTorch cross-checks,
# kill_resume, bench_smoke and the browser test run the same code as faster tests, on big models or
# many sentences, and take most of the time (three times a release build's under ASan); scripts/test.sh
# runs them in the release build. ATTNLAB_SANITIZE_SLOW=1 runs them here too.
#
# The CUDA backend is built here as the emulator (-DATTNLAB_CUDA=EMULATE, docs/cuda.md): the same
# .cu sources run on CPU fibers under ASan + UBSan, so the `cuda`-labelled tests (every kernel
# against its CPU op, and the planted-bug test) run on every CI machine, GPU or not. The
# programs `attnlab check` builds from a learner's file and a grader are built as in a normal build,
# as learners get them (their verdicts are what the exercise tests check, and the kit cannot link
# them against sanitized objects); src/exercises/CMakeLists.txt says why in full. The CLI that
# builds, runs and judges them is sanitized.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/compiler-cache.sh
jobs="${ATTNLAB_JOBS:-$(nproc)}"
start=$(date +%s)

if [ ! -f build-asan/CMakeCache.txt ]; then
  generator=()
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  # RelWithDebInfo: optimised like the release build (-O2), with debug information for readable
  # sanitizer stacks. -g1 (function names and line tables, no variables or types) is all a stack
  # needs: it compiles the suite in about a fifth less time than -g and halves the objects.
  cmake -S . -B build-asan "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DATTNLAB_SANITIZE=ON -DATTNLAB_CUDA=EMULATE "${cache_configure_args[@]}"
fi
cache_begin build-asan
cmake --build build-asan -j"$jobs"
cache_report "test-sanitize.sh"
built=$(date +%s)

# halt_on_error/abort_on_error: stop at the first report; detect_leaks: LeakSanitizer at exit;
# check_initialization_order/strict_init_order: static-initialisation-order bugs between files.
# UBSan: -fno-sanitize-recover=all in the build already makes every report fatal; print_stacktrace
# says where. Both write their reports to stderr, which ctest shows for a failed test.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:print_summary=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:print_summary=1"
export LSAN_OPTIONS="print_suppressions=0"

# LeakSanitizer needs ptrace-like access to the process (it stops its threads); some containers
# forbid that and LSan then fails every program at exit. Find out once, and say so, instead of
# failing the suite or dropping leak checks silently.
if ! out=$(./build-asan/attnlab --version 2>&1); then
  if printf '%s' "$out" | grep -q "LeakSanitizer"; then
    echo "test-sanitize: LeakSanitizer cannot run here (ptrace is not permitted): leak checks are OFF for this run" >&2
    printf '%s\n' "$out" | head -3 >&2
    export ASAN_OPTIONS="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}"
  else
    printf '%s\n' "$out" >&2
    exit 1
  fi
fi

echo "test-sanitize: CUDA here is the emulator (-DATTNLAB_CUDA=EMULATE): the 'cuda' tests run every kernel on the" \
     "CPU under two thread schedules; that checks the kernels' logic, barriers and bounds, not a GPU's speed or its" \
     "compiler (bench/gpu.sh on a GPU machine does that, docs/cuda.md)."
select=(-LE slow)
if [ "${ATTNLAB_SANITIZE_SLOW:-0}" = 1 ]; then select=(); fi
if [ ${#select[@]} -gt 0 ]; then
  echo "test-sanitize: the tests labelled slow are left to the release build (scripts/test.sh):" \
       "$(ctest --test-dir build-asan -N -L slow | sed -n 's/^ *Test *#[0-9]*: //p' | tr '\n' ' ')"
fi
status=0
ctest --test-dir build-asan --output-on-failure -j"$jobs" "${select[@]}" "$@" || status=$?
end=$(date +%s)
echo "test-sanitize: build $((built - start)) s, tests $((end - built)) s (ASAN_OPTIONS=$ASAN_OPTIONS)"
exit "$status"
