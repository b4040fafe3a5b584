#!/usr/bin/env bash
# The README's first command: install the lab's Debian packages, build attnlab, and run the main job,
# the guided tour.
#
# Only what the lessons, the tour and the exercises use: the packages of `scripts/install-deps.sh`
# without --tests (no PyTorch, clang, chromium or npm: scripts/test.sh adds those), and the `attnlab`
# target (with the exercise graders `attnlab check` links against), not the test programs. The CUDA
# backend only where this machine has an NVIDIA GPU (nvidia-smi lists one, or /dev/nvidia0 exists), or
# when asked: ATTNLAB_CUDA=ON (or AUTO, EMULATE, OFF) bash scripts/setup.sh. Other arguments go to cmake's
# first configure, as with scripts/build.sh (e.g. -DATTNLAB_CUDA=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

bash scripts/install-deps.sh
installed=$SECONDS

args=("$@")
if [ ! -f build/CMakeCache.txt ]; then
  asked=0
  for a in "$@"; do [[ "$a" == -DATTNLAB_CUDA=* ]] && asked=1; done
  if [ "$asked" -eq 0 ]; then
    if [ -n "${ATTNLAB_CUDA:-}" ]; then
      args+=("-DATTNLAB_CUDA=$ATTNLAB_CUDA")
    elif { command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; } || [ -e /dev/nvidia0 ]; then
      echo "setup: an NVIDIA GPU is here: building the CUDA backend where nvcc is found (-DATTNLAB_CUDA=AUTO)"
      args+=(-DATTNLAB_CUDA=AUTO)
    else
      # No GPU: the kernels would be compiled (minutes of nvcc) for nothing. scripts/test.sh switches
      # this folder to AUTO, so the tests still compile them wherever nvcc is.
      echo "setup: no NVIDIA GPU here: building without the CUDA backend (ATTNLAB_CUDA=ON bash scripts/setup.sh to build it anyway)"
      args+=(-DATTNLAB_CUDA=OFF -DATTNLAB_CUDA_CHOSEN_BY=setup)
    fi
  fi
fi
ATTNLAB_TARGETS=attnlab bash scripts/build.sh "${args[@]}"
built=$SECONDS
echo "setup: packages $((installed - start)) s, build $((built - installed)) s; the tour starts now (bash scripts/test.sh runs every test)"
echo
# The main job: the guided tour, every lesson straight through on one sentence.
./build/attnlab tour
