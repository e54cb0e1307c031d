#!/usr/bin/env python3
"""Runs ONNX backend node-test folders through onnxruntime's Python API with the comparison of
onnx's own backend-test runner, so docs/conformance.md can put onnxruntime's figure beside
onnxmini's on the same tests:

    python scripts/conformance_ort.py LIST REPORT NODE_ROOT

LIST holds one test folder name per line. For each, REPORT gets "start NAME" before the run
and "done NAME pass|fail MESSAGE" after it, so scripts/conformance.py can restart after a test
that kills the process. The comparison is onnx.backend.test.runner's: same dtype, then
`np.testing.assert_allclose(rtol=1e-3, atol=1e-7)` for numbers (NaN equal to NaN), exact
equality for strings and other objects, element by element for sequences, None for an empty
optional. onnxmini's own figure comes from its C++ runner (tests/conformance/conformance_runner.cc),
which applies the same bounds or stricter ones, with the fast and the reference kernels.
"""
import pathlib
import sys
import warnings

import numpy as np
import onnx
from onnx import numpy_helper


def load_value(path, value_info):
    """The input/output value in a .pb file, read as the model's declared type says."""
    data = path.read_bytes()
    t = value_info.type
    if t.HasField("sequence_type"):
        proto = onnx.SequenceProto()
        proto.ParseFromString(data)
        return numpy_helper.to_list(proto)
    if t.HasField("optional_type"):
        proto = onnx.OptionalProto()
        proto.ParseFromString(data)
        return numpy_helper.to_optional(proto)
    if t.HasField("map_type"):
        proto = onnx.MapProto()
        proto.ParseFromString(data)
        return numpy_helper.to_dict(proto)
    proto = onnx.TensorProto()
    proto.ParseFromString(data)
    return numpy_helper.to_array(proto)


def assert_similar(expected, got):
    if expected is None:
        if got is not None and not (isinstance(got, list) and len(got) == 0):
            raise AssertionError(f"expected an empty optional, got {type(got).__name__}")
        return
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            raise AssertionError(f"expected a sequence of {len(expected)}, got {type(got).__name__}")
        for e, g in zip(expected, got):
            assert_similar(e, g)
        return
    if isinstance(expected, dict):
        if expected != got:
            raise AssertionError("maps differ")
        return
    got = np.asarray(got)
    if got.dtype != expected.dtype:
        raise AssertionError(f"dtype {got.dtype} != expected {expected.dtype}")
    if expected.dtype == object:
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-7)


def run_folder(folder):
    import onnxruntime as ort

    model = onnx.load(str(folder / "model.onnx"))
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
    data_sets = sorted(folder.glob("test_data_set_*"))
    if not data_sets:
        raise AssertionError("no test_data_set_*")
    for ds in data_sets:
        feeds = {}
        for k, vi in enumerate(model.graph.input):
            p = ds / f"input_{k}.pb"
            if p.exists():
                feeds[vi.name] = load_value(p, vi)
        expected = [load_value(ds / f"output_{k}.pb", vi) for k, vi in enumerate(model.graph.output)
                    if (ds / f"output_{k}.pb").exists()]
        got = session.run([vi.name for vi in model.graph.output][:len(expected)], feeds)
        for e, g in zip(expected, got):
            assert_similar(e, g)


def main():
    lst, report, root = (pathlib.Path(a) for a in sys.argv[1:4])
    warnings.simplefilter("ignore")
    with open(report, "a") as out:
        for name in lst.read_text().split():
            out.write(f"start {name}\n")
            out.flush()
            try:
                run_folder(root / name)
                out.write(f"done {name} pass\n")
            except Exception as e:  # any failure of onnxruntime or of the comparison
                msg = " ".join(str(e).split())[:200]
                out.write(f"done {name} fail {type(e).__name__}: {msg}\n")
            out.flush()


if __name__ == "__main__":
    main()
