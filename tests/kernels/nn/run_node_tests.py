#!/usr/bin/env python3
"""Runs ONNX backend node tests for the nn / linalg ops through the onnxmini CLI
and compares every output with the expected output_*.pb.

  .venv/bin/python tests/kernels/nn/run_node_tests.py build-nn/tools/onnxmini [--kernels reference] [PATTERN ...]

Tolerance as in the ONNX backend runner: rtol 1e-3, atol 1e-7 (float64 1e-7 / 1e-9 would be stricter;
the expected data is itself float32 numpy output for float tests).
"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

DATA = "/usr/share/libonnx-testdata/data/node"
DEFAULT = ["conv", "convtranspose", "gemm", "matmul_", "maxpool", "averagepool", "globalaveragepool",
           "globalmaxpool", "batchnorm", "instancenorm", "layer_normalization", "softmax", "logsoftmax"]


def run_case(cli, case, extra):
    model = os.path.join(case, "model.onnx")
    failures = []
    for ds in sorted(glob.glob(os.path.join(case, "test_data_set_*"))):
        with tempfile.TemporaryDirectory() as out:
            r = subprocess.run([cli, "run", model, "--inputs", ds, "--save-outputs", out] + extra,
                               capture_output=True, text=True)
            if r.returncode != 0:
                return [(r.stderr or r.stdout).strip().splitlines()[-1] if (r.stderr or r.stdout).strip() else "rc %d" % r.returncode]
            graph_outputs = [o.name for o in onnx.load(model, load_external_data=False).graph.output]
            for i, name in enumerate(graph_outputs):
                exp_file = os.path.join(ds, "output_%d.pb" % i)
                if not os.path.exists(exp_file):
                    continue
                t = onnx.TensorProto()
                t.ParseFromString(open(exp_file, "rb").read())
                expected = numpy_helper.to_array(t)
                cands = [f for f in os.listdir(out) if f.startswith(name + ".") or f.startswith("output_%d." % i)]
                if not cands:
                    failures.append("%s: no saved output (%s)" % (name, os.listdir(out)))
                    continue
                path = os.path.join(out, cands[0])
                if path.endswith(".npy"):
                    actual = np.load(path)
                else:
                    t2 = onnx.TensorProto()
                    t2.ParseFromString(open(path, "rb").read())
                    actual = numpy_helper.to_array(t2)
                if actual.shape != expected.shape:
                    failures.append("%s: shape %s vs %s" % (name, actual.shape, expected.shape))
                elif actual.dtype != expected.dtype:
                    failures.append("%s: dtype %s vs %s" % (name, actual.dtype, expected.dtype))
                elif not np.allclose(actual, expected, rtol=1e-3, atol=1e-7, equal_nan=True):
                    err = np.max(np.abs(actual.astype(np.float64) - expected.astype(np.float64)))
                    failures.append("%s: max abs err %g" % (name, err))
    return failures


def main():
    cli = sys.argv[1]
    args = sys.argv[2:]
    extra = []
    if len(args) >= 2 and args[0] == "--kernels":
        extra = ["--kernels", args[1]]
        args = args[2:]
    patterns = args or DEFAULT
    cases = sorted({c for p in patterns for c in glob.glob(os.path.join(DATA, "test_" + p + "*"))})
    npass = 0
    for case in cases:
        f = run_case(cli, case, extra)
        name = os.path.basename(case)
        if f:
            print("FAIL", name, "|", "; ".join(f))
        else:
            npass += 1
            print("ok  ", name)
    print("%d / %d passed" % (npass, len(cases)))


if __name__ == "__main__":
    main()
