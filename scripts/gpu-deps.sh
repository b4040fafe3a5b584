#!/usr/bin/env bash
# Fills .gpu-deps/ (ignored by git) with the Debian packages a borrowed GPU machine needs to build
# attnlab: that machine has nvcc, CMake, ninja and a C++ compiler but no Debian packages and no
# network, so the headers, CMake config files and libraries of our dependencies travel with the run
# (the device tool's `carry: [".gpu-deps"]`), and bench/gpu.sh unpacks them into a private prefix.
#
# Run it here, where apt works (it needs `apt-get update` to have run once). Safe to run again: a
# .deb already there with the right size and checksum is kept, stale ones are removed. It fails
# when a package's dependency is neither in the list nor assumed to be on the GPU machine, and when
# the folder is over 64 MiB (all that may travel with a run, the working tree included).
set -euo pipefail
cd "$(dirname "$0")/.."

dest=.gpu-deps
limit_bytes=$((64 * 1024 * 1024))

# The -dev packages scripts/install-deps.sh installs for the build, and the runtime libraries they
# need. OpenBLAS: Debian's libopenblas-dev picks a variant by alternatives; this kit carries the
# pthread one (the one install-deps.sh gets here) and points CMake at its folder directly.
packages=(
  xtl-dev libxtensor-dev libxtensor-blas-dev
  libfmt-dev libfmt9
  libcli11-dev doctest-dev nlohmann-json3-dev
  libopenblas-dev libopenblas0 libopenblas-pthread-dev libopenblas0-pthread
  libgfortran5 libquadmath0        # libopenblas0-pthread's own dependencies
)
# Dependencies not carried: every machine with a C++ compiler has them, in versions at least as new
# as Debian 12's; carrying Debian's older libstdc++ would shadow the machine's own.
assumed_present=(libc6 libgcc-s1 libstdc++6 gcc-12-base)

in_list() {  # in_list WORD LIST...
  local w=$1; shift
  local x
  for x in "$@"; do [ "$x" = "$w" ] && return 0; done
  return 1
}

# 1. Every dependency of every package is carried or assumed present (an "a | b" group needs one).
#    apt-cache depends marks all but the last member of an or-group with '|', and lists beneath a
#    virtual package (<libblas.so>) the packages that provide it: any of them satisfies the group.
#    One apt-cache call for all packages (each call reads the whole cache, about a second).
if ! deps=$(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
              --no-enhances "${packages[@]}" 2>&1); then
  echo "gpu-deps: apt-cache depends failed (run apt-get update?):" >&2
  echo "$deps" >&2
  exit 1
fi
# One line per or-group: "package: member member ...", providers of virtual members included.
groups=$(awk '
  function flush() { if (group != "") print pkg ": " group; group = "" }
  /^[^ ]/ { flush(); pkg = $1; open = 0; next }
  /^ [ |](Pre)?Depends: / {
    if (!open) flush()
    name = $2; gsub(/[<>]/, "", name); group = group " " name
    open = (substr($0, 2, 1) == "|"); next }
  /^    [^ ]/ { group = group " " $1; next }
  END { flush() }' <<<"$deps")
missing=()
while read -r owner members; do
  [ -z "$owner" ] && continue
  ok=0
  for m in $members; do
    if in_list "$m" "${packages[@]}" "${assumed_present[@]}"; then ok=1; break; fi
  done
  [ $ok -eq 1 ] || missing+=("${owner%:} needs one of:$members")
done <<<"$groups"
if [ ${#missing[@]} -gt 0 ]; then
  echo "gpu-deps: dependencies neither carried nor assumed present on the GPU machine:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  echo "gpu-deps: add them to packages (or assumed_present) in $0" >&2
  exit 1
fi

# 2. Download what is missing or changed. --print-uris names the file, size and checksum apt would
#    fetch, so a file already there is checked rather than fetched again.
mkdir -p "$dest"
uris=$(apt-get download --print-uris "${packages[@]}")
wanted=()
manifest=""
to_fetch=()
while read -r url file size hash; do
  [ -z "$url" ] && continue
  wanted+=("$file")
  sha=${hash#SHA256:}
  manifest+="$sha  $file"$'\n'
  if [ -f "$dest/$file" ] && [ "$(stat -c %s "$dest/$file")" = "$size" ] &&
     [ "$(sha256sum "$dest/$file" | cut -d' ' -f1)" = "$sha" ]; then
    continue
  fi
  to_fetch+=("${file%%_*}")
done <<<"$uris"
if [ ${#wanted[@]} -ne ${#packages[@]} ]; then
  echo "gpu-deps: apt-get download --print-uris named ${#wanted[@]} files for ${#packages[@]} packages" >&2
  exit 1
fi
if [ ${#to_fetch[@]} -gt 0 ]; then
  echo "gpu-deps: downloading ${to_fetch[*]}"
  sandbox=()
  [ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)  # else apt warns it cannot drop to _apt
  (cd "$dest" && apt-get download -q "${sandbox[@]}" "${to_fetch[@]}")
else
  echo "gpu-deps: all ${#packages[@]} packages already in $dest"
fi
for f in "$dest"/*.deb; do
  [ -e "$f" ] || continue
  in_list "$(basename "$f")" "${wanted[@]}" || { echo "gpu-deps: removing stale $(basename "$f")"; rm -f "$f"; }
done
# bench/gpu.sh checks the files against this before unpacking them.
printf '%s' "$manifest" >"$dest/SHA256SUMS"
(cd "$dest" && sha256sum --quiet -c SHA256SUMS)

# 3. Size: everything that travels with a run must stay within 64 MiB.
bytes=$(du -sb "$dest" | cut -f1)
# (a tracked file deleted from the work tree does not travel: du skips it and still prints the total)
tree=$(git ls-files -co --exclude-standard -z | { du --files0-from=- -cb 2>/dev/null || true; } | tail -1 | cut -f1)
awk -v d="$dest" -v n="${#wanted[@]}" -v b="$bytes" -v t="$tree" 'BEGIN {
  printf "gpu-deps: %s holds %d packages, %.1f MiB; with the working tree that travels (%.1f MiB): %.1f MiB of 64\n",
         d, n, b / 1048576, t / 1048576, (b + t) / 1048576 }'
if [ "$bytes" -gt "$limit_bytes" ] || [ $((bytes + tree)) -gt "$limit_bytes" ]; then
  echo "gpu-deps: OVER THE 64 MiB LIMIT: the run tool would refuse this carry" >&2
  # Name what to move aside for the call (docs/cuda.md, "Running on a borrowed GPU": the shipped
  # checkpoints are the usual culprits); the count is of the tree as it is now.
  echo "gpu-deps: the largest files that travel:" >&2
  git ls-files -co --exclude-standard -z | { du --files0-from=- -b 2>/dev/null || true; } |
    sort -rn | head -5 | awk -F '\t' '{ printf "  %6.1f MiB  %s\n", $1 / 1048576, $2 }' >&2
  exit 1
fi
