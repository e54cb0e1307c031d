#!/usr/bin/env bash
# README command 2: set up, build, and run every test (GoogleTest via CTest, then pytest).
# Exits non-zero when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
BUILD_DIR=${ONNXMINI_BUILD_DIR:-build}
export ONNXMINI_BUILD_DIR="$PWD/$BUILD_DIR"
status=0
(cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)") || status=1
if [ -f pyproject.toml ]; then
  scripts/install_python.sh || status=1
fi
if ls tests/python/test_*.py >/dev/null 2>&1; then
  .venv/bin/python -m pytest tests/python -q -p no:cacheprovider || status=1
fi
if [ $status -ne 0 ]; then
  echo "test.sh: FAILED" >&2
fi
exit $status
