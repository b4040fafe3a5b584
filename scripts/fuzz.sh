#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in ./build-fuzz (-DATTNLAB_FUZZ=ON: -fsanitize=fuzzer,
# address,undefined) and runs each for a bounded time, one after the other. See docs/hardening.md.
#
# Usage: scripts/fuzz.sh [--seconds N] [TARGET...]
#   --seconds N  how long each target runs (default 60)
#   TARGET       problem_json, checkpoint, tokenizer (default: all three)
#
# Each run starts from a fresh copy of the committed seed corpus (tests/fuzz/TARGET/) and of the
# regression inputs (tests/fuzz/regressions/TARGET/), so the committed corpus never grows; the copy,
# the log and any crash input stay in build-fuzz/fuzz-run/TARGET/. Any crash, sanitizer report,
# unexpected exception, broken invariant, hang (-timeout), memory blow-up (-rss_limit_mb) or single
# huge allocation (-malloc_limit_mb) fails the script, naming the input file that caused it.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '5,8s/^# \{0,1\}//p' "$0"; }
seconds=60
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) [ $# -ge 2 ] || { usage >&2; exit 2; }; seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#*=}"; shift ;;
    -h | --help) usage; exit 0 ;;
    problem_json | checkpoint | tokenizer) targets+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: --seconds needs a positive whole number, got '$seconds'" >&2
  exit 2
fi
[ ${#targets[@]} -gt 0 ] || targets=(problem_json checkpoint tokenizer)

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ is missing; install the Debian packages with: bash scripts/install-deps.sh" >&2
  exit 1
fi
source scripts/compiler-cache.sh
if [ ! -f build-fuzz/CMakeCache.txt ]; then
  generator=()
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  CC=clang CXX=clang++ cmake -S . -B build-fuzz "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLAB_FUZZ=ON -DATTNLAB_CUDA=OFF \
    "${cache_configure_args[@]}"
fi
cache_begin build-fuzz
cmake --build build-fuzz -j"${ATTNLAB_JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}"
cache_report "fuzz.sh"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
failed=()
summary=()
for t in "${targets[@]}"; do
  run="build-fuzz/fuzz-run/$t"
  rm -rf "$run"
  mkdir -p "$run/corpus" "$run/artifacts"
  find "tests/fuzz/$t" "tests/fuzz/regressions/$t" -maxdepth 1 -type f ! -name '.*' -exec cp -t "$run/corpus" {} + 2>/dev/null || true
  seeds=$(find "$run/corpus" -type f | wc -l)
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512
        -print_final_stats=1 -artifact_prefix="$run/artifacts/")
  [ -f "tests/fuzz/$t.dict" ] && args+=(-dict="tests/fuzz/$t.dict")
  echo "fuzz.sh: fuzz_$t for $seconds s from $seeds seed inputs (log: $run/log.txt)"
  rc=0
  "build-fuzz/fuzz/fuzz_$t" "${args[@]}" "$run/corpus" >"$run/log.txt" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$run/log.txt" | tail -n 1)
  grown=$(find "$run/corpus" -type f | wc -l)
  line="fuzz_$t: ${execs:-?} executions in $seconds s, corpus $seeds -> $grown inputs"
  crashes=$(find "$run/artifacts" -type f)
  if [ "$rc" -ne 0 ] || [ -n "$crashes" ] || [ -z "$execs" ]; then
    echo "==================== fuzz_$t FAILED (exit $rc) ====================" >&2
    tail -n 60 "$run/log.txt" >&2
    for c in $crashes; do
      echo "fuzz.sh: failing input: $c  (reproduce: build-fuzz/fuzz/fuzz_$t $c; keep it as tests/fuzz/regressions/$t/NAME once fixed)" >&2
    done
    failed+=("$t")
    line="$line  FAILED"
  fi
  echo "$line"
  summary+=("$line")
done

echo "fuzz.sh: summary"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
