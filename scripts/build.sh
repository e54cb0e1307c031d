#!/usr/bin/env bash
# Configures and builds onnxmini (Release) in build/ (or $ONNXMINI_BUILD_DIR): the one build tree
# the CLI, the tests and the Python package all come from (docs/building.md).
# Usage: scripts/build.sh [TARGET...]   no target: everything (library, CLI, tests, benchmarks,
#                                       Python extension); scripts/demo.sh asks for onnxmini_cli only.
# Extra configure options: ONNXMINI_CMAKE_ARGS="-DONNXMINI_BUILD_BENCHMARKS=OFF" scripts/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${ONNXMINI_BUILD_DIR:-build}

args=(-S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DONNXMINI_BUILD_PYTHON=ON)
# Ninja on a new tree (less overhead than make, one job pool); an existing tree keeps
# its generator, since cmake refuses to switch. CMAKE_GENERATOR in the environment wins.
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] && [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null; then
  args+=(-G Ninja)
fi
# The extension is built for the venv's interpreter, the one scripts/install_python.sh installs into.
if [ -x .venv/bin/python ]; then
  args+=("-DPython_EXECUTABLE=$PWD/.venv/bin/python")
fi
# shellcheck disable=SC2206  # word splitting of the user's extra options is intended
args+=(${ONNXMINI_CMAKE_ARGS:-})
cmake "${args[@]}" >/dev/null

targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j"$(nproc)" "${targets[@]}"
