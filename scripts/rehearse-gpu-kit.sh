#!/usr/bin/env bash
# scripts/rehearse-gpu-kit.sh [OUTDIR]   (default OUTDIR /tmp/gpukit-out; needs root)
# Rehearses bench/gpu.sh here, the way a borrowed GPU machine will run it, and proves the build
# finds every dependency in the carried prefix and none on this system:
#   1. copies what the device tool sends (the files git tracks or would add, plus .gpu-deps) to
#      /tmp/gpukit-tree (REHEARSE_TREE), keeping an earlier build-gpu/ there (REHEARSE_CLEAN=1 drops it);
#   2. in a private mount namespace (unshare -m), hides this system's copy of every carried package:
#      an empty tmpfs over their include, library and CMake folders, a one-line junk file over their
#      other files and over the BLAS/LAPACK alternatives links;
#   3. checks the hiding worked (the compiler, linker and CMake can no longer find them);
#   4. runs bench/gpu.sh OUTDIR in the copy, with a budget of REHEARSE_BUDGET_S (default 5400 s:
#      this machine builds on 2 cores); without a GPU its tests report skipped and its sanitizer
#      and benchmark steps are skipped with the reason, while configure and build must succeed;
#   5. checks that no system path of a hidden package got into the build (CMakeCache.txt,
#      compile_commands.json, build.ninja) and that attnlab loads OpenBLAS and fmt from the prefix.
# Exits nonzero if gpu.sh or a check failed. Run scripts/gpu-deps.sh first.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/tmp/gpukit-out}
tree=${REHEARSE_TREE:-/tmp/gpukit-tree}

if [ "${REHEARSE_INSIDE:-}" != 1 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "rehearse: needs root (unshare -m and mount)" >&2; exit 1; }
  [ -f "$repo/.gpu-deps/SHA256SUMS" ] || { echo "rehearse: no .gpu-deps: run bash scripts/gpu-deps.sh first" >&2; exit 1; }
  echo "rehearse: copying the working tree that would travel, and .gpu-deps, to $tree"
  mkdir -p "$tree"
  if [ "${REHEARSE_CLEAN:-0}" = 1 ]; then
    find "$tree" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
  else
    find "$tree" -mindepth 1 -maxdepth 1 ! -name build-gpu -exec rm -rf {} +
  fi
  (cd "$repo" && git ls-files -co --exclude-standard -z |
     tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$tree"
  cp -r "$repo/.gpu-deps" "$tree/"
  echo "rehearse: $(du -sh --exclude=build-gpu "$tree" | cut -f1) would travel"
  exec unshare -m --propagation private env REHEARSE_INSIDE=1 REHEARSE_TREE="$tree" bash "$0" "$out"
fi

# ---- inside the private mount namespace ---------------------------------------------------
t0=$(date +%s)
ml=/usr/lib/x86_64-linux-gnu
hide_dirs=(
  /usr/include/xtensor /usr/include/xtl /usr/include/xtensor-blas /usr/include/xflens /usr/include/fmt
  /usr/include/CLI /usr/include/doctest /usr/include/nlohmann /usr/include/x86_64-linux-gnu/openblas-pthread
  $ml/openblas-pthread $ml/cmake/fmt $ml/cmake/openblas $ml/cmake/xtensor $ml/cmake/xtensor-blas
  /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json /usr/share/cmake/xtl /usr/lib/cmake/doctest
)
under_hidden_dir() {
  local d
  for d in "${hide_dirs[@]}"; do case $1 in "$d"/*) return 0;; esac; done
  return 1
}
# Files: everything dpkg installed for the carried packages (outside the folders above), and the
# alternatives links that point at OpenBLAS or the reference BLAS/LAPACK.
pkgs=()
for f in "$tree"/.gpu-deps/*.deb; do b=$(basename "$f"); pkgs+=("${b%%_*}"); done
files=()
while IFS= read -r f; do
  case $f in /usr/share/doc/*|/usr/share/man/*|/usr/share/lintian/*|/usr/share/gcc/*) continue;; esac
  under_hidden_dir "$f" && continue
  [ -f "$f" ] || [ -L "$f" ] || continue
  files+=("$f")
done < <(dpkg -L "${pkgs[@]}" 2>/dev/null | sort -u)
for f in $ml/lib{openblas,blas,cblas,lapack,lapacke,gfortran,quadmath,fmt}.so* \
         /usr/include/x86_64-linux-gnu/{cblas,f77blas,openblas_config,lapack,lapacke}*.h /usr/include/xtensor.hpp; do
  [ -e "$f" ] || [ -L "$f" ] && files+=("$f")
done
# Not /dev/null: the linker reads an empty file as an empty linker script and links on without it.
junk=$(mktemp)
echo 'hidden by scripts/rehearse-gpu-kit.sh' >"$junk"
nfiles=0
for f in "${files[@]}"; do
  [ -e "$f" ] || continue                      # a link whose target is already hidden
  [ -d "$f" ] && continue
  mount --bind "$junk" "$f" && nfiles=$((nfiles + 1))
done
ndirs=0
for d in "${hide_dirs[@]}"; do
  [ -d "$d" ] || continue
  mount -t tmpfs -o size=1m,mode=0755 none "$d" && ndirs=$((ndirs + 1))
done
echo "rehearse: hid $ndirs folders and $nfiles files of: ${pkgs[*]}"

# The hiding must work, or the rehearsal proves nothing.
probe=$(mktemp -d)
leaks=()
for h in xtensor/xarray.hpp xtl/xtl_config.hpp xtensor-blas/xlinalg.hpp fmt/format.h CLI/CLI.hpp \
         doctest/doctest.h nlohmann/json.hpp cblas.h; do
  printf '#include <%s>\n' "$h" >"$probe/t.cpp"
  c++ -std=c++20 -fsyntax-only "$probe/t.cpp" >/dev/null 2>&1 && leaks+=("header $h")
done
echo 'int main() { return 0; }' >"$probe/m.cpp"
for l in openblas blas cblas lapack fmt; do
  c++ "$probe/m.cpp" -o "$probe/m" -l$l >/dev/null 2>&1 && leaks+=("library -l$l")
done
# (xtensor's and xtensor-blas's config files fail in --find-package mode even when present; their
# headers are checked above and their _DIR after the build.)
for p in xtl fmt CLI11 nlohmann_json doctest OpenBLAS; do
  # (in $probe: cmake --find-package leaves a CMakeFiles/ folder where it runs)
  (cd "$probe" && cmake --find-package -DNAME=$p -DCOMPILER_ID=GNU -DLANGUAGE=CXX -DMODE=EXIST 2>/dev/null) | grep -q "$p found" &&
    leaks+=("CMake package $p")
done
rm -rf "$probe"
if [ ${#leaks[@]} -gt 0 ]; then
  echo "rehearse: hiding FAILED, still visible: ${leaks[*]}" >&2
  exit 1
fi
echo "rehearse: checked: the compiler, linker and CMake find none of them on this system"

# ---- the run ------------------------------------------------------------------------------
# This machine has 2 cores (the GPU machine 16): give the build and the whole run the time they need.
rc=0
(cd "$tree" && ATTNLAB_GPU_BUDGET_S=${REHEARSE_BUDGET_S:-5400} ATTNLAB_GPU_BUILD_TIMEOUT_S=${REHEARSE_BUDGET_S:-5400} \
   bash bench/gpu.sh "$out") || rc=$?
echo "rehearse: bench/gpu.sh exited $rc"

# ---- after: nothing of the system's copies got in ----------------------------------------
fail=0
bld=$tree/build-gpu
sys='(^|[^A-Za-z0-9_./-])/usr/(include/(xtensor|xtl|xflens|fmt|CLI|doctest|nlohmann|x86_64-linux-gnu/(openblas|cblas))|lib/x86_64-linux-gnu/(openblas|lib(openblas|blas|lapack|fmt|gfortran))|lib/x86_64-linux-gnu/cmake/(fmt|openblas|xtensor)|share/cmake/(CLI11|nlohmann_json|xtl)|lib/cmake/doctest)'
for f in "$bld/CMakeCache.txt" "$bld/compile_commands.json" "$bld/build.ninja"; do
  [ -f "$f" ] || continue
  if grep -nE "$sys" "$f" | head -n 5 | grep .; then
    echo "rehearse: FAIL: $f names a system copy of a carried package (above)"; fail=1
  fi
done
grep -E '^(xtl|xtensor|xtensor-blas|fmt|CLI11|nlohmann_json|doctest|OpenBLAS)_DIR:' "$bld/CMakeCache.txt" || true
exe=$(find "$bld" -name attnlab -type f -perm -u+x -not -path '*/CMakeFiles/*' | head -n 1)
if [ -n "$exe" ]; then
  # gpu.sh's LD_LIBRARY_PATH; the build's RPATH already names the prefix for OpenBLAS and fmt
  libs=$(LD_LIBRARY_PATH=$bld/deps-prefix$ml/openblas-pthread:$bld/deps-prefix$ml ldd "$exe")
  echo "$libs" | grep -E 'openblas|fmt|gfortran|quadmath|cudart|cublas'
  for l in libopenblas.so.0 libfmt.so.9 libgfortran.so.5; do
    echo "$libs" | grep "$l" | grep -q "$bld/deps-prefix/" ||
      { echo "rehearse: FAIL: attnlab does not load $l from the prefix"; fail=1; }
  done
else
  echo "rehearse: FAIL: no attnlab program was built"; fail=1
fi
for s in configure build; do
  grep -q "\"name\": \"$s\", \"status\": \"ok\"" "$out/summary.json" ||
    { echo "rehearse: FAIL: step $s is not ok in $out/summary.json"; fail=1; }
done
echo "rehearse: $(($(date +%s) - t0))s; bench/gpu.sh rc $rc; checks $([ $fail -eq 0 ] && echo passed || echo FAILED)"
[ $rc -eq 0 ] && [ $fail -eq 0 ]
