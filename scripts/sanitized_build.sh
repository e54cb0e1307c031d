#!/usr/bin/env bash
# Configures (once) and builds TARGET... in a clang sanitizer tree (docs/reliability.md):
#   scripts/sanitized_build.sh asan TARGET...   build-asan/: -fsanitize=address,undefined plus libFuzzer's
#                                               coverage (fuzzer-no-link) and the fuzz/ targets; serves
#                                               scripts/sanitize.sh's test suite and scripts/fuzz.sh
#   scripts/sanitized_build.sh tsan TARGET...   build-tsan/: -fsanitize=thread
# -O1 -g1: a third of -O3's compile time, line numbers in reports. No benchmarks, no Python
# extension: only what the stages run is built. The trees: $ONNXMINI_ASAN_BUILD_DIR, $ONNXMINI_TSAN_BUILD_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: sanitized_build.sh asan|tsan TARGET...}
shift
case "$kind" in
  asan) dir=${ONNXMINI_ASAN_BUILD_DIR:-build-asan}; opts=(-DONNXMINI_SANITIZE=address,undefined -DONNXMINI_BUILD_FUZZERS=ON) ;;
  tsan) dir=${ONNXMINI_TSAN_BUILD_DIR:-build-tsan}; opts=(-DONNXMINI_SANITIZE=thread) ;;
  *) echo "sanitized_build.sh: unknown kind '$kind' (asan or tsan)" >&2; exit 2 ;;
esac
if [ ! -f "$dir/CMakeCache.txt" ]; then
  args=(-S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize "-DCMAKE_CXX_FLAGS=-O1 -g1 -DNDEBUG"
        -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang
        -DONNXMINI_BUILD_BENCHMARKS=OFF -DONNXMINI_BUILD_PYTHON=OFF "${opts[@]}")
  # The venv's interpreter has onnx: the OnnxPip* node tests get their data (tests/CMakeLists.txt).
  if [ -x .venv/bin/python ]; then args+=("-DPython_EXECUTABLE=$PWD/.venv/bin/python"); fi
  cmake "${args[@]}" >/dev/null
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$dir" -j"$(nproc)" "${targets[@]}"
