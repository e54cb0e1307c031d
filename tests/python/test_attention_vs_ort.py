"""Attention (opset 23/24), RMSNormalization and RotaryEmbedding (opset 23): one-node
models built with onnx.helper, run by onnxmini and by onnxruntime, compared.

Attention cases cover the options onnxruntime's CPU kernel implements: 3-D / 4-D,
MHA / GQA, is_causal, bool and float masks (2-D, 3-D, 4-D), past / present key-value
cache, scale, softcap, qk_matmul_output modes, float16.

Tolerance: both compute softmax(Q K^T * scale + bias) V in float32 with different
summation orders: a score of D products of |q|, |k| <= 1 differs by at most
D^2 * 2^-23 * scale, a probability by twice that relatively, and the output (|v| <= 1)
by atol = 2 * D^2 * 2^-23 * scale + Ltot * 2^-23 (plus one float16 rounding, 2 * 2^-11,
when stored as float16).
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

import onnxmini

NP_TO_TP = {np.float32: TP.FLOAT, np.float16: TP.FLOAT16, np.bool_: TP.BOOL, np.int64: TP.INT64}


def _model(op, opset, feeds, outputs, attrs):
    inputs = [oh.make_tensor_value_info(n, NP_TO_TP[a.dtype.type], a.shape) if a is not None else None
              for n, a in feeds]
    node = oh.make_node(op, [n if a is not None else "" for n, a in feeds], [o for o, _ in outputs], **attrs)
    outs = [oh.make_tensor_value_info(o, t, None) for o, t in outputs if o]
    g = oh.make_graph([node], "g", [i for i in inputs if i is not None], outs)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = 10
    return m.SerializeToString()


def _run_both(model, feeds):
    feed = {n: a for n, a in feeds if a is not None}
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, feed)
    mini = onnxmini.InferenceSession(model).run(None, feed)
    return mini, ref


# (name, dict of options)
ATTENTION_CASES = [
    ("4d", {}),
    ("3d", {"rank3": True}),
    ("4d_gqa", {"hq": 8, "hkv": 2}),
    ("3d_gqa", {"rank3": True, "hq": 6, "hkv": 3}),
    ("4d_causal", {"causal": True, "lq": 40, "lkv": 40}),
    ("4d_long_causal_gqa", {"causal": True, "lq": 70, "lkv": 70, "hq": 4, "hkv": 1, "d": 64}),
    ("4d_scale", {"scale": 0.3}),
    ("4d_softcap", {"softcap": 3.0}),
    ("4d_float_mask_2d", {"mask": "float2d"}),
    ("4d_float_mask_4d", {"mask": "float4d"}),
    ("4d_bool_mask_2d", {"mask": "bool2d"}),
    ("4d_bool_mask_3d", {"mask": "bool3d"}),
    ("4d_past_present", {"past": 9}),
    ("4d_past_present_causal_gqa", {"past": 9, "causal": True, "hq": 4, "hkv": 2, "lq": 3, "lkv": 3}),
    ("3d_past_present_causal", {"past": 33, "causal": True, "rank3": True, "lq": 1, "lkv": 1}),
    ("4d_past_mask", {"past": 5, "mask": "float2d"}),
    ("4d_qk_mode0", {"qk": 0}),
    ("4d_qk_mode1_softcap", {"qk": 1, "softcap": 2.0}),
    ("4d_qk_mode2_mask", {"qk": 2, "mask": "float2d"}),
    ("4d_qk_mode3_causal", {"qk": 3, "causal": True}),
    ("4d_fp16", {"dtype": np.float16}),
    ("4d_fp16_causal_gqa_past", {"dtype": np.float16, "causal": True, "hq": 4, "hkv": 2, "past": 6}),
    ("4d_diff_head_sizes", {"d": 16, "dv": 24}),
]


def _attention_case(opts, seed=0):
    rng = np.random.default_rng(seed)
    dt = opts.get("dtype", np.float32)
    b, hq, hkv = opts.get("b", 2), opts.get("hq", 3), opts.get("hkv", opts.get("hq", 3))
    lq, lkv, past = opts.get("lq", 5), opts.get("lkv", 7), opts.get("past", 0)
    d, dv, rank3 = opts.get("d", 8), opts.get("dv", opts.get("d", 8)), opts.get("rank3", False)
    total = past + lkv

    def t(heads, length, hs):
        shape = (b, length, heads * hs) if rank3 else (b, heads, length, hs)
        return rng.uniform(-1, 1, shape).astype(dt)

    feeds = [("Q", t(hq, lq, d)), ("K", t(hkv, lkv, d)), ("V", t(hkv, lkv, dv))]
    mask = opts.get("mask")
    m = None
    if mask == "float2d":
        m = rng.uniform(-2, 2, (lq, total)).astype(dt)
    elif mask == "float4d":
        m = rng.uniform(-2, 2, (b, 1, lq, total)).astype(dt)
    elif mask == "bool2d":
        m = rng.uniform(0, 1, (lq, total)) > 0.3
        m[:, 0] = True  # no fully masked row (onnxruntime's handling of those predates the spec's errata)
    elif mask == "bool3d":
        m = rng.uniform(0, 1, (hq, lq, total)) > 0.3
        m[..., 0] = True
    feeds.append(("attn_mask", m))
    if past:
        feeds.append(("past_key", rng.uniform(-1, 1, (b, hkv, past, d)).astype(dt)))
        feeds.append(("past_value", rng.uniform(-1, 1, (b, hkv, past, dv)).astype(dt)))
    attrs = {}
    if rank3:
        attrs.update(q_num_heads=hq, kv_num_heads=hkv)
    for key, attr in (("causal", "is_causal"), ("scale", "scale"), ("softcap", "softcap")):
        if key in opts:
            attrs[attr] = int(opts[key]) if key == "causal" else float(opts[key])
    tp = NP_TO_TP[dt]
    outputs = [("Y", tp), ("present_key" if past else "", tp), ("present_value" if past else "", tp)]
    if "qk" in opts:
        attrs["qk_matmul_output_mode"] = opts["qk"]
        outputs.append(("qk_matmul_output", tp))
    while outputs and not outputs[-1][0]:
        outputs.pop()
    scale = opts.get("scale", 1 / np.sqrt(d))
    atol = 2 * d * d * 2.0 ** -23 * scale + total * 2.0 ** -23
    if dt == np.float16:
        atol += 2 * 2.0 ** -11
    return _model("Attention", 23, feeds, outputs, attrs), feeds, atol, opts


@pytest.mark.parametrize("name,opts", ATTENTION_CASES, ids=[c[0] for c in ATTENTION_CASES])
def test_attention_matches_onnxruntime(name, opts):
    model, feeds, atol, opts = _attention_case(opts)
    mini, ref = _run_both(model, feeds)
    assert len(mini) == len(ref)
    for k, (a, e) in enumerate(zip(mini, ref)):
        tol = atol * (opts.get("d", 8) if k == 3 and opts.get("qk", 3) != 3 else 1)  # raw scores: D terms
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), atol=tol, rtol=0, err_msg=f"output {k}")


@pytest.mark.parametrize("dt", [np.float32, np.float16])
@pytest.mark.parametrize("shape,axis", [((2, 5, 64), -1), ((3, 4, 6), 1), ((2, 3, 4, 8), -2)])
def test_rms_normalization_matches_onnxruntime(dt, shape, axis):
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, shape).astype(dt)
    s = rng.uniform(-1, 1, shape[axis:]).astype(dt)
    model = _model("RMSNormalization", 23, [("X", x), ("scale", s)], [("Y", NP_TO_TP[dt])], {"axis": axis})
    mini, ref = _run_both(model, [("X", x), ("scale", s)])
    cols = int(np.prod(shape[axis:]))
    # float32: sum of squares (cols * 2^-23) and three roundings; float16 adds 2 output roundings.
    rtol = (cols / 2 + 3) * 2.0 ** -23 + (2 * 2.0 ** -11 if dt == np.float16 else 0)
    np.testing.assert_allclose(mini[0].astype(np.float64), ref[0].astype(np.float64), rtol=rtol, atol=1e-30)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rank3", [False, True])
@pytest.mark.parametrize("positions", [False, True])
@pytest.mark.parametrize("rotary_dim", [0, 8])
def test_rotary_embedding_matches_onnxruntime(interleaved, rank3, positions, rotary_dim):
    rng = np.random.default_rng(2)
    b, s, h, d, max_pos = 2, 5, 3, 16, 12
    half = (rotary_dim or d) // 2
    x = rng.uniform(-1, 1, (b, s, h * d) if rank3 else (b, h, s, d)).astype(np.float32)
    cache_shape = (max_pos, half) if positions else (b, s, half)
    angles = rng.uniform(0, 6.3, cache_shape)
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    feeds = [("X", x), ("cos_cache", cos), ("sin_cache", sin)]
    if positions:
        feeds.append(("position_ids", rng.integers(0, max_pos, (b, s)).astype(np.int64)))
    attrs = {"interleaved": interleaved}
    if rotary_dim:
        attrs["rotary_embedding_dim"] = rotary_dim
    if rank3:
        attrs["num_heads"] = h
    model = _model("RotaryEmbedding", 23, feeds, [("Y", TP.FLOAT)], attrs)
    mini, ref = _run_both(model, feeds)
    # Two products and a sum of values <= 1 in float32 on both sides.
    np.testing.assert_allclose(mini[0], ref[0], atol=6 * 2.0 ** -23 * 2, rtol=0)
