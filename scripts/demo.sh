#!/usr/bin/env bash
# README command 1: set up, build, and run the main job on the bundled default
# model (KMeans, 8 clusters over 20 features) with a realistic batch of 1000 rows.
# Builds only the CLI and the library it links (not the tests, benchmarks or the
# Python extension: scripts/test.sh builds those in the same tree).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh onnxmini_cli
BUILD_DIR=${ONNXMINI_BUILD_DIR:-build}
"$BUILD_DIR"/tools/onnxmini info models/kmeans.onnx
"$BUILD_DIR"/tools/onnxmini run models/kmeans.onnx --input input=models/kmeans_batch.npy --warmup 5 --repeat 50 --memory
