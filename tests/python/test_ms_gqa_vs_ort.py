"""com.microsoft GroupQueryAttention against onnxruntime (one-node models, random inputs):
a first prompt (with a right-padded batch entry), decode steps with a past buffer and
per-batch lengths, packed QKV, rotary (halves and interleaved), local window, softcap,
float16.

Tolerance: both compute softmax(Q K^T * scale) V in float32 with different summation orders
(see test_attention_vs_ort.py): atol = 4 * H^2 * 2^-23 + T * 2^-23; float16 adds one output
rounding (2^-11 relative and absolute). present_key / present_value hold copies and rotations
(one rounding to the stored type on both sides): compared with the same bound, on the rows
that hold keys (beyond each entry's length both sides hold no data to compare).
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

import onnxmini

CASES = [  # B, S, past_buf, lengths, N, Nkv, H, packed, rotary, interleaved, window, softcap, dtype
    (2, 5, 0, [5, 3], 4, 2, 16, False, False, 0, -1, 0.0, np.float32),
    (2, 1, 8, [7, 4], 4, 1, 32, False, True, 0, -1, 0.0, np.float32),
    (1, 3, 6, [9], 6, 2, 32, True, True, 1, -1, 0.0, np.float32),
    (2, 1, 10, [9, 11], 4, 2, 16, False, False, 0, 3, 0.0, np.float32),
    (2, 1, 10, [9, 11], 4, 2, 16, False, False, 0, -1, 30.0, np.float32),
    (1, 4, 0, [4], 4, 4, 32, False, True, 0, -1, 0.0, np.float16),
]


@pytest.mark.parametrize("B,S,past_buf,lengths,N,Nkv,H,packed,rotary,interleaved,window,softcap,dtype", CASES)
def test_group_query_attention_matches_onnxruntime(B, S, past_buf, lengths, N, Nkv, H, packed, rotary, interleaved,
                                                   window, softcap, dtype):
    rng = np.random.default_rng(B * 100 + S * 10 + past_buf + N)
    tp = TP.FLOAT if dtype == np.float32 else TP.FLOAT16
    total = max(max(lengths), S)
    feeds = {}
    if packed:
        feeds["q"] = rng.uniform(-1, 1, (B, S, (N + 2 * Nkv) * H)).astype(dtype)
        names = ["q", "", ""]
    else:
        feeds["q"] = rng.uniform(-1, 1, (B, S, N * H)).astype(dtype)
        feeds["k"] = rng.uniform(-1, 1, (B, S, Nkv * H)).astype(dtype)
        feeds["v"] = rng.uniform(-1, 1, (B, S, Nkv * H)).astype(dtype)
        names = ["q", "k", "v"]
    if past_buf:
        feeds["pk"] = rng.uniform(-1, 1, (B, Nkv, past_buf, H)).astype(dtype)
        feeds["pv"] = rng.uniform(-1, 1, (B, Nkv, past_buf, H)).astype(dtype)
        names += ["pk", "pv"]
    else:
        names += ["", ""]
    feeds["seqlens"] = np.array([n - 1 for n in lengths], np.int32)
    feeds["total"] = np.array(total, np.int32)
    names += ["seqlens", "total"]
    if rotary:
        angles = rng.uniform(0, 6.3, (32, H // 4))  # rotary_dim = H / 2 (onnxruntime: a multiple of 16)
        feeds["cos"], feeds["sin"] = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
        names += ["cos", "sin"]
    while names[-1] == "":
        names.pop()
    attrs = dict(num_heads=N, kv_num_heads=Nkv, do_rotary=int(rotary), rotary_interleaved=interleaved,
                 local_window_size=window, softcap=softcap)
    node = oh.make_node("GroupQueryAttention", names, ["y", "present_k", "present_v"], domain="com.microsoft", **attrs)
    types = {np.dtype(np.int32): TP.INT32}
    inputs = [oh.make_tensor_value_info(n, types.get(feeds[n].dtype, tp), feeds[n].shape) for n in names if n]
    g = oh.make_graph([node], "g", inputs, [oh.make_tensor_value_info(o, tp, None) for o in ["y", "present_k", "present_v"]])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 21), oh.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    model = m.SerializeToString()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = onnxmini.InferenceSession(model).run(None, feeds)
    atol = 4 * H * H * 2.0 ** -23 + total * 2.0 ** -23
    rtol = 0.0
    if dtype == np.float16:
        atol, rtol = atol + 2.0 ** -10, 2.0 ** -10
    assert got[0].shape == ref[0].shape and got[0].dtype == ref[0].dtype
    if past_buf:  # rows past an entry's length are padding: only the valid query rows are compared
        np.testing.assert_allclose(got[0].astype(np.float32), ref[0].astype(np.float32), atol=atol, rtol=rtol)
    else:
        for b, n in enumerate(lengths):
            np.testing.assert_allclose(got[0][b, :n].astype(np.float32), ref[0][b, :n].astype(np.float32),
                                       atol=atol, rtol=rtol)
    for r, o in zip(ref[1:], got[1:]):
        assert o.shape == r.shape and o.dtype == r.dtype
        for b, n in enumerate(lengths):
            np.testing.assert_allclose(o[b, :, :n].astype(np.float32), r[b, :, :n].astype(np.float32),
                                       atol=atol, rtol=rtol)
