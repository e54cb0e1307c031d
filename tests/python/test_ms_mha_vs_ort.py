"""com.microsoft MultiHeadAttention against onnxruntime (one-node models, random inputs):
3-D and 4-D key / value, the QKV bias, key_padding_mask as (B, T) and as lengths (B),
attention_bias broadcast over batch or heads, past / present key-value, unidirectional,
an explicit scale, float16.

Tolerance: both compute softmax(Q K^T * scale + bias) V in float32 with different summation
orders; a score of H products of values <= 1 (plus the QKV bias) differs by at most
H^2 * 2^-23 * scale, an output (|v| <= 2) by atol = 4 * H^2 * 2^-23 + T * 2^-23; float16
outputs also carry one rounding (2^-11 relative, 2^-11 absolute near 0).
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

import onnxmini

CASES = [  # B, S, L, P, N, H, Hv, kv4d, bias, pad, attn_bias, causal, scale, dtype
    (2, 3, 5, 0, 2, 8, 8, False, False, None, None, False, 0.0, np.float32),
    (2, 4, 4, 0, 3, 8, 6, False, True, "2d", "b1", False, 0.0, np.float32),
    (1, 1, 1, 5, 4, 16, 16, True, False, None, "1n", True, 0.0, np.float32),
    (2, 3, 3, 2, 2, 8, 8, False, True, "1d", None, True, 0.3, np.float32),
    (2, 5, 5, 0, 2, 16, 16, False, True, "2d", "bn", False, 0.0, np.float16),
]


@pytest.mark.parametrize("B,S,L,P,N,H,Hv,kv4d,bias,pad,attn_bias,causal,scale,dtype", CASES)
def test_multi_head_attention_matches_onnxruntime(B, S, L, P, N, H, Hv, kv4d, bias, pad, attn_bias, causal, scale, dtype):
    rng = np.random.default_rng(B * 100 + S * 10 + L + P)
    T = P + L
    tp = TP.FLOAT if dtype == np.float32 else TP.FLOAT16
    feeds = {"q": rng.uniform(-1, 1, (B, S, N * H)).astype(dtype)}
    if kv4d:
        feeds["k"] = rng.uniform(-1, 1, (B, N, L, H)).astype(dtype)
        feeds["v"] = rng.uniform(-1, 1, (B, N, L, Hv)).astype(dtype)
    else:
        feeds["k"] = rng.uniform(-1, 1, (B, L, N * H)).astype(dtype)
        feeds["v"] = rng.uniform(-1, 1, (B, L, N * Hv)).astype(dtype)
    names = ["q", "k", "v", "", "", "", "", ""]
    if bias:
        feeds["bias"] = rng.uniform(-1, 1, 2 * N * H + N * Hv).astype(dtype)
        names[3] = "bias"
    if pad == "2d":
        m = np.ones((B, T), np.int32)
        m[0, -2:] = 0
        feeds["pad"] = m
        names[4] = "pad"
    elif pad == "1d":
        feeds["pad"] = np.array([T, T - 1][:B], np.int32)
        names[4] = "pad"
    if attn_bias:
        shape = {"b1": (B, 1, S, T), "1n": (1, N, S, T), "bn": (B, N, S, T)}[attn_bias]
        feeds["ab"] = rng.uniform(-2, 2, shape).astype(dtype)
        names[5] = "ab"
    if P:
        feeds["pk"] = rng.uniform(-1, 1, (B, N, P, H)).astype(dtype)
        feeds["pv"] = rng.uniform(-1, 1, (B, N, P, Hv)).astype(dtype)
        names[6], names[7] = "pk", "pv"
    while names[-1] == "":
        names.pop()
    attrs = {"num_heads": N, "unidirectional": int(causal)}
    if scale:
        attrs["scale"] = scale
    outs = ["y", "present_k", "present_v"] if P else ["y"]
    node = oh.make_node("MultiHeadAttention", names, outs, domain="com.microsoft", **attrs)
    elem = {np.dtype(np.int32): TP.INT32}
    inputs = [oh.make_tensor_value_info(n, elem.get(feeds[n].dtype, tp), feeds[n].shape) for n in names if n]
    g = oh.make_graph([node], "g", inputs, [oh.make_tensor_value_info(o, tp, None) for o in outs])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 21), oh.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    model = m.SerializeToString()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = onnxmini.InferenceSession(model).run(None, feeds)
    atol = 4 * H * H * 2.0 ** -23 + T * 2.0 ** -23
    rtol = 0.0
    if dtype == np.float16:
        atol, rtol = atol + 2.0 ** -11 * 2, 2.0 ** -10
    for r, o in zip(ref, got):
        assert o.dtype == r.dtype and o.shape == r.shape
        np.testing.assert_allclose(o.astype(np.float32), r.astype(np.float32), atol=atol, rtol=rtol)
