#!/usr/bin/env bash
# Installs the onnxmini Python package into .venv from the build tree (build/, or
# $ONNXMINI_BUILD_DIR) without compiling the library again: builds the extension and the
# CLI there (nothing to do after scripts/build.sh), packs the wheel that `pip install .`
# would make from those files (scripts/wheel_from_build.py) and pip-installs it.
# `pip install .` itself still works and compiles everything (docs/building.md).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${ONNXMINI_BUILD_DIR:-build}
scripts/build.sh _onnxmini onnxmini_cli
dist="$BUILD_DIR/dist"
rm -rf "$dist"
wheel=$(.venv/bin/python scripts/wheel_from_build.py "$BUILD_DIR" "$dist")
# --no-deps --no-index: numpy comes with requirements.txt (scripts/setup.sh); nothing is downloaded.
.venv/bin/python -m pip install -q --no-deps --no-index --force-reinstall "$wheel"
echo "install_python: $(basename "$wheel") installed into .venv"
