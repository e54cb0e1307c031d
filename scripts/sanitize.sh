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
      # install_find_package builds a consumer with the system compiler against this tree (no
      # sanitizer runtime there); architecture_picture is Python: both run in the normal build.
      (cd "$dir" && ctest --output-on-failure -j"$(nproc)" -E '^(install_find_package|architecture_picture)$') ||
        status=1
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
