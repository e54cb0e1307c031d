#!/usr/bin/env python3
"""Runs the ONNX backend node tests of the layout / indexing / reduction ops
through the onnxmini CLI and compares every output with the expected .pb.

    python tests/kernels/tensor/check_backend_node_tests.py build-layout/tools/onnxmini [--kernels reference]

Prints one line per failing test and a summary; exits 1 when any test fails.
(The project's official conformance runner lives elsewhere; this is the quick
check used while developing these kernels.)
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

DATA = "/usr/share/libonnx-testdata/data/node"
PREFIXES = [
    "transpose", "concat", "split", "slice", "gather_", "gather_elements", "expand", "tile", "constant_pad",
    "edge_pad", "reflect_pad", "wrap_pad", "pad", "shape", "size", "constantofshape", "range", "top_k", "argmax",
    "argmin", "reduce_", "squeeze", "unsqueeze", "reshape", "flatten", "identity",
]


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def check(cli, test_dir, kernels):
    failures = []
    for ds in sorted(glob.glob(os.path.join(test_dir, "test_data_set_*"))):
        with tempfile.TemporaryDirectory() as out:
            r = subprocess.run([cli, "run", os.path.join(test_dir, "model.onnx"), "--inputs", ds, "--save-outputs", out,
                                "--kernels", kernels], capture_output=True, text=True)
            if r.returncode != 0:
                return [(r.stderr or r.stdout).strip().splitlines()[-1] if (r.stderr or r.stdout).strip() else "failed"]
            model = onnx.load(os.path.join(test_dir, "model.onnx"))
            for i, o in enumerate(model.graph.output):
                expected = load_pb(os.path.join(ds, f"output_{i}.pb"))
                p = os.path.join(out, f"output_{i}.pb")  # the CLI saves outputs by position
                if not os.path.exists(p):
                    failures.append(f"output {o.name} not saved")
                    continue
                got = load_pb(p)
                if got.shape != expected.shape:
                    failures.append(f"output {o.name}: shape {got.shape} vs {expected.shape}")
                elif got.dtype != expected.dtype:
                    failures.append(f"output {o.name}: dtype {got.dtype} vs {expected.dtype}")
                elif expected.dtype.kind in "fc":
                    if not np.allclose(got, expected, rtol=1e-4, atol=1e-5, equal_nan=True):
                        failures.append(f"output {o.name}: max diff {np.nanmax(np.abs(got - expected))}")
                elif not np.array_equal(got, expected):
                    failures.append(f"output {o.name}: values differ")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--kernels", default="fast")
    args = ap.parse_args()
    tests = sorted(d for d in glob.glob(os.path.join(DATA, "test_*"))
                   if any(os.path.basename(d)[5:].startswith(p) for p in PREFIXES))
    bad = 0
    for t in tests:
        f = check(args.cli, t, args.kernels)
        if f:
            bad += 1
            print(f"FAIL {os.path.basename(t)}: {'; '.join(f)}")
    print(f"{len(tests) - bad} of {len(tests)} passed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
