"""conv_gelu (runtime/graph_fusion.cc): Conv -> Gelu (approximate none / tanh) into the Conv's epilogue.

A small Conv network built with onnx.helper (a dense 3x3 Conv -> Gelu erf, a depthwise 3x3 Conv ->
Gelu tanh, a 1x1 Conv -> Gelu erf): the fused session gives onnxruntime's outputs; `onnxmini optimize
--report` names the rule for each pair; the saved model keeps the original nodes (FusedConv has no
Gelu) and runs in onnxruntime with the same outputs.

Tolerance: dot products of up to K = 72 terms of values ~1 reordered by the fused kernels, then
Gelu (slope <= 1.13) with our SIMD erf against onnxruntime's: a few float32 ulps of the sums
(1e-5 absolute, 1e-4 relative), as the other fusion tests.
"""
import re
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import onnxmini

ATOL, RTOL = 1e-5, 1e-4


def _conv_gelu_net():
    """[1, 8, 12, 12] -> Conv 3x3 8->16 -> Gelu -> depthwise 3x3 -> Gelu tanh -> Conv 1x1 16->8 -> Gelu (opset 20)."""
    rng = np.random.default_rng(0)

    def w(name, shape, scale):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [w("W1", (16, 8, 3, 3), 0.3), w("b1", (16,), 0.1), w("W2", (16, 1, 3, 3), 0.5), w("b2", (16,), 0.1),
             w("W3", (8, 16, 1, 1), 0.4), w("b3", (8,), 0.1)]
    nodes = [helper.make_node("Conv", ["x", "W1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Gelu", ["c1"], ["g1"], name="gelu1"),
             helper.make_node("Conv", ["g1", "W2", "b2"], ["c2"], name="conv_dw", pads=[1, 1, 1, 1], group=16),
             helper.make_node("Gelu", ["c2"], ["g2"], name="gelu_dw", approximate="tanh"),
             helper.make_node("Conv", ["g2", "W3", "b3"], ["c3"], name="conv_1x1"),
             helper.make_node("Gelu", ["c3"], ["y"], name="gelu3")]
    graph = helper.make_graph(nodes, "conv_gelu_net",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 12, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 12, 12])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)


def _ort(model_bytes):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def _mini(model, level, threads=1):
    so = onnxmini.SessionOptions()
    so.intra_op_num_threads = threads
    so.graph_optimization_level = level
    return onnxmini.InferenceSession(model, so)


def test_conv_gelu_net_matches_onnxruntime_and_saved_model_keeps_nodes(onnxmini_cli, tmp_path):
    model = _conv_gelu_net()
    onnx.checker.check_model(model)
    src, out = tmp_path / "model.onnx", tmp_path / "optimized.onnx"
    onnx.save(model, str(src))
    feeds = {"x": np.random.default_rng(1).standard_normal((1, 8, 12, 12)).astype(np.float32)}
    expected = _ort(model.SerializeToString()).run(None, feeds)[0]
    for threads in (1, 2):
        sess = _mini(str(src), 99, threads)
        assert [r for r, _ in sess.graph_rewrites()] == ["conv_gelu"] * 3
        assert len(sess.describe()["nodes"]) == 3
        np.testing.assert_allclose(sess.run(None, feeds)[0], expected, rtol=RTOL, atol=ATOL)

    r = subprocess.run([str(onnxmini_cli), "optimize", str(src), "-o", str(out), "--report"],
                       capture_output=True, text=True, check=True)
    for conv, gelu in (("conv1", "gelu1"), ("conv_dw", "gelu_dw"), ("conv_1x1", "gelu3")):
        line = next((l for l in r.stdout.splitlines() if f"'{gelu}'" in l), "")
        assert re.search(r"\bconv_gelu\b", line) and f"'{conv}'" in line, r.stdout
    ops = [n.op_type for n in onnx.load(str(out)).graph.node]
    assert ops == ["Conv", "Gelu"] * 3, ops  # saved with the original nodes
    got = _ort(onnx.load(str(out)).SerializeToString()).run(None, feeds)[0]
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
