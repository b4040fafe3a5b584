#!/usr/bin/env bash
# Installs what the browser tests need (tests/browser/explorer.test.mjs): Debian's chromium and the npm
# package playwright-core at the exact version in tests/browser/package-lock.json, installed with
# `npm ci` into .cache/browser/npm (git-ignored). Only the tests need these; scripts/setup.sh does not.
# Safe to run again: it installs nothing when both are already there.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "browser-deps: $*" >&2; exit 1; }
cache=".cache/browser"
mkdir -p "$cache"

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
apt_install() {  # apt_install PACKAGE...: installs the missing ones, like scripts/install-deps.sh
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ -n "$sudo" ] && ! command -v sudo >/dev/null; then die "need root (or sudo) to install ${missing[*]}"; fi
  echo "browser-deps: installing ${missing[*]} (Debian)"
  $sudo apt-get update -q >"$cache/apt.log" 2>&1 || die "apt-get update failed (see $cache/apt.log)"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$cache/apt.log" 2>&1 \
    || die "apt-get install ${missing[*]} failed (see $cache/apt.log)"
}

apt_install chromium fonts-dejavu-core nodejs
command -v npm >/dev/null || apt_install npm
command -v npm >/dev/null || die "npm is missing (apt-get install npm)"
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium is missing after installing the chromium package"

npm_dir="$cache/npm"
lock=tests/browser/package-lock.json
mkdir -p "$npm_dir"
# npm ci installs exactly what the lock says (and checks its integrity hash); it runs again only when
# the lock changed or the install is incomplete.
if ! cmp -s "$lock" "$npm_dir/package-lock.json" || [ ! -f "$npm_dir/node_modules/playwright-core/package.json" ]; then
  cp tests/browser/package.json "$lock" "$npm_dir/"
  echo "browser-deps: installing npm playwright-core into $npm_dir"
  (cd "$npm_dir" && npm ci --ignore-scripts --no-audit --no-fund >npm.log 2>&1) || die "npm ci failed in $npm_dir (see $npm_dir/npm.log)"
fi
echo "browser-deps: $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium (version unknown)'), playwright-core $(node -p "require('./$npm_dir/node_modules/playwright-core/package.json').version")"
