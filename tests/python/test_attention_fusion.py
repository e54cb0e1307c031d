"""The attention fusion (runtime/graph_fusion_attention.h) on the forms exporters write, built with
onnx.helper: HF BERT self-attention (opset 14: heads split by Reshape / Transpose, scores / sqrt(D),
the extended mask (1 - mask) * -10000 added) and torch's scaled_dot_product_attention export
(sqrt(scale) on Q and on K^T) at opset 14 and at opset 23.

* The fused session (level 99) gives onnxruntime's outputs on the original model.
* `onnxmini optimize --report` names the rule; the saved model runs in onnxruntime with the same
  outputs: before opset 23 it keeps the original nodes, at opset 23 it holds the Attention node.

Tolerance: the scores are dot products of length D, softmax sums S exponentials and Y sums S
products, each reordered by the fused kernel: a few float32 ulps of the sums (1e-5 here, values ~1).
"""
import re
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxmini

B, S, H, D = 2, 9, 4, 8
E = H * D
ATOL = 1e-5


def _const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def _bert_attention(opset):
    """HF BertSelfAttention as torch.onnx exports it (eager attention)."""
    rng = np.random.default_rng(0)
    inits = [_const("shape_heads", np.array([0, 0, H, D], np.int64)),
             _const("shape_out", np.array([0, 0, E], np.int64)),
             _const("root_d", np.float32(np.sqrt(D))),
             _const("one", np.float32(1.0)), _const("neg", np.float32(-10000.0)),
             _const("axes12", np.array([1, 2], np.int64))]
    nodes = []
    for p in "qkv":
        inits += [_const(f"W{p}", rng.standard_normal((E, E)).astype(np.float32) * 0.2),
                  _const(f"b{p}", rng.standard_normal(E).astype(np.float32) * 0.1)]
        nodes += [helper.make_node("MatMul", ["hidden", f"W{p}"], [f"{p}_mm"], name=f"{p}_proj"),
                  helper.make_node("Add", [f"{p}_mm", f"b{p}"], [f"{p}_lin"], name=f"{p}_bias"),
                  helper.make_node("Reshape", [f"{p}_lin", "shape_heads"], [f"{p}_heads"], name=f"{p}_split"),
                  helper.make_node("Transpose", [f"{p}_heads"], [f"{p}_bhsd"], perm=[0, 2, 1, 3], name=f"{p}_perm")]
    nodes += [
        helper.make_node("Transpose", ["k_bhsd"], ["kt"], perm=[0, 1, 3, 2], name="k_t"),
        helper.make_node("MatMul", ["q_bhsd", "kt"], ["scores"], name="qk"),
        helper.make_node("Div", ["scores", "root_d"], ["scaled"], name="scale"),
        helper.make_node("Unsqueeze", ["attention_mask", "axes12"], ["mask4"], name="mask_unsqueeze"),
        helper.make_node("Sub", ["one", "mask4"], ["inv"], name="mask_invert"),
        helper.make_node("Mul", ["inv", "neg"], ["ext_mask"], name="mask_scale"),
        helper.make_node("Add", ["scaled", "ext_mask"], ["masked"], name="add_mask"),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1, name="softmax"),
        helper.make_node("MatMul", ["probs", "v_bhsd"], ["ctx"], name="pv"),
        helper.make_node("Transpose", ["ctx"], ["ctx_bshd"], perm=[0, 2, 1, 3], name="ctx_perm"),
        helper.make_node("Reshape", ["ctx_bshd", "shape_out"], ["out"], name="merge_heads")]
    graph = helper.make_graph(
        nodes, "bert_attention",
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "seq", E]),
         helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, ["batch", "seq"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "seq", E])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _sdpa(opset):
    """torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask) as exported: sqrt(scale)
    on Q and on K^T, the float mask added."""
    root = np.float32(np.sqrt(1.0 / np.sqrt(D)))
    nodes = [helper.make_node("Mul", ["q", "root"], ["q_s"], name="scale_q"),
             helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2], name="k_t"),
             helper.make_node("Mul", ["kt", "root"], ["kt_s"], name="scale_kt"),
             helper.make_node("MatMul", ["q_s", "kt_s"], ["scores"], name="qk"),
             helper.make_node("Add", ["scores", "mask"], ["masked"], name="add_mask"),
             helper.make_node("Softmax", ["masked"], ["probs"], axis=-1, name="softmax"),
             helper.make_node("MatMul", ["probs", "v"], ["y"], name="pv")]
    bhsd = ["batch", H, "seq", D]
    graph = helper.make_graph(
        nodes, "sdpa",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, bhsd) for n in "qkv"] +
        [helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["seq", "seq"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, bhsd)], [_const("root", root)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _feeds(model):
    rng = np.random.default_rng(1)
    if model.graph.name == "bert_attention":
        mask = np.ones((B, S), np.float32)
        mask[1, 6:] = 0  # padding in the second sequence
        return {"hidden": rng.standard_normal((B, S, E)).astype(np.float32), "attention_mask": mask}
    causal = np.triu(np.full((S, S), -1e9, np.float32), 1)
    return {**{n: rng.standard_normal((B, H, S, D)).astype(np.float32) for n in "qkv"}, "mask": causal}


def _ort(model_bytes):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def _mini(model_bytes, level=99):
    so = onnxmini.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    return onnxmini.InferenceSession(model_bytes, so)


CASES = [(_bert_attention, 14, "attention_before_opset23"), (_sdpa, 14, "attention_before_opset23"),
         (_sdpa, 23, "attention")]


@pytest.mark.parametrize("build,opset,rule", CASES, ids=["bert_opset14", "sdpa_opset14", "sdpa_opset23"])
def test_fused_matches_onnxruntime_and_saved_model_runs(build, opset, rule, onnxmini_cli, tmp_path):
    model = build(opset)
    onnx.checker.check_model(model)
    src, out = tmp_path / "model.onnx", tmp_path / "optimized.onnx"
    onnx.save(model, str(src))
    feeds = _feeds(model)
    expected = _ort(model.SerializeToString()).run(None, feeds)[0]
    np.testing.assert_allclose(_mini(str(src)).run(None, feeds)[0], expected, rtol=1e-4, atol=ATOL)

    r = subprocess.run([str(onnxmini_cli), "optimize", str(src), "-o", str(out), "--report"],
                       capture_output=True, text=True, check=True)
    assert re.search(rf"\b{rule} +MatMul 'qk' \.\. Softmax 'softmax' \.\. MatMul 'pv'", r.stdout), r.stdout
    saved = onnx.load(str(out))
    ops = [n.op_type for n in saved.graph.node]
    if opset >= 23:
        # The mask's last dim is "seq", the keys' dim of K: no Expand needed, one node.
        assert ops == ["Attention"], ops
    else:
        assert "Attention" not in ops and "Softmax" in ops, ops
    got = _ort(saved.SerializeToString()).run(None, feeds)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=ATOL)


def test_fused_equals_unfused_onnxmini():
    model = _bert_attention(14)
    feeds = _feeds(model)
    fused = _mini(model.SerializeToString(), 99).run(None, feeds)[0]
    plain = _mini(model.SerializeToString(), 0).run(None, feeds)[0]
    np.testing.assert_allclose(fused, plain, rtol=1e-4, atol=ATOL)
