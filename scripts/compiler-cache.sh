# Sourced (not run) by scripts/build.sh, scripts/test-sanitize.sh and scripts/fuzz.sh, from the
# repository root: the compiler cache, Debian's ccache, when it is installed (scripts/install-deps.sh
# installs it) and ATTNLAB_CCACHE is not 0.
#
#   cache_configure_args  cmake arguments for a first configure: ccache as the C, C++ and CUDA (nvcc)
#                         compiler launcher, with CCACHE_BASEDIR set to this clone and CCACHE_NOHASHDIR=1,
#                         so that two clones (yours and CI's fresh one) share cached objects: ccache
#                         rewrites the clone's absolute paths to relative ones before hashing. The
#                         settings live in the launcher itself, so a plain `cmake --build build` uses
#                         them too.
#   cache_begin DIR       starts counting this build's compilations (ccache's stats log, DIR/ccache-stats.log)
#   cache_report WHAT     prints one line: how many of them came from the cache ("warm", "cold" or "partly warm")
#
# The cache folder is ccache's own, outside the clone (by default ~/.cache/ccache; CCACHE_DIR moves it),
# so a fresh clone finds what an earlier one compiled, and deleting a clone or its build folders never
# empties it. `ccache -s` shows its size; `ccache -C` empties it. With the cache off or missing
# everything builds as before, only slower.
cache_configure_args=()
cache_log=""
if [ "${ATTNLAB_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  cache_launcher="env;CCACHE_BASEDIR=$(pwd -P);CCACHE_NOHASHDIR=1;ccache"
  cache_configure_args=(-DCMAKE_C_COMPILER_LAUNCHER="$cache_launcher" -DCMAKE_CXX_COMPILER_LAUNCHER="$cache_launcher"
                        -DCMAKE_CUDA_COMPILER_LAUNCHER="$cache_launcher")
fi

cache_begin() {
  cache_log=""
  [ ${#cache_configure_args[@]} -gt 0 ] || return 0
  grep -q "_COMPILER_LAUNCHER.*ccache" "$1/CMakeCache.txt" 2>/dev/null || return 0
  cache_log="$(cd "$1" && pwd -P)/ccache-stats.log"
  : >"$cache_log"
  export CCACHE_STATSLOG="$cache_log"
}

cache_report() {
  if [ -z "$cache_log" ]; then
    if [ ${#cache_configure_args[@]} -eq 0 ]; then
      echo "$1: no compiler cache (ccache is not installed, or ATTNLAB_CCACHE=0)"
    else
      echo "$1: no compiler cache in this build folder (configured without it; remove the folder to get one)"
    fi
    return 0
  fi
  unset CCACHE_STATSLOG
  local calls hits misses state
  calls=$(grep -c '^# ' "$cache_log" || true)
  hits=$(grep -cE '^(direct|preprocessed)_cache_hit$' "$cache_log" || true)
  misses=$(grep -c '^cache_miss$' "$cache_log" || true)
  if [ "$calls" -eq 0 ]; then state="nothing to compile"
  elif [ "$misses" -eq 0 ]; then state="warm"
  elif [ "$hits" -eq 0 ]; then state="cold"
  else state="partly warm"; fi
  echo "$1: compiler cache $state: $hits of $calls compilations from the cache, $misses compiled" \
       "(ccache, cache folder $(ccache -k cache_dir 2>/dev/null || echo '?'), outside the clone)"
  if [ "$misses" -gt 0 ] && [ "$hits" -gt 0 ]; then
    # Which ones missed, when others hit: what changed, or what embeds the clone's path.
    # (awk stops by itself: `| head` would end it with SIGPIPE, which pipefail turns into a failure)
    awk '/^# /{f=$2} /^cache_miss$/ && n < 8 {print "  compiled: " f; n++}' "$cache_log"
  fi
}
