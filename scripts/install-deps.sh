#!/usr/bin/env bash
# Installs attnlab's build and test dependencies from Debian's packages (Debian 12 "bookworm").
# Safe to run again: it skips apt-get when every package is already there.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libxtensor-dev libxtensor-blas-dev xtl-dev
  libfmt-dev libcli11-dev doctest-dev nlohmann-json3-dev
  libopenblas-dev
  bubblewrap   # attnlab check runs learner code in its sandbox (src/exercises/sandbox.hpp)
  python3 python3-numpy python3-torch   # the PyTorch cross-check tests (run with /usr/bin/python3)
  # scripts/fuzz.sh: clang (clang-14 on bookworm) and its runtime libraries, which hold libFuzzer
  # (libclang_rt.fuzzer-x86_64.a) and clang's ASan/UBSan; the -14 must match clang's version.
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} Debian packages are installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
