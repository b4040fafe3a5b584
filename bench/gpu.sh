#!/usr/bin/env bash
# bench/gpu.sh OUTDIR — everything a first run on a borrowed GPU machine needs, in one command:
#   unpack the .debs that scripts/gpu-deps.sh put in .gpu-deps/ into a private prefix, configure
#   with -DATTNLAB_CUDA=ON for the device's architecture against that prefix alone, build attnlab
#   and the CUDA tests, run `attnlab doctor`, the CUDA tests (ctest label cuda or gpu), the kernel
#   tests verbosely, the backend op table's report on the device (large shapes included) and its
#   CPU half (attention variants, finite differences, large shapes), translate-small trained and evaluated on the device, the GPU benchmark and the
#   same models in PyTorch on the device (bench/compare_torch.py --backend cuda), and last
#   compute-sanitizer's memcheck, racecheck, synccheck and initcheck on the test programs.
# It goes on past a failing step and exits 1 at the end if any step failed or ran out of time.
# OUTDIR gets three files, and wide/ or base/ from those groups (the device tool brings back at most 8):
#   summary.json  GPU, driver, CUDA, tool versions, and every step's status, rc, seconds and reason
#                 (rewritten after each step, so a run cut short still leaves one)
#   gpu.log       every step's output in order, under a header per step (long logs cut in the middle)
#   logs.tar.gz   each step's full log, one file per step
# Without a GPU (a rehearsal, scripts/rehearse-gpu-kit.sh) the tests report skipped and the
# sanitizers and benchmark are skipped with their reason; configure and build still run.
#
# Environment (all optional):
#   ATTNLAB_GPU_BUDGET_S   seconds the whole script may take (default 540: the device tool stops a
#                          command at 600); a step that would start with under 20 s left is not
#                          started and counts as timed out, and a sanitizer run gets at most what is left
#   ATTNLAB_GPU_BUILD_TIMEOUT_S      cap on the build (default 420)
#   ATTNLAB_GPU_SANITIZER_TIMEOUT_S  cap on one sanitizer run (default 150)
#   ATTNLAB_GPU_SANITIZER_ARGS       doctest arguments for the kernel tests under the sanitizers,
#                          e.g. '--test-case=*attention*' (default: every test case)
#   ATTNLAB_GPU_ONLY       the step groups to run after the build, of: tests train wide base bench sanitize
#                          (default all but wide and base, which run only when named: wide takes about
#                          4.5 min, base ATTNLAB_GPU_BASE_S of training plus about 2 min; e.g. "train"
#                          for a short second call)
#   ATTNLAB_GPU_BASE_S     the base group's training time, seconds (default 330: with the build, the corpus
#                          and the evals it fits the 540 s budget)
#   ATTNLAB_GPU_ARCH       CMAKE_CUDA_ARCHITECTURES (default: the device's compute capability, e.g.
#                          90 for H100/H200; 90 when there is no device)
#   ATTNLAB_GPU_UNPACKER   dpkg-deb, ar+tar or python3 (default: the first the machine has)
#   ATTNLAB_GPU_DEPS       folder of .debs (default .gpu-deps)
#   ATTNLAB_GPU_BUILD      build folder (default build-gpu; the prefix goes in it, under deps-prefix)
set -uo pipefail  # no -e: a failing step is recorded and the next one runs

if [ $# -ne 1 ]; then
  echo "usage: bench/gpu.sh OUTDIR   (e.g. bash bench/gpu.sh \$OUT/gpu on the device machine)" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
deps=${ATTNLAB_GPU_DEPS:-$root/.gpu-deps}
build=${ATTNLAB_GPU_BUILD:-$root/build-gpu}
prefix=$build/deps-prefix
logs=$build/gpu-logs
budget=${ATTNLAB_GPU_BUDGET_S:-540}
build_cap=${ATTNLAB_GPU_BUILD_TIMEOUT_S:-420}
sanitizer_cap=${ATTNLAB_GPU_SANITIZER_TIMEOUT_S:-150}
jobs=$(nproc 2>/dev/null || echo 4)
t0=$(date +%s)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$build" && rm -rf "$logs" && mkdir -p "$logs"
: >"$out/gpu.log"
rm -f "$out/summary.json" "$out/logs.tar.gz"

elapsed() { echo $(($(date +%s) - t0)); }
say() { printf 'gpu.sh [%4ds] %s\n' "$(elapsed)" "$*"; }

# ---- JSON ------------------------------------------------------------------------------------
jstr() {  # jstr VALUE: VALUE as a JSON string in $J (null when empty); no subprocess, it runs often
  local v=${1-}
  if [ -z "$v" ]; then J=null; return; fi
  v=${v//\\/\\\\}; v=${v//\"/\\\"}; v=${v//$'\n'/ }; v=${v//$'\t'/ }; v=${v//$'\r'/ }
  J="\"$v\""
}
gpu_reason=""   # why there is no usable device; empty when there is one
declare -A info=()   # GPU and tool facts, filled before the first step
info_keys=(host git_commit gpu_name gpu_driver gpu_compute_cap gpu_memory cuda_driver_version nvcc_version
           cmake_version cxx_version generator cuda_arch compute_sanitizer jobs unpacker)
step_names=() step_status=() step_secs=() step_reason=() step_json=()

write_summary() {  # rewritten after every step, so a run cut short still leaves its summary
  local i k failed="" sep="" J
  for i in "${!step_names[@]}"; do
    case ${step_status[$i]} in failed|timeout) failed+="$sep\"${step_names[$i]}\""; sep=", ";; esac
  done
  {
    echo "{"
    echo "  \"script\": \"bench/gpu.sh\","
    echo "  \"started\": \"$started\","
    jstr "${finished-}"; echo "  \"finished\": $J,"
    echo "  \"seconds\": $(elapsed),"
    echo "  \"budget_s\": $budget,"
    echo "  \"gpu_present\": $([ -z "$gpu_reason" ] && echo true || echo false),"
    jstr "$gpu_reason"; echo "  \"gpu_absent_reason\": $J,"
    for k in "${info_keys[@]}"; do
      jstr "${info[$k]-}"; echo "  \"$k\": $J,"
    done
    echo "  \"steps\": ["
    for i in "${!step_json[@]}"; do
      printf '    %s%s\n' "${step_json[$i]}" "$([ "$i" -lt $((${#step_json[@]} - 1)) ] && echo ,)"
    done
    echo "  ],"
    echo "  \"failed\": [$failed],"
    echo "  \"ok\": $([ -z "$failed" ] && echo true || echo false)"
    echo "}"
  } >"$out/summary.json.tmp" && mv "$out/summary.json.tmp" "$out/summary.json"
}

# ---- steps -----------------------------------------------------------------------------------
record() {  # record NAME STATUS RC SECONDS REASON
  local J n r log=null
  jstr "$1"; n=$J; jstr "$5"; r=$J
  [ -f "$logs/$1.log" ] && log="\"logs.tar.gz:$1.log\""
  step_names+=("$1") step_status+=("$2") step_secs+=("$4") step_reason+=("$5")
  step_json+=("{\"name\": $n, \"status\": \"$2\", \"rc\": ${3:-null}, \"seconds\": ${4:-null}, \"reason\": $r, \"log\": $log}")
  write_summary
}

append_log() {  # the step's log into gpu.log, the middle cut out of long ones
  local name=$1 log=$logs/$1.log lines
  {
    echo "===== $name ($2) ====="
    lines=$(wc -l <"$log")
    if [ "$lines" -gt 4000 ]; then
      head -n 1500 "$log"
      echo "... [$((lines - 3000)) lines cut; the whole log is $name.log in logs.tar.gz] ..."
      tail -n 1500 "$log"
    else
      cat "$log"
    fi
    echo
  } >>"$out/gpu.log"
}

skip() {  # skip NAME REASON
  say "$1: skipped ($2)"
  echo "===== $1 (skipped: $2) =====" >>"$out/gpu.log"
  record "$1" skipped "" "" "$2"
}

run() {  # run NAME TIMEOUT_S CMD... — runs CMD with its output in logs/NAME.log
  local name=$1 limit=$2; shift 2
  local left=$((budget - $(elapsed)))
  if [ "$left" -lt 20 ]; then  # counts as a timeout: the run did not do all it should
    say "$name: not started (out of time: ${left}s of the ${budget}s budget left)"
    echo "===== $name (not started: out of time) =====" >>"$out/gpu.log"
    record "$name" timeout "" "" "not started: ${left}s of the ${budget}s budget left"
    return 1
  fi
  [ "$limit" -gt $((left - 10)) ] && limit=$((left - 10))
  say "$name: $*"
  local s rc status reason=""
  s=$(date +%s%N)
  { echo "\$ $*"; echo; } >"$logs/$name.log"
  # timeout runs the step in its own process group and stops all of it (nvcc, ninja, ...); a shell
  # function runs through bash -c, hence the exported functions and variables below.
  timeout -k 10 "$limit" bash -c '"$@"' step "$@" >>"$logs/$name.log" 2>&1 </dev/null
  rc=$?
  local secs
  secs=$(awk -v a="$s" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  if [ $rc -eq 0 ]; then status=ok
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then status=timeout; reason="stopped after ${limit}s"
  else status=failed; reason="exit code $rc"
  fi
  say "$name: $status (rc $rc, ${secs}s)"
  [ $status = ok ] || tail -n 15 "$logs/$name.log" | sed 's/^/    | /'
  append_log "$name" "$status, rc $rc, ${secs}s"
  record "$name" "$status" "$rc" "$secs" "$reason"
  [ $status = ok ]
}

finish() {
  finished=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  write_summary
  tar -czf "$out/logs.tar.gz" -C "$logs" . 2>/dev/null || say "could not write logs.tar.gz"
  echo
  echo "gpu.sh: summary ($out/summary.json)"
  local i bad=0
  for i in "${!step_names[@]}"; do
    printf '  %-28s %-8s %6s  %s\n' "${step_names[$i]}" "${step_status[$i]}" "${step_secs[$i]:+${step_secs[$i]}s}" \
      "${step_reason[$i]}"
    case ${step_status[$i]} in failed|timeout) bad=1;; esac
  done
  echo "  GPU: ${info[gpu_name]:-none}; driver ${info[gpu_driver]:-n/a}; CUDA (driver) ${info[cuda_driver_version]:-n/a}; nvcc ${info[nvcc_version]:-n/a}; arch ${info[cuda_arch]:-n/a}; $(elapsed)s"
  if [ $bad -ne 0 ]; then echo "gpu.sh: SOME STEPS FAILED"; exit 1; fi
  echo "gpu.sh: all steps ok or skipped"
  exit 0
}

# ---- 1. probe: the device and the tools ----------------------------------------------------
probe() {
  echo "host: $(uname -a)"
  echo "cores: $jobs"
  for t in nvidia-smi nvcc cmake ctest ninja c++ g++ compute-sanitizer dpkg-deb ar tar xz python3 sha256sum; do
    printf '%-18s %s\n' "$t" "$(command -v "$t" || echo MISSING)"
  done
  echo
  nvidia-smi || true
  echo
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv || true
  echo
  nvcc --version || true
  cmake --version || true
  c++ --version || true
  [ -n "$sanitizer" ] && "$sanitizer" --version
  return 0
}
export PATH=$PATH:/usr/local/cuda/bin
sanitizer=$(command -v compute-sanitizer || true)
for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -z "$sanitizer" ] && [ -x "$c" ] && sanitizer=$c
done
info[host]=$(hostname 2>/dev/null || true)
info[git_commit]=$(git -C "$root" rev-parse HEAD 2>/dev/null || true)
info[jobs]=$jobs
info[compute_sanitizer]=${sanitizer:-not found}
if ! command -v nvidia-smi >/dev/null; then
  gpu_reason="no nvidia-smi on this machine"
elif ! q=$(nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader 2>&1) ||
     [ -z "$q" ]; then
  gpu_reason="nvidia-smi found no device: $(echo "$q" | head -n 1)"
else
  q=$(echo "$q" | head -n 1)
  IFS=',' read -r g_name g_driver g_cap g_mem <<<"$q"
  info[gpu_name]=$(echo "$g_name" | xargs) info[gpu_driver]=$(echo "$g_driver" | xargs)
  info[gpu_compute_cap]=$(echo "$g_cap" | xargs) info[gpu_memory]=$(echo "$g_mem" | xargs)
  info[cuda_driver_version]=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)
fi
info[nvcc_version]=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\), V\([0-9.]*\).*/\2/p')
info[cmake_version]=$(cmake --version 2>/dev/null | head -n 1 | awk '{print $3}')
info[cxx_version]=$(c++ --version 2>/dev/null | head -n 1)
if [ -n "${ATTNLAB_GPU_ARCH:-}" ]; then arch=$ATTNLAB_GPU_ARCH
elif [ -n "${info[gpu_compute_cap]-}" ]; then arch=${info[gpu_compute_cap]//./}
else arch=90
fi
info[cuda_arch]=$arch
# The steps run in child shells (see run): they see these.
export root out deps build prefix logs jobs arch sanitizer gpu_reason
say "attnlab GPU kit: $root -> $out (budget ${budget}s, $jobs cores)"
say "GPU: ${info[gpu_name]:-none ($gpu_reason)}; driver ${info[gpu_driver]:-n/a}; compute capability ${info[gpu_compute_cap]:-n/a} -> CMAKE_CUDA_ARCHITECTURES=$arch"
export -f probe
run probe 60 probe

# ---- 2. unpack the carried packages into the prefix --------------------------------------
# dpkg-deb where there is one; else ar + tar; else Python (a .deb is an ar archive holding
# data.tar.xz, which Python's tarfile reads).
extract_deb() {  # extract_deb DEB DIR
  if [ "$unpacker" = dpkg-deb ]; then dpkg-deb -x "$1" "$2"; return; fi
  if [ "$unpacker" = ar+tar ]; then
    local member
    member=$(ar t "$1" | grep '^data\.tar') || return 1
    local z=()
    case $member in *.xz) z=(-J);; *.gz) z=(-z);; *.zst) z=(--zstd);; esac
    ar p "$1" "$member" | tar -x -C "$2" -f - --no-same-owner "${z[@]}"
    return
  fi
  python3 - "$1" "$2" <<'PY'
import io, sys, tarfile
deb, dest = sys.argv[1], sys.argv[2]
data = open(deb, "rb").read()
assert data[:8] == b"!<arch>\n", "not an ar archive"
pos = 8
while pos < len(data):
    name = data[pos:pos + 16].decode().strip().rstrip("/")
    size = int(data[pos + 48:pos + 58].decode().strip())
    body = data[pos + 60:pos + 60 + size]
    if name.startswith("data.tar"):
        tar = tarfile.open(fileobj=io.BytesIO(body), mode="r:*")
        # Python 3.12+ warns without a filter, and 3.14's default one changes what is extracted
        tar.extractall(dest, **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))
        break
    pos += 60 + size + (size & 1)
else:
    sys.exit("no data.tar member in " + deb)
PY
}
unpack() {
  [ -d "$deps" ] || { echo "no $deps: run 'bash scripts/gpu-deps.sh' before the run and carry .gpu-deps"; return 1; }
  ls "$deps"/*.deb >/dev/null 2>&1 || { echo "no .deb files in $deps"; return 1; }
  if [ -f "$deps/SHA256SUMS" ]; then
    (cd "$deps" && sha256sum -c SHA256SUMS) || { echo "checksums do not match: run scripts/gpu-deps.sh again"; return 1; }
  else
    echo "warning: no SHA256SUMS in $deps (made by scripts/gpu-deps.sh); unpacking unchecked"
  fi
  rm -rf "$prefix" && mkdir -p "$prefix" || return 1
  local f
  for f in "$deps"/*.deb; do
    echo "unpack $(basename "$f")"
    extract_deb "$f" "$prefix" || { echo "could not unpack $f"; return 1; }
  done
  # The packages' CMake and pkg-config files name absolute /usr paths (OpenBLASConfig.cmake,
  # doctestTargets.cmake, the .pc files): point them into the prefix.
  local changed
  changed=$(grep -rlE '(^|[[:space:]"=;(])/usr(/|"|$|[[:space:];)])' "$prefix/usr/lib" "$prefix/usr/share/cmake" \
              "$prefix/usr/share/pkgconfig" --include='*.cmake' --include='*.pc' 2>/dev/null)
  for f in $changed; do
    sed -i -E "s#(^|[[:space:]\"=;(])/usr(/|\"|\$|[[:space:];)])#\\1$prefix/usr\\2#g" "$f"
    echo "relocated $(realpath --relative-to="$prefix" "$f")"
  done
  # What the configure step relies on
  local need
  for need in usr/include/xtensor/xarray.hpp usr/include/xtl/xtl_config.hpp usr/include/xtensor-blas/xlinalg.hpp \
              usr/include/fmt/format.h usr/include/CLI/CLI.hpp usr/include/doctest/doctest.h \
              usr/include/nlohmann/json.hpp usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h \
              usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so usr/lib/x86_64-linux-gnu/libfmt.so \
              usr/lib/x86_64-linux-gnu/libgfortran.so.5 "$openblas_dir_rel/OpenBLASConfig.cmake"; do
    [ -e "$prefix/$need" ] || { echo "missing after unpacking: $need"; return 1; }
  done
  grep -n 'OpenBLAS_INCLUDE_DIRS\|OpenBLAS_LIBRARIES' "$prefix/$openblas_dir_rel/OpenBLASConfig.cmake"
  du -sh "$prefix"
}
export openblas_dir_rel=usr/lib/x86_64-linux-gnu/openblas-pthread/cmake/openblas
export -f extract_deb unpack
if [ -n "${ATTNLAB_GPU_UNPACKER:-}" ]; then unpacker=$ATTNLAB_GPU_UNPACKER  # to test the fallbacks
elif command -v dpkg-deb >/dev/null; then unpacker=dpkg-deb
elif command -v ar >/dev/null && command -v tar >/dev/null; then unpacker=ar+tar
else unpacker=python3
fi
info[unpacker]=$unpacker
export unpacker
run unpack 120 unpack
unpacked=$?

# Everything below finds the dependencies in the prefix: CMake through CMAKE_PREFIX_PATH and
# OpenBLAS_DIR, pkg-config through PKG_CONFIG_PATH, the linker and the programs through
# LD_LIBRARY_PATH (libopenblas needs libgfortran.so.5, which only the prefix may have).
libdir=$prefix/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$libdir/openblas-pthread:$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PKG_CONFIG_PATH=$libdir/pkgconfig:$prefix/usr/share/pkgconfig:$libdir/openblas-pthread/pkgconfig
export CMAKE_PREFIX_PATH=$prefix/usr
# OpenBLAS leaves its worker threads spinning between calls; the tests are short. Keep its default.

# ---- 3. configure and build ----------------------------------------------------------------
if command -v ninja >/dev/null; then generator=Ninja; else generator="Unix Makefiles"; fi
info[generator]=$generator
export generator
configure() {
  rm -f "$build/CMakeCache.txt"   # find everything afresh, in this prefix
  cmake -S "$root" -B "$build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
    -DATTNLAB_CUDA=ON -DATTNLAB_SERVE=OFF -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DCMAKE_CUDA_COMPILER="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" \
    -DCMAKE_PREFIX_PATH="$prefix/usr" -DOpenBLAS_DIR="$prefix/$openblas_dir_rel"
}
build_targets() {
  # attnlab (doctor, bench) and the CUDA test programs; the CPU-only tests are not needed here.
  if [ "$generator" = Ninja ]; then
    cmake --build "$build" -j "$jobs" --target attnlab tests/gpu/all attnlab_backend_ops_tests
  else
    cmake --build "$build" -j "$jobs" --target attnlab attnlab_gpu_kernel_tests \
      attnlab_backend_ops_tests attnlab_model_backend_tests
  fi
}
export -f configure build_targets
built=1
if [ $unpacked -ne 0 ]; then
  skip configure "the unpack step failed"
  skip build "the unpack step failed"
elif run configure 180 configure; then
  run build "$build_cap" build_targets
  built=$?
else
  skip build "the configure step failed"
fi

find_exe() { find "$build" -name "$1" -type f -perm -u+x -not -path '*/CMakeFiles/*' 2>/dev/null | head -n 1; }
attnlab=$(find_exe attnlab)
kernel_tests=$(find_exe attnlab_gpu_kernel_tests)
ops_tests=$(find_exe attnlab_backend_ops_tests)
model_tests=$(find_exe attnlab_model_backend_tests)

wanted() {  # wanted GROUP: is GROUP among ATTNLAB_GPU_ONLY (or is that unset)?
  [ -z "${ATTNLAB_GPU_ONLY:-}" ] && return 0
  case " $ATTNLAB_GPU_ONLY " in *" $1 "*) return 0;; esac
  return 1
}
not_wanted="not among ATTNLAB_GPU_ONLY=${ATTNLAB_GPU_ONLY:-}"

# ---- 4. doctor and the CUDA tests --------------------------------------------------------
if [ -n "$attnlab" ]; then
  run doctor 60 "$attnlab" doctor
  run doctor_json 60 "$attnlab" doctor --format json
else
  skip doctor "no attnlab program in $build (the build failed)"
fi

ctest_cuda() {
  # The CUDA tests' label is being renamed from gpu to cuda: take either.
  local labels
  labels=$(ctest --test-dir "$build" --print-labels 2>/dev/null | sed -n 's/^  *//p' | tr '\n' ' ')
  echo "labels in this build: $labels"
  ctest --test-dir "$build" -L '^(cuda|gpu)$' --no-tests=error --output-on-failure --timeout 400 | tee "$build/ctest-cuda.out"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || return "$rc"
  # ctest counts a test that exits 77 (no usable device) as passed-and-skipped; with a GPU here
  # that means the tests could not reach it, which is a failure of this run.
  if [ -z "$gpu_reason" ] && grep -q '(Skipped)' "$build/ctest-cuda.out"; then
    echo "nvidia-smi sees a GPU, but the tests above were skipped: they found no usable CUDA device"
    return 1
  fi
}
export -f ctest_cuda
if ! wanted tests; then
  skip ctest_cuda "$not_wanted"
  skip kernel_tests_verbose "$not_wanted"
  skip backend_ops_cuda "$not_wanted"
  skip backend_ops_cpu "$not_wanted"
elif [ $built -eq 0 ]; then
  # On a GPU, cuda_backend_ops (in ctest_cuda) runs the op table's large cases too, and prints the
  # largest error per case against the CPU backend.
  run ctest_cuda 420 ctest_cuda
  if [ -z "$gpu_reason" ] && [ -n "$kernel_tests" ]; then
    # every check with the error it measured (doctest -s prints successful checks too)
    run kernel_tests_verbose 300 "$kernel_tests" --no-intro -s
  else
    skip kernel_tests_verbose "${gpu_reason:-no attnlab_gpu_kernel_tests in the build}"
  fi
  # The op table once more, for its report: the largest error per case on the device, large
  # cases included (ctest prints nothing of a test that passes). Then the same table on the CPU
  # side: the CPU's attention variants and the finite differences, with the large cases, on this
  # machine's many cores (CI runs the small ones).
  if [ -z "$gpu_reason" ] && [ -n "$ops_tests" ]; then
    run backend_ops_cuda 300 "$ops_tests" --no-intro --backends=cuda
  else
    skip backend_ops_cuda "${gpu_reason:-no attnlab_backend_ops_tests in the build}"
  fi
  if [ -n "$ops_tests" ]; then
    run backend_ops_cpu 300 "$ops_tests" --no-intro --backends=cpu --large
  else
    skip backend_ops_cpu "no attnlab_backend_ops_tests in the build"
  fi
else
  skip ctest_cuda "the build step did not succeed"
  skip kernel_tests_verbose "the build step did not succeed"
  skip backend_ops_cuda "the build step did not succeed"
  skip backend_ops_cpu "the build step did not succeed"
fi

# ---- 5. translate-small trained on the GPU, then evaluated ------------------------------
# The issue's end-to-end check: the whole training run on --backend cuda (resumable: a run cut off by
# the budget leaves its checkpoint, and its eval still runs), then eval next to the shipped CPU model.
# Then the same training again: the device's training must repeat bit for bit (no float atomics
# anywhere), so the two model.ckpt and train-log.json must be identical; and the GPU-trained
# checkpoint evaluated on the CPU backend (checkpoints do not depend on the backend).
same_run() {  # same_run DIR1 DIR2
  local f rc=0
  for f in model.ckpt train-log.json; do
    if cmp "$1/$f" "$2/$f"; then echo "$f: identical ($(stat -c %s "$1/$f") bytes)"; else rc=1; fi
  done
  return $rc
}
export -f same_run
if ! wanted train; then
  skip train_cuda "$not_wanted"
elif [ -z "$attnlab" ]; then
  skip train_cuda "no attnlab program (the build failed)"
  skip eval_cuda "no attnlab program (the build failed)"
elif [ -n "$gpu_reason" ]; then
  skip train_cuda "$gpu_reason"
  skip eval_cuda "$gpu_reason"
else
  run train_cuda 600 "$attnlab" train --config translate-small --backend cuda --out "$build/run-cuda" -f json
  if [ -f "$build/run-cuda/model.ckpt" ]; then
    run eval_cuda 120 "$attnlab" eval --model "$build/run-cuda" --backend cuda -f json
    run eval_cuda_model_on_cpu 120 "$attnlab" eval --model "$build/run-cuda" --backend cpu -f json
    run eval_cpu_shipped 120 "$attnlab" eval --model "$root/data/models/translate-small" -f json
    rm -rf "$build/run-cuda-again"
    if run train_cuda_again 600 "$attnlab" train --config translate-small --backend cuda --out "$build/run-cuda-again" -f json; then
      run train_cuda_repeats 30 same_run "$build/run-cuda" "$build/run-cuda-again"
    fi
  else
    skip eval_cuda "train_cuda wrote no model.ckpt"
  fi
fi

# ---- 5b. translate-wide (the lessons' default model) trained on the GPU ----------------------
# Its whole run (data/configs/translate-wide.json) on --backend cuda, then `attnlab eval` of it on the
# host's CPU cores (the decoding is launch-bound on the device, see docs/cuda.md). OUTDIR/wide/ gets
# what data/models/translate-wide ships: model.ckpt in parts under the device tool's 16 MB per file
# (join them with `cat model.ckpt.part-* > model.ckpt`; SHA256SUMS checks the whole), train-log.json
# and eval.json.
wide_out() {  # wide_out RUN_DIR: copy the run's shippable files into $out/wide
  local d=$out/wide
  rm -rf "$d" && mkdir -p "$d" || return 1
  split -b 15000000 -d -a 1 "$1/model.ckpt" "$d/model.ckpt.part-" || return 1
  cp "$1/train-log.json" "$d/" || return 1
  [ -f "$1/eval.json" ] && cp "$1/eval.json" "$d/"
  (cd "$1" && sha256sum model.ckpt) >"$d/SHA256SUMS"
  ls -l "$d"
}
eval_wide() {  # eval_wide RUN_DIR: eval.json beside the model, as data/models/translate-wide has it
  "$attnlab" eval --model "$1" --backend cpu -f json >"$1/eval.json.tmp" && mv "$1/eval.json.tmp" "$1/eval.json" &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({k: v for k, v in d.items() if not isinstance(v, list)}, indent=1)[:3000])' "$1/eval.json"
}
export attnlab
export -f wide_out eval_wide
if ! case " ${ATTNLAB_GPU_ONLY:-} " in *" wide "*) true;; *) false;; esac; then
  skip train_wide_cuda "runs only when ATTNLAB_GPU_ONLY names it (about 4.5 min)"
elif [ -z "$attnlab" ]; then
  skip train_wide_cuda "no attnlab program (the build failed)"
elif [ -n "$gpu_reason" ]; then
  skip train_wide_cuda "$gpu_reason"
else
  rm -rf "$build/run-wide"
  run train_wide_cuda 420 "$attnlab" train --config translate-wide --backend cuda --out "$build/run-wide" -f json
  if [ -f "$build/run-wide/model.ckpt" ]; then
    # The model first: an eval cut short by the budget must not cost the trained model.
    run wide_out 30 wide_out "$build/run-wide"
    run eval_wide_cpu 240 eval_wide "$build/run-wide" && cp "$build/run-wide/eval.json" "$out/wide/"
  else
    skip eval_wide_cpu "train_wide_cuda wrote no model.ckpt"
  fi
fi

# ---- 5c. Transformer-base on the lab's corpus, for a fixed time -----------------------------
# data/configs/transformer-base-lab.json (the paper's base shape on translate-wide's corpus and BPE)
# trained on --backend cuda in bf16 for ATTNLAB_GPU_BASE_S seconds (--time-limit: it stops at a step
# boundary with a checkpoint that --resume continues), then evaluated on the device on the first 1,000
# test sentences, and loaded on the host's CPU to translate a sentence and score 100 (the checkpoint
# must load on the CPU). OUTDIR/base/ gets train-log.json (the loss curve), train.json, eval.json and
# the CPU's eval-cpu.json; the 187 MB model.ckpt stays on the machine (the tool brings back 16 MB files).
base_eval() {  # base_eval RUN_DIR BACKEND LIMIT FILE
  "$attnlab" eval --model "$1" --backend "$2" --limit "$3" -f json >"$out/base/$4.tmp" && mv "$out/base/$4.tmp" "$out/base/$4" &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({k: v for k, v in d.items() if not isinstance(v, list)}, indent=1)[:3000])' "$out/base/$4"
}
base_train() {  # base_train RUN_DIR: the summary JSON to $out/base/train.json, the log beside it
  "$attnlab" train --config transformer-base-lab --backend cuda --precision bf16 --time-limit "$base_s" --out "$1" -f json \
    >"$out/base/train.json"
  local rc=$?
  cat "$out/base/train.json"
  [ -f "$1/train-log.json" ] && cp "$1/train-log.json" "$out/base/"
  return $rc
}
base_s=${ATTNLAB_GPU_BASE_S:-330}
export base_s
export -f base_eval base_train
if ! case " ${ATTNLAB_GPU_ONLY:-} " in *" base "*) true;; *) false;; esac; then
  skip train_base_cuda "runs only when ATTNLAB_GPU_ONLY names it (about ${base_s} s of training, 8 min in all)"
elif [ -z "$attnlab" ]; then
  skip train_base_cuda "no attnlab program (the build failed)"
elif [ -n "$gpu_reason" ]; then
  skip train_base_cuda "$gpu_reason"
else
  rm -rf "$build/run-base" "$out/base" && mkdir -p "$out/base"
  run train_base_cuda $((base_s + 90)) base_train "$build/run-base"
  if [ -f "$build/run-base/model.ckpt" ]; then
    run eval_base_cuda 120 base_eval "$build/run-base" cuda 1000 eval.json
    run base_on_cpu 30 "$attnlab" translate "The boy trains the puppy." --model "$build/run-base" --backend cpu
    run eval_base_cpu 120 base_eval "$build/run-base" cpu 100 eval-cpu.json
  else
    skip eval_base_cuda "train_base_cuda wrote no model.ckpt"
  fi
fi

# ---- 6. the GPU benchmark ----------------------------------------------------------------
if ! wanted bench; then
  skip bench_cuda "$not_wanted"
elif [ -z "$attnlab" ]; then
  skip bench_cuda "no attnlab program (the build failed)"
elif ! "$attnlab" bench --help 2>/dev/null | grep -q -- '--backend'; then
  skip bench_cuda "attnlab bench has no --backend option yet (docs/cuda.md, what remains)"
elif [ -n "$gpu_reason" ]; then
  skip bench_cuda "$gpu_reason"
else
  # In the order of what the full-size-runs issue asks, so a run cut short by the budget loses the
  # least: bf16 first. The CPU's attention sweep is skipped throughout (it measures nothing of the
  # device); the device's own sweep (c') runs in bf16 (tensor cores) and fp32.
  torch_python=""
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
      torch_python=$py
      break
    fi
  done
  # Every report's JSON goes to logs/NAME.json too (in logs.tar.gz): the raw numbers for bench/results/.
  compare() {  # compare NAME ARGS...: bench/compare_torch.py --backend cuda, 3 alternating rounds
    local name=$1; shift
    if [ -z "$torch_python" ]; then
      skip "$name" "no python3 with a CUDA-enabled torch on this machine"
    else
      run "$name" 240 "$torch_python" "$root/bench/compare_torch.py" --attnlab "$attnlab" --backend cuda --rounds 3 \
        --json-out "$logs/$name.json" "$@"
    fi
  }
  # bf16: matrix products and attention on the tensor cores (buffers float32); PyTorch under autocast
  # (bf16 activations too); attention alone raced against SDPA, n = 512 ... 8192, 16 heads of d_k 64.
  run bench_cuda_bf16 240 "$attnlab" bench --json-out "$logs/bench_cuda_bf16.json" --backend cuda --precision bf16 --attention-max 0
  compare compare_torch_cuda_bf16 --precision bf16 --attention-max 8192
  # GPT-2 small at its 1,024 positions (8 × 1,024 tokens) in bf16, against the GPU's bf16 peak: the
  # third speed target's report, so that with the two above a call cut short by the budget still has
  # all three targets' figures.
  run bench_cuda_bf16_gpt2 240 "$attnlab" bench --json-out "$logs/bench_cuda_bf16_gpt2.json" --backend cuda --precision bf16 --config gpt2-small --batch 8 \
    --seq 1024 --attention-max 0 --device-attention-max 0
  # The issue's three speed targets from the three reports above (logs/targets.json; "not measured"
  # where a step did not run or was cut short). bench/collect_gpu.py works them out again from the
  # filed reports when this step itself did not run.
  run targets 30 python3 "$root/bench/targets.py" "$logs" --json-out "$logs/targets.json"
  # The device's bf16 attention sweep again with the wmma forward (ATTNLAB_BF16_ATTENTION=wmma), then
  # with one 16-query tile per warp (=rf1; the default for d_k 64 gives each warp two): what keeping S
  # and O in registers gains, and what reusing each fragment for two tiles does.
  for variant in wmma rf1; do
    run "bench_cuda_bf16_attention_$variant" 120 env ATTNLAB_BF16_ATTENTION=$variant "$attnlab" bench \
      --json-out "$logs/bench_cuda_bf16_attention_$variant.json" --backend cuda --precision bf16 --no-models \
      --attention-max 0
  done
  # The same bf16 models with the linear layers' bias added the two-step way (ATTNLAB_CUBLASLT=0), for
  # what cuBLASLt's bias epilogue gains (docs/cuda.md, matmul.hpp), a minute apart on one machine.
  run bench_cuda_bf16_no_lt 240 env ATTNLAB_CUBLASLT=0 "$attnlab" bench --json-out "$logs/bench_cuda_bf16_no_lt.json" \
    --backend cuda --precision bf16 --attention-max 0 --device-attention-max 0
  # fp32 (no tensor cores on either side), the same.
  run bench_cuda 240 "$attnlab" bench --json-out "$logs/bench_cuda.json" --backend cuda --attention-max 0
  compare compare_torch_cuda --attention-max 8192
  # Transformer-big (16 × 128) in bf16, each model point against the GPU's bf16 peak.
  run bench_cuda_bf16_big 240 "$attnlab" bench --json-out "$logs/bench_cuda_bf16_big.json" --backend cuda --precision bf16 --config transformer-big \
    --attention-max 0 --device-attention-max 0
  # PyTorch compiled (torch.compile where it works there, else eager and why), bf16.
  compare compare_torch_cuda_bf16_compile --precision bf16 --compile
  # TF32 last: the same models with TF32 products on both sides.
  run bench_cuda_tf32 240 "$attnlab" bench --json-out "$logs/bench_cuda_tf32.json" --backend cuda --precision tf32 --attention-max 0 --device-attention-max 0
  compare compare_torch_cuda_tf32 --precision tf32
  # Transformer-base as it trains (the paper's dropout 0.1), bf16, both sides dropping at the same sites
  # (compare_torch.py --dropout): what the unstored dropout mask and its fused residual add are worth.
  compare compare_torch_cuda_bf16_dropout --precision bf16 --dropout 0.1
fi

# ---- 7. compute-sanitizer (last: what a run cut short by the budget can best do without) -----
# The kernel tests first (they cover every kernel), then the backend op table (the backend's own
# kernels and the strided attention layouts), and the whole-model test (memcheck
# and initcheck; racecheck and synccheck look inside kernels the programs above already cover).
# Each run gets at most ATTNLAB_GPU_SANITIZER_TIMEOUT_S and never more than the budget has left.
sanitize() {  # sanitize TOOL PROGRAM [ARGS...]
  local tool=$1 prog=$2; shift 2
  "$sanitizer" --tool "$tool" --error-exitcode 86 --print-limit 200 "$prog" --no-intro "$@"
}
export -f sanitize
for pair in memcheck:kernel racecheck:kernel synccheck:kernel initcheck:kernel \
            memcheck:ops racecheck:ops synccheck:ops initcheck:ops \
            memcheck:model initcheck:model; do
  tool=${pair%%:*}
  extra=()
  case ${pair#*:} in
    kernel) prog=$kernel_tests name=attnlab_gpu_kernel_tests
            read -r -a extra <<<"${ATTNLAB_GPU_SANITIZER_ARGS:-}";;
    ops) prog=$ops_tests name=attnlab_backend_ops_tests
         extra=(--backends=cuda --small);;  # the small cases: every kernel and layout, in seconds
    model) prog=$model_tests name=attnlab_model_backend_tests;;
  esac
  step="${tool}_${name#attnlab_}"
  if ! wanted sanitize; then skip "$step" "$not_wanted"
  elif [ -n "$gpu_reason" ]; then skip "$step" "$gpu_reason"
  elif [ -z "$sanitizer" ]; then skip "$step" "compute-sanitizer not found (PATH, /usr/local/cuda)"
  elif [ -z "$prog" ]; then skip "$step" "no $name in $build (the build failed)"
  else run "$step" "$sanitizer_cap" sanitize "$tool" "$prog" "${extra[@]}"
  fi
done

finish
