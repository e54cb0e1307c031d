#!/usr/bin/env bash
# Runs every fuzz target (fuzz/) for SECONDS each; fails on a crash, a sanitizer report, a hang
# (one input over -timeout) or an out-of-memory (docs/reliability.md, "Fuzzing").
# Usage: scripts/fuzz.sh SECONDS [TARGET...]    targets: model tensor_proto einsum trace (default: all)
# Builds the targets in the ASan+UBSan tree (scripts/sanitized_build.sh asan) when needed, writes the
# seed corpus (scripts/fuzz_corpus.py) into it, and keeps each target's corpus there between runs:
#   build-asan/fuzz/corpus/TARGET/   inputs found so far (the seeds are re-added each run)
#   build-asan/fuzz/crashes/         the input of a finding: TARGET-crash-<sha1>, ...-timeout-, ...-oom-
#   fuzz/regressions/TARGET/         findings fixed and checked in (as text, encoded into DIR/fuzz/regressions/):
#                                    read as seeds here, and replayed by
#                                    the release suite (CTest fuzz_regressions_TARGET, fuzz/CMakeLists.txt)
# Replay one: build-asan/fuzz/fuzz_TARGET FILE. Extra libFuzzer flags: FUZZ_FLAGS="-jobs=2 ...".
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model tensor_proto einsum trace)

dir=${ONNXMINI_ASAN_BUILD_DIR:-build-asan}
build_targets=()
for t in "${targets[@]}"; do build_targets+=("fuzz_$t"); done
scripts/sanitized_build.sh asan "${build_targets[@]}" onnxmini_fuzz_regressions

seeds="$dir/fuzz/seeds"
python3 scripts/fuzz_corpus.py "$seeds"
mkdir -p "$dir/fuzz/crashes"

# allocator_may_return_null + max_allocation_size_mb: a request over 1 GiB gets null, as a failed
# aligned_alloc in a release build, which onnxmini reports as its own error; detect_leaks: a leak
# is a finding. The RSS cap stays above onnxmini's budget (ONNXMINI_MEMORY_LIMIT, fuzz/fuzz_limits.h).
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:max_allocation_size_mb=1024:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "${targets[@]}"; do
  corpus="$dir/fuzz/corpus/$t"
  mkdir -p "$corpus"
  # Checked-in findings (fixed) are read as seeds too: one that breaks again fails at once.
  dirs=("$corpus" "$seeds/$t")
  [ -d "$dir/fuzz/regressions/$t" ] && dirs+=("$dir/fuzz/regressions/$t")  # encoded by CMake
  echo "fuzz.sh: fuzz_$t for $seconds s"
  # shellcheck disable=SC2086  # FUZZ_FLAGS is a list of flags
  if ! "$dir/fuzz/fuzz_$t" "${dirs[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$dir/fuzz/crashes/$t-" ${FUZZ_FLAGS:-} \
      >"$dir/fuzz/$t.log" 2>&1; then
    status=1
    echo "fuzz.sh: fuzz_$t FOUND A PROBLEM (log: $dir/fuzz/$t.log):" >&2
    grep -E "ERROR|runtime error|SUMMARY|Test unit written" "$dir/fuzz/$t.log" | head -20 >&2 || tail -30 "$dir/fuzz/$t.log" >&2
  fi
  grep -E "^stat::(number_of_executed_units|peak_rss_mb)|cov: " "$dir/fuzz/$t.log" | tail -3 || true
done
[ $status -eq 0 ] || echo "fuzz.sh: FAILED" >&2
exit $status
