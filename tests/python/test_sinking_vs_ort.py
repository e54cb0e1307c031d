"""Transpose / Reshape sinking (runtime/graph_sinking.h) against onnxruntime: models with the
sinking patterns are optimized by onnxmini (level 1 and 99), the saved models (plain ONNX) must
have fewer Transposes and run in onnxruntime with the outputs onnxruntime gives on the originals.

The rewrites only move data movement around elementwise ops, so the outputs must be equal bit
for bit (onnxruntime's optimizer off, so that it does not rewrite either model its own way).
"""
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxmini
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import bench_transpose_sinking  # noqa: E402

TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


def _elementwise_model(path):
    """Both forms of sink_transpose plus sink_reshape and transpose_to_reshape in one graph."""
    rng = np.random.default_rng(3)
    inits = [
        numpy_helper.from_array(rng.standard_normal((5, 3)).astype(np.float32), "bias"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
        numpy_helper.from_array(np.array([6, 20], np.int64), "s1"),
        numpy_helper.from_array(np.array([2, 60], np.int64), "s2"),
    ]
    nodes = [
        helper.make_node("Transpose", ["A"], ["ta"], perm=TO_NHWC),
        helper.make_node("Transpose", ["B"], ["tb"], perm=TO_NHWC),
        helper.make_node("Mul", ["ta", "tb"], ["m"]),
        helper.make_node("Add", ["m", "bias"], ["biased"]),
        helper.make_node("Tanh", ["biased"], ["th"]),
        helper.make_node("Transpose", ["th"], ["Y"], perm=TO_NCHW),
        helper.make_node("Reshape", ["A", "s1"], ["r1"]),
        helper.make_node("Mul", ["r1", "half"], ["rm"]),
        helper.make_node("Sigmoid", ["rm"], ["rs"]),
        helper.make_node("Reshape", ["rs", "s2"], ["Z"]),
        helper.make_node("Transpose", ["U"], ["W"], perm=[0, 2, 1]),
    ]
    graph = helper.make_graph(
        nodes, "sinking",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3, 4, 5]),
         helper.make_tensor_value_info("B", TensorProto.FLOAT, [2, 3, 4, 5]),
         helper.make_tensor_value_info("U", TensorProto.FLOAT, ["n", 7, 1])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("Y", "Z", "W")], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return {"A": rng.standard_normal((2, 3, 4, 5)).astype(np.float32),
            "B": rng.standard_normal((2, 3, 4, 5)).astype(np.float32),
            "U": rng.standard_normal((3, 7, 1)).astype(np.float32)}


def _optimized(path, level, out):
    so = onnxmini.SessionOptions()
    so.graph_optimization_level = level
    so.optimized_model_filepath = str(out)
    return onnxmini.InferenceSession(str(path), so)


def _ops(path):
    return [n.op_type for n in onnx.load(str(path)).graph.node]


def _ort(path, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feeds)


@pytest.mark.parametrize("level", [1, 99])
def test_elementwise_forms_saved_and_run_in_onnxruntime(tmp_path, level):
    src, out = tmp_path / "m.onnx", tmp_path / "opt.onnx"
    feeds = _elementwise_model(src)
    sess = _optimized(src, level, out)
    ops = _ops(out)
    # Y's Transposes merge into one that meets its inverse after Tanh: none left; U's unit-axis
    # Transpose becomes a Reshape; Z keeps one Reshape of two.
    assert ops.count("Transpose") == 0, ops
    assert ops.count("Reshape") == 2, ops
    assert [o.name for o in onnx.load(str(out)).graph.output] == ["Y", "Z", "W"]
    expected = _ort(src, feeds)
    for got, want in zip(_ort(out, feeds), expected):
        np.testing.assert_array_equal(got, want)
    # onnxmini's own outputs: those of its unoptimized session, bit for bit (its Tanh and
    # Sigmoid differ from onnxruntime's by an ulp, whatever the layout).
    so = onnxmini.SessionOptions()
    so.graph_optimization_level = 0
    plain = onnxmini.InferenceSession(str(src), so).run(None, feeds)
    for got, want in zip(sess.run(None, feeds), plain):
        np.testing.assert_array_equal(got, want)


def test_converter_style_cnn_loses_its_transposes(tmp_path):
    src, out = tmp_path / "cnn.onnx", tmp_path / "opt.onnx"
    feeds = bench_transpose_sinking.converter_style_cnn(src, 28)
    _optimized(src, 1, out)
    assert _ops(src).count("Transpose") == 12
    assert _ops(out).count("Transpose") == 2, _ops(out)  # the input's and the last Conv's
    want, got = _ort(src, feeds)[0], _ort(out, feeds)[0]
    # The same Convs on the same data; the bias Add and Relu moved to NCHW: elementwise, exact.
    np.testing.assert_array_equal(got, want)
