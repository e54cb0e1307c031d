#!/usr/bin/env bash
# Builds and installs the onnxmini Python package into .venv (pip install .).
# --no-build-isolation reuses the venv's scikit-build-core and pybind11.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pip install -q --no-build-isolation -Cbuild-dir=build-py/wheel .
