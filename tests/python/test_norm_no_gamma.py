"""Normalizations without their gamma Mul (Keras / torch scale=False, center=False): layer_norm,
layer_norm_tf (Keras' form) and rms_norm fuse them with a new constant of ones as the scale
(runtime/graph_fusion_norm*.cc). The rules are saved as ONNX: the saved model holds LayerNormalization / RMSNormalization with the ones
initializer, and onnxruntime runs it with the unfused model's outputs.

Tolerance: two float32 reductions of length C = 48 over values of magnitude ~5, normalized to ~1:
1e-5 absolute, 1e-4 relative, as the other fusion tests.
"""
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxmini

ATOL, RTOL = 1e-5, 1e-4
SHAPE = [2, 5, 48]


def _layer_norm(beta):
    inits = [numpy_helper.from_array(np.float32(2.0), "two"), numpy_helper.from_array(np.float32(1e-5), "eps")]
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], name="mean", axes=[-1]),
             helper.make_node("Sub", ["x", "m"], ["d"], name="sub"),
             helper.make_node("Pow", ["d", "two"], ["sq"], name="sq"),
             helper.make_node("ReduceMean", ["sq"], ["var"], name="var", axes=[-1]),
             helper.make_node("Add", ["var", "eps"], ["ve"], name="add_eps"),
             helper.make_node("Sqrt", ["ve"], ["s"], name="sqrt"),
             helper.make_node("Div", ["d", "s"], ["n" if beta else "y"], name="div")]
    if beta:
        inits.append(numpy_helper.from_array(np.linspace(-1, 1, SHAPE[-1]).astype(np.float32), "beta"))
        nodes.append(helper.make_node("Add", ["n", "beta"], ["y"], name="add_beta"))
    return _model(nodes, inits, 17)


def _rms_norm():
    inits = [numpy_helper.from_array(np.float32(1e-6), "eps"), numpy_helper.from_array(np.array([-1], np.int64), "axes")]
    nodes = [helper.make_node("Mul", ["x", "x"], ["sq"], name="sq"),
             helper.make_node("ReduceMean", ["sq", "axes"], ["ms"], name="ms"),
             helper.make_node("Add", ["ms", "eps"], ["me"], name="add_eps"),
             helper.make_node("Sqrt", ["me"], ["r"], name="sqrt"),
             helper.make_node("Div", ["x", "r"], ["y"], name="div")]
    return _model(nodes, inits, 23)


def _keras_layer_norm():
    """tf.nn.batch_normalization with scale=None, offset=None as tf2onnx writes it (opset 18)."""
    inits = [numpy_helper.from_array(np.float32(1e-3), "eps"), numpy_helper.from_array(np.array([-1], np.int64), "axes")]
    nodes = [helper.make_node("ReduceMean", ["x", "axes"], ["mean"], name="moments/mean"),
             helper.make_node("Sub", ["x", "mean"], ["d"], name="moments/SquaredDifference"),
             helper.make_node("Mul", ["d", "d"], ["sq"], name="square"),
             helper.make_node("ReduceMean", ["sq", "axes"], ["var"], name="moments/variance"),
             helper.make_node("Add", ["var", "eps"], ["ve"], name="batchnorm/add"),
             helper.make_node("Sqrt", ["ve"], ["s"], name="batchnorm/Rsqrt"),
             helper.make_node("Reciprocal", ["s"], ["inv"], name="batchnorm/Rsqrt__9"),
             helper.make_node("Mul", ["x", "inv"], ["xs"], name="batchnorm/mul_1"),
             helper.make_node("Neg", ["mean"], ["nm"], name="batchnorm/Neg"),
             helper.make_node("Mul", ["nm", "inv"], ["shift"], name="batchnorm/mul_2"),
             helper.make_node("Add", ["xs", "shift"], ["y"], name="batchnorm/add_1")]
    return _model(nodes, inits, 18)


def _model(nodes, inits, opset):
    graph = helper.make_graph(nodes, "norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _ort(model_bytes):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("name, model, rule, op", [
    ("layer_norm, no gamma, no beta", _layer_norm(False), "layer_norm", "LayerNormalization"),
    ("layer_norm, no gamma, beta", _layer_norm(True), "layer_norm", "LayerNormalization"),
    ("rms_norm, no gamma", _rms_norm(), "rms_norm", "RMSNormalization"),
    ("layer_norm_tf, Keras scale=False center=False", _keras_layer_norm(), "layer_norm_tf", "LayerNormalization"),
])
def test_fused_with_ones_and_saved_model_runs_in_onnxruntime(onnxmini_cli, tmp_path, name, model, rule, op):
    onnx.checker.check_model(model)
    src, out = tmp_path / "model.onnx", tmp_path / "optimized.onnx"
    onnx.save(model, str(src))
    feeds = {"x": np.random.default_rng(1).uniform(-3, 5, SHAPE).astype(np.float32)}
    expected = _ort(model.SerializeToString()).run(None, feeds)[0]  # the unfused graph
    so = onnxmini.SessionOptions()
    so.graph_optimization_level = 99
    sess = onnxmini.InferenceSession(str(src), so)
    assert [r for r, _ in sess.graph_rewrites()] == [rule], name
    np.testing.assert_allclose(sess.run(None, feeds)[0], expected, rtol=RTOL, atol=ATOL, err_msg=name)

    subprocess.run([str(onnxmini_cli), "optimize", str(src), "-o", str(out)], capture_output=True, text=True, check=True)
    saved = onnx.load(str(out))
    assert [n.op_type for n in saved.graph.node] == [op], name
    scale = next(i for i in saved.graph.initializer if i.name == saved.graph.node[0].input[1])
    np.testing.assert_array_equal(numpy_helper.to_array(scale), np.ones(SHAPE[-1], np.float32))
    got = _ort(saved.SerializeToString()).run(None, feeds)[0]
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL, err_msg=name)
