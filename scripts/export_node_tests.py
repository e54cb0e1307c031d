#!/usr/bin/env python3
"""Writes the ONNX backend node tests of the installed onnx package (pip's onnx, e.g. 1.23) to a
folder in the layout of Debian's libonnx-testdata, so the conformance runner reads both alike:

    OUT/<test>/model.onnx
    OUT/<test>/test_data_set_N/input_K.pb, output_K.pb   (TensorProto, SequenceProto or OptionalProto)
    OUT/simple/<test>/...   the small multi-node model tests (onnx.backend.test.case.model, kind
                            "simple": test_sequence_model1-8 and others), Debian's data/simple

    python scripts/export_node_tests.py --out build/onnx_node_tests

The cases come from onnx.backend.test.case.node.collect_testcases (generated in memory, never
checked in). Every node test is written, implemented op or not: the manifest
(tests/conformance/manifest_onnx123.txt) says which must pass. CTest runs this as the fixture of
the pip-set conformance tests; a stamp file (onnx, numpy and ml_dtypes versions + this script) makes a re-run with
nothing changed a no-op.
"""
import argparse
import hashlib
import pathlib
import shutil
import sys
import warnings

REPO = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))

STAMP = ".export_stamp"


def value_proto(value, value_info):
    """The proto file content for one input/output value, chosen by the model's declared type."""
    import onnx
    from onnx import numpy_helper

    t = value_info.type
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, value_info.name)
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, value_info.name)
    if t.HasField("map_type"):
        return numpy_helper.from_dict(value, value_info.name)
    if isinstance(value, onnx.TensorProto):
        return value
    return numpy_helper.from_array(value, value_info.name)


def write_case(case, folder):
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(case.model.SerializeToString())
    graph = case.model.graph
    for n, (inputs, outputs) in enumerate(case.data_sets):
        data_set = folder / f"test_data_set_{n}"
        data_set.mkdir()
        for kind, values, infos in (("input", inputs, graph.input), ("output", outputs, graph.output)):
            for k, value in enumerate(values):
                (data_set / f"{kind}_{k}.pb").write_bytes(value_proto(value, infos[k]).SerializeToString())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder to (re)write")
    args = ap.parse_args()

    import ml_dtypes
    import numpy as np
    import onnx

    out = pathlib.Path(args.out)
    # The expected outputs are computed here by onnx's reference code on numpy and ml_dtypes, so
    # their versions are part of the data (ml_dtypes 0.7 turned out-of-range float -> int2 / int4
    # casts into 0 where 0.6 and onnx's spec wrap).
    key = hashlib.sha256(
        f"onnx {onnx.__version__} numpy {np.__version__} ml_dtypes {ml_dtypes.__version__}".encode()
        + pathlib.Path(__file__).read_bytes()).hexdigest()
    if (out / STAMP).exists() and (out / STAMP).read_text() == key:
        print(f"{out}: up to date (onnx {onnx.__version__})")
        return

    with warnings.catch_warnings():  # the generators' numpy overflow warnings (float8 casts) are expected
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases
        cases = collect_testcases(None)
        from onnx.backend.test.case.model import collect_testcases as collect_model_testcases
        simple = [c for c in collect_model_testcases() if c.kind == "simple"]

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    written = 0
    for case in cases:
        write_case(case, out / case.name)
        written += 1
    for case in simple:
        write_case(case, out / "simple" / case.name)
    (out / STAMP).write_text(key)
    print(f"{out}: {written} node tests and {len(simple)} simple model tests of onnx {onnx.__version__}")


if __name__ == "__main__":
    main()
