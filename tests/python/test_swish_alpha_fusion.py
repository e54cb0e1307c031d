"""Swish with a slope in the GEMM / Conv epilogues (runtime/graph_fusion.cc): the written-out forms
Mul(x, Sigmoid(Mul(x, c))) (QuickGelu: c = 1.702; ppocr_v4_rec writes c = 1) after a bias MatMul and
after a Conv.

* A QuickGelu MLP built with onnx.helper: the fused session gives onnxruntime's outputs; `onnxmini
  optimize --report` names the rule; the saved model keeps the original nodes and runs in onnxruntime.
* ppocr_v4_rec (zoo): every one of its 7 written-out Swish chains is fused, and the fused session
  agrees with the unfused one and with onnxruntime within the zoo manifest's tolerance.

Tolerance of the small model: dot products of length K = 24 with values ~1 and a sigmoid per element,
reordered by the fused kernel: a few float32 ulps (1e-5 absolute, 1e-4 relative).
"""
import re
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxmini
from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "zoo"))
import zoo_lib  # noqa: E402

ATOL, RTOL = 1e-5, 1e-4


def _quick_gelu_mlp(alpha=1.702):
    """[2, 9, 24] x [24, 48] + b -> x * Sigmoid(alpha x) -> [48, 24] + b2 (opset 14)."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((24, 48)).astype(np.float32) * 0.3, "W1"),
             numpy_helper.from_array(rng.standard_normal(48).astype(np.float32) * 0.1, "b1"),
             numpy_helper.from_array(np.float32(alpha), "alpha"),
             numpy_helper.from_array(rng.standard_normal((48, 24)).astype(np.float32) * 0.3, "W2"),
             numpy_helper.from_array(rng.standard_normal(24).astype(np.float32) * 0.1, "b2")]
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h_mm"], name="fc1"),
             helper.make_node("Add", ["h_mm", "b1"], ["h"], name="fc1_bias"),
             helper.make_node("Mul", ["alpha", "h"], ["h_scaled"], name="act_scale"),
             helper.make_node("Sigmoid", ["h_scaled"], ["gate"], name="act_sigmoid"),
             helper.make_node("Mul", ["gate", "h"], ["act"], name="act_gate"),
             helper.make_node("MatMul", ["act", "W2"], ["y_mm"], name="fc2"),
             helper.make_node("Add", ["y_mm", "b2"], ["y"], name="fc2_bias")]
    graph = helper.make_graph(nodes, "quick_gelu_mlp",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 9, 24])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 9, 24])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)


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


def test_quick_gelu_mlp_matches_onnxruntime_and_saved_model_keeps_nodes(onnxmini_cli, tmp_path):
    model = _quick_gelu_mlp()
    onnx.checker.check_model(model)
    src, out = tmp_path / "model.onnx", tmp_path / "optimized.onnx"
    onnx.save(model, str(src))
    feeds = {"x": np.random.default_rng(1).standard_normal((2, 9, 24)).astype(np.float32)}
    expected = _ort(model.SerializeToString()).run(None, feeds)[0]
    for threads in (1, 2):
        got = _mini(str(src), 99, threads).run(None, feeds)[0]
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)

    r = subprocess.run([str(onnxmini_cli), "optimize", str(src), "-o", str(out), "--report"],
                       capture_output=True, text=True, check=True)
    line = next((l for l in r.stdout.splitlines() if "'act_gate'" in l), "")
    assert re.search(r"\bgemm_activation\b", line) and "'act_scale'" in line and "'act_sigmoid'" in line, r.stdout
    ops = [n.op_type for n in onnx.load(str(out)).graph.node]
    assert "Sigmoid" in ops and ops.count("Mul") == 2, ops  # saved with the original nodes
    got = _ort(onnx.load(str(out)).SerializeToString()).run(None, feeds)[0]
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_ppocr_v4_rec_swish_chains_fused_and_match(onnxmini_cli, tmp_path):
    entry = next(e for e in zoo_lib.load_manifest() if e["name"] == "ppocr_v4_rec")
    path = zoo_lib.model_path(entry)
    if not path.exists():
        pytest.skip(f"zoo model ppocr_v4_rec is not in {zoo_lib.cache_dir()}: run `{zoo_lib.FETCH_COMMAND}`")
    r = subprocess.run([str(onnxmini_cli), "optimize", str(path), "-o", str(tmp_path / "optimized.onnx"), "--report"],
                       capture_output=True, text=True, check=True)
    # Each chain Mul(x, c) -> Sigmoid -> Mul(x, s) lands in one rule row with its producer.
    rows = [l for l in r.stdout.splitlines()
            if re.search(r"\b(gemm_activation|conv_activation_extra)\b", l) and re.search(r"\bSigmoid '", l)]
    assert len(rows) == 7, r.stdout
    assert sum("MatMul" in l for l in rows) == 2 and sum("Conv" in l for l in rows) == 5, rows
    tol = entry["tolerance"]
    for seed in (0, 1):
        feeds = zoo_lib.make_feeds(entry, seed)
        expected = _ort(str(path)).run(None, feeds)
        plain = _mini(str(path), 0).run(None, feeds)
        fused = _mini(str(path), 99).run(None, feeds)
        for e, p, f in zip(expected, plain, fused):
            np.testing.assert_allclose(f, e, rtol=tol["rtol"], atol=tol["atol"])
            np.testing.assert_allclose(f, p, rtol=tol["rtol"], atol=tol["atol"])
