#!/usr/bin/env bash
# Installs attnlab's dependencies from Debian's packages (Debian 12 "bookworm"), in two sets:
#
#   bash scripts/install-deps.sh           the lab's: what building attnlab and running its lessons,
#                                          tour and exercises need (scripts/setup.sh)
#   bash scripts/install-deps.sh --tests   the lab's and the tests' (scripts/test.sh and CI's .ci/run)
#
# Safe to run again: it skips apt-get when every package is already there.
set -euo pipefail

usage() { sed -n '2,7s/^# \{0,1\}//p' "$0"; }
tests=0
case "${1:-}" in
  "") ;;
  --tests) tests=1 ;;
  -h | --help) usage; exit 0 ;;
  *) echo "install-deps: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
esac

# The lab: a C++20 compiler (g++ and make, not all of build-essential: its dpkg-dev and perl are 14
# packages attnlab never uses), CMake and Ninja, the header and BLAS libraries attnlab is built from,
# doctest (the exercise graders that `attnlab check` links a learner's file with use it), cpp-httplib
# (the HTTP server of `attnlab serve`), and bubblewrap, the sandbox `attnlab check` runs a learner's
# code in (src/exercises/sandbox.hpp).
packages=(
  g++ make cmake ninja-build pkg-config
  libxtensor-dev libxtensor-blas-dev xtl-dev
  libfmt-dev libcli11-dev doctest-dev nlohmann-json3-dev
  libcpp-httplib-dev
  libopenblas-dev
  bubblewrap
)
if [ "$tests" -eq 1 ]; then
  packages+=(
    ccache   # the compiler cache of scripts/build.sh, test-sanitize.sh and fuzz.sh (scripts/compiler-cache.sh)
    python3 python3-numpy python3-torch   # the PyTorch cross-checks and the Python test drivers (/usr/bin/python3)
    # scripts/fuzz.sh: clang (clang-14 on bookworm) and its runtime libraries, which hold libFuzzer
    # (libclang_rt.fuzzer-x86_64.a) and clang's ASan/UBSan; the -14 must match clang's version.
    clang libclang-rt-14-dev
    # scripts/browser-deps.sh (the browser test) and scripts/english-corpus.sh (the English text the
    # language model is evaluated on) install these too; here they come in the same apt-get run. Not
    # npm: those scripts install Debian's only where no npm is found (a nodejs from elsewhere, such as
    # NodeSource's, brings its own and conflicts with Debian's).
    chromium fonts-dejavu-core nodejs wordnet-base
  )
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

what="the lab's"
[ "$tests" -eq 0 ] || what="the lab's and the tests'"
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} Debian packages ($what) are installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]} ($what packages)"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
