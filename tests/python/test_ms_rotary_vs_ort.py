"""com.microsoft RotaryEmbedding (onnxruntime's contrib op) against onnxruntime: 3-D input with
and without num_heads, 4-D input, interleaved pairs, a partial rotary_embedding_dim,
position_ids as [B, S] or as one start position [1], float16.

Tolerance: each output is x1*c - x2*s (two products and a difference of values <= 1 in
magnitude) in float32 on both sides: atol = 4 * 2^-23; float16 outputs: one rounding,
2^-11 relative, plus that.
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

import onnxmini

CASES = [  # shape, num_heads, rotary_dim, interleaved, start_only, dtype
    ((2, 5, 32), 4, 0, 0, False, np.float32),
    ((2, 5, 32), 0, 0, 1, True, np.float32),
    ((1, 3, 6, 16), 0, 0, 0, False, np.float32),
    ((2, 4, 48), 3, 8, 0, False, np.float32),
    ((1, 7, 64), 4, 0, 1, True, np.float16),
]


@pytest.mark.parametrize("shape,num_heads,rotary_dim,interleaved,start_only,dtype", CASES)
def test_ms_rotary_embedding_matches_onnxruntime(shape, num_heads, rotary_dim, interleaved, start_only, dtype):
    rng = np.random.default_rng(len(shape) * 100 + num_heads + rotary_dim)
    x = rng.uniform(-1, 1, shape).astype(dtype)
    B = shape[0]
    S = shape[2] if len(shape) == 4 else shape[1]
    head = shape[3] if len(shape) == 4 else (shape[2] // num_heads if num_heads else 16)
    rd = rotary_dim or head
    max_pos = 16
    angles = rng.uniform(0, 6.3, (max_pos, rd // 2))
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    pos = np.array([3], np.int64) if start_only else rng.integers(0, max_pos, (B, S)).astype(np.int64)
    tp = TP.FLOAT if dtype == np.float32 else TP.FLOAT16
    attrs = {"interleaved": interleaved}
    if num_heads:
        attrs["num_heads"] = num_heads
    if rotary_dim:
        attrs["rotary_embedding_dim"] = rotary_dim
    node = oh.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain="com.microsoft", **attrs)
    g = oh.make_graph([node], "g", [oh.make_tensor_value_info("x", tp, shape),
                                    oh.make_tensor_value_info("pos", TP.INT64, pos.shape),
                                    oh.make_tensor_value_info("cos", tp, cos.shape),
                                    oh.make_tensor_value_info("sin", tp, sin.shape)],
                      [oh.make_tensor_value_info("y", tp, None)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 21), oh.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    model = m.SerializeToString()
    feeds = {"x": x, "pos": pos, "cos": cos, "sin": sin}
    ref = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = onnxmini.InferenceSession(model).run(None, feeds)[0]
    assert got.dtype == ref.dtype and got.shape == ref.shape
    rtol = 2.0 ** -11 if dtype == np.float16 else 0
    np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), atol=4 * 2.0 ** -23 + rtol, rtol=rtol)


def test_ms_rotary_embedding_refuses_positions_past_the_cache():
    node = oh.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain="com.microsoft", num_heads=2)
    g = oh.make_graph([node], "g", [oh.make_tensor_value_info("x", TP.FLOAT, [1, 4, 8]),
                                    oh.make_tensor_value_info("pos", TP.INT64, [1]),
                                    oh.make_tensor_value_info("cos", TP.FLOAT, [6, 2]),
                                    oh.make_tensor_value_info("sin", TP.FLOAT, [6, 2])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, None)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 21), oh.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    feeds = {"x": np.zeros((1, 4, 8), np.float32), "pos": np.array([3], np.int64),
             "cos": np.ones((6, 2), np.float32), "sin": np.zeros((6, 2), np.float32)}
    with pytest.raises(Exception, match=r"RotaryEmbedding .*position_ids = 3: positions 3\.\.6 are outside the caches' \[0, 6\)"):
        onnxmini.InferenceSession(m.SerializeToString()).run(None, feeds)
