#!/usr/bin/env bash
# Idempotent setup: Debian packages (apt) and the Python venv (.venv) used for
# model generation, onnxruntime comparisons and the Python package.
# Usage: scripts/setup.sh            (apt + venv)
#        SKIP_APT=1 scripts/setup.sh (venv only)
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(cmake g++ make ninja-build libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libeigen3-dev libopenblas-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev pybind11-dev python3-venv
  clang libclang-rt-14-dev llvm)  # clang, its sanitizer + libFuzzer runtimes, llvm-symbolizer: scripts/sanitize.sh, fuzz.sh

if [ "${SKIP_APT:-0}" != 1 ]; then
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.requirements.stamp
if [ ! -f "$stamp" ] || ! cmp -s requirements.txt "$stamp"; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements.txt
  cp requirements.txt "$stamp"
fi
echo "setup: ok"
