#!/usr/bin/env bash
# CI stage after the README's test command (.ci/run): the C++ test suite under AddressSanitizer +
# UndefinedBehaviorSanitizer, then the concurrency tests under ThreadSanitizer (docs/reliability.md).
# Any sanitizer report fails the test that triggered it; exits non-zero when anything fails.
# Usage: scripts/sanitize.sh [asan|tsan]   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
stages=("${@:-asan tsan}")
# shellcheck disable=SC2206
stages=(${stages[*]})
status=0

# detect_leaks: a leak fails the test too. allocator_may_return_null: an absurd size from a model gets
# null from aligned_alloc, and onnxmini's own error, as in a release build (no ASan report).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

for stage in "${stages[@]}"; do
  start=$SECONDS
  case "$stage" in
    asan)
      scripts/sanitized_build.sh asan onnxmini_tests onnxmini_cli
      dir=${ONNXMINI_ASAN_BUILD_DIR:-build-asan}
      # The GoogleTest suite runs as one process per shard (every test, the same binary the
      # normal build's CTest runs test by test): an ASan process start costs ~0.2 s, and one
      # per test (6,600 of them) was two thirds of this stage. The pip node tests' data is
      # exported first (their CTest fixture). The other CTest entries (CLI-level, fuzz
      # regressions, opset coverage, the capped-ISA reruns, doc links) run through CTest, but
      # install_find_package (builds a consumer with the system compiler against this tree, no
      # sanitizer runtime there) and architecture_picture (Python): both run in the normal build.
      (cd "$dir" && ctest --output-on-failure -R '^onnx_node_tests_export$') || status=1
      shards=$(nproc)
      pids=()
      for ((i = 0; i < shards; ++i)); do
        (cd "$dir/tests" && GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
          ./onnxmini_tests --gtest_brief=1 >"../gtest_shard_$i.log" 2>&1) &
        pids+=($!)
      done
      for ((i = 0; i < shards; ++i)); do
        if ! wait "${pids[$i]}"; then
          status=1
          echo "sanitize.sh: onnxmini_tests shard $i FAILED (log: $dir/gtest_shard_$i.log):" >&2
          grep -E "FAILED|ERROR: AddressSanitizer|runtime error|SUMMARY|LeakSanitizer" "$dir/gtest_shard_$i.log" | head -40 >&2 ||
            tail -40 "$dir/gtest_shard_$i.log" >&2
        fi
        grep -E "^\[(==========|  PASSED  )\]" "$dir/gtest_shard_$i.log" || true
      done
      (cd "$dir" && ctest --output-on-failure -j"$(nproc)" \
        -E '(\.|^install_find_package$|^architecture_picture$|^onnx_node_tests_export$)') || status=1
      ;;
    tsan)
      scripts/sanitized_build.sh tsan onnxmini_concurrency_tests
      dir=${ONNXMINI_TSAN_BUILD_DIR:-build-tsan}
      "$dir/tests/onnxmini_concurrency_tests" --gtest_brief=1 || status=1
      ;;
    *) echo "sanitize.sh: unknown stage '$stage' (asan or tsan)" >&2; exit 2 ;;
  esac
  echo "sanitize.sh: $stage stage took $((SECONDS - start)) s"
done
[ $status -eq 0 ] || echo "sanitize.sh: FAILED" >&2
exit $status
