"""The integer matmul / conv ops against onnxruntime on random inputs: MatMulInteger,
ConvInteger (int32 outputs), QLinearMatMul, QLinearConv (requantized uint8 / int8) and
com.microsoft MatMulIntegerToFloat, DynamicQuantizeMatMul (float outputs).

Expected agreement. int32 outputs are exact sums: equal. Requantized outputs: both form the
multiplier a_scale * b_scale / y_scale in float32, multiply the float32 of the int32 sum and
round half to even, so they agree exactly; we still allow a difference of 1 in at most a
handful of elements, since onnxruntime's requantization may fold the scales in another
order on some paths (a 1-ulp change of the multiplier can move a value sitting within an
ulp of a .5 boundary). Float outputs: float(int32 sum) * scale + bias in float32 on both
sides, so equal up to the order of the scale product: rtol 1e-6. DynamicQuantizeMatMul
also quantizes A the same way as onnxruntime (range including 0, scale = range / 255,
zero point rounded half to even, x / scale rounded half to even).
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

import onnxmini

NP_TO_TP = {np.float32: TP.FLOAT, np.uint8: TP.UINT8, np.int8: TP.INT8, np.int32: TP.INT32}
MS = "com.microsoft"


def _model(op, feeds, out_type, attrs=None, constants=(), domain="", opset=21):
    """One-node model; feeds is a list of (name, array or None); names in `constants` become initializers."""
    inputs, inits = [], []
    for n, a in feeds:
        if a is None:
            continue
        if n in constants:
            inits.append(nh.from_array(a, n))
        else:
            inputs.append(oh.make_tensor_value_info(n, NP_TO_TP[a.dtype.type], a.shape))
    node = oh.make_node(op, [n if a is not None else "" for n, a in feeds], ["y"], domain=domain, **(attrs or {}))
    g = oh.make_graph([node], "g", inputs, [oh.make_tensor_value_info("y", out_type, None)], inits)
    imports = [oh.make_opsetid("", opset)] + ([oh.make_opsetid(MS, 1)] if domain == MS else [])
    m = oh.make_model(g, opset_imports=imports)
    m.ir_version = 10
    return m.SerializeToString()


def _run_both(model, feeds, constants=(), threads=2):
    feed = {n: a for n, a in feeds if a is not None and n not in constants}
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, feed)[0]
    mini = onnxmini.InferenceSession(model).run(None, feed)[0]
    return mini, ref


def _q(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def _assert_quantized_close(mini, ref):
    assert mini.dtype == ref.dtype and mini.shape == ref.shape
    diff = np.abs(mini.astype(np.int32) - ref.astype(np.int32))
    assert diff.max(initial=0) <= 1, f"max difference {diff.max()}"
    assert (diff > 0).sum() <= max(2, diff.size // 1000), f"{(diff > 0).sum()} of {diff.size} differ by 1"


TYPES = [np.uint8, np.int8]


@pytest.mark.parametrize("ta", TYPES)
@pytest.mark.parametrize("tb", TYPES)
@pytest.mark.parametrize("shapes", [((3, 17), (17, 65)), ((2, 33, 40), (40, 9)), ((65,), (65, 3)), ((1, 257), (257, 1))])
@pytest.mark.parametrize("b_const", [False, True])
def test_matmul_integer(ta, tb, shapes, b_const):
    if ta == np.int8 and tb == np.uint8:
        pytest.skip("onnxruntime's CPU MatMulInteger has no int8 x uint8 kernel")
    rng = np.random.default_rng(hash((ta, tb, shapes, b_const)) % 2**32)
    sa, sb = shapes
    feeds = [("a", _q(rng, ta, sa)), ("b", _q(rng, tb, sb)), ("az", _q(rng, ta, ())), ("bz", _q(rng, tb, ()))]
    consts = ("b", "bz") if b_const else ()
    mini, ref = _run_both(_model("MatMulInteger", feeds, TP.INT32, constants=consts), feeds, consts)
    np.testing.assert_array_equal(mini, ref)


@pytest.mark.parametrize("ta", TYPES)
@pytest.mark.parametrize("tb", TYPES)
@pytest.mark.parametrize("per_column", [False, True])
def test_qlinear_matmul(ta, tb, per_column):
    if ta != tb and ta == np.int8:
        pytest.skip("onnxruntime's CPU QLinearMatMul has no int8 x uint8 kernel")
    rng = np.random.default_rng(7 + per_column)
    M, K, N = 37, 130, 70
    bs = rng.uniform(0.001, 0.01, size=(N,) if per_column else ()).astype(np.float32)
    bz = _q(rng, tb, (N,) if per_column else ()) if tb == np.uint8 or not per_column else np.zeros(N, np.int8)
    feeds = [("a", _q(rng, ta, (2, M, K))), ("as", np.float32(0.02)), ("az", _q(rng, ta, ())),
             ("b", _q(rng, tb, (K, N))), ("bs", bs), ("bz", bz), ("ys", np.float32(0.7)), ("yz", _q(rng, ta, ()))]
    feeds = [(n, np.asarray(a)) for n, a in feeds]
    consts = ("b", "bs", "bz")
    mini, ref = _run_both(_model("QLinearMatMul", feeds, NP_TO_TP[ta], constants=consts), feeds, consts)
    _assert_quantized_close(mini, ref)


@pytest.mark.parametrize("ta", TYPES)
@pytest.mark.parametrize("tb", TYPES)
@pytest.mark.parametrize("bias", [False, True])
def test_matmul_integer_to_float(ta, tb, bias):
    if ta == np.int8 and tb == np.uint8:
        pytest.skip("onnxruntime has no int8 x uint8 MatMulIntegerToFloat")
    rng = np.random.default_rng(11)
    M, K, N = 21, 64, 33
    feeds = [("a", _q(rng, ta, (M, K))), ("b", _q(rng, tb, (K, N))), ("as", np.asarray(np.float32(0.03))),
             ("bs", rng.uniform(0.01, 0.05, size=(N,)).astype(np.float32)), ("az", _q(rng, ta, ())),
             ("bz", _q(rng, tb, (N,))), ("bias", rng.uniform(-1, 1, size=(N,)).astype(np.float32) if bias else None)]
    consts = ("b", "bs", "bz", "bias")
    model = _model("MatMulIntegerToFloat", feeds, TP.FLOAT, constants=consts, domain=MS)
    mini, ref = _run_both(model, feeds, consts)
    np.testing.assert_allclose(mini, ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("tb", TYPES)
def test_dynamic_quantize_matmul(tb):
    rng = np.random.default_rng(13)
    M, K, N = 17, 96, 40
    feeds = [("a", rng.uniform(-3, 2, size=(2, M, K)).astype(np.float32)), ("b", _q(rng, tb, (K, N))),
             ("bs", rng.uniform(0.01, 0.05, size=(N,)).astype(np.float32)), ("bz", _q(rng, tb, (N,))),
             ("bias", rng.uniform(-1, 1, size=(N,)).astype(np.float32))]
    consts = ("b", "bs", "bz", "bias")
    model = _model("DynamicQuantizeMatMul", feeds, TP.FLOAT, constants=consts, domain=MS)
    mini, ref = _run_both(model, feeds, consts)
    np.testing.assert_allclose(mini, ref, rtol=1e-5, atol=1e-5)


CONV_CASES = [
    dict(x=(1, 3, 10, 9), w=(8, 3, 3, 3), group=1, pads=[1, 1, 1, 1], strides=[1, 1]),
    dict(x=(2, 6, 8, 8), w=(6, 1, 3, 3), group=6, pads=[1, 1, 1, 1], strides=[2, 2]),
    dict(x=(1, 16, 6, 6), w=(32, 8, 1, 1), group=2, pads=[0, 0, 0, 0], strides=[1, 1]),
    dict(x=(1, 4, 12, 12), w=(65, 4, 5, 5), group=1, pads=[2, 0, 1, 2], strides=[3, 2], dilations=[1, 2]),
]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
@pytest.mark.parametrize("tx,tw", [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_conv(case, tx, tw, per_channel):
    c = CONV_CASES[case]
    rng = np.random.default_rng(case * 10 + per_channel)
    M = c["w"][0]
    ws = rng.uniform(0.001, 0.01, size=(M,) if per_channel else ()).astype(np.float32)
    # onnxruntime requires symmetric (zero) int8 weight zero points; uint8 weights may have any.
    wz = _q(rng, tw, (M,) if per_channel else ()) if tw == np.uint8 else np.zeros((M,) if per_channel else (), np.int8)
    feeds = [("x", _q(rng, tx, c["x"])), ("xs", np.asarray(np.float32(0.03))), ("xz", _q(rng, tx, ())),
             ("w", _q(rng, tw, c["w"])), ("ws", ws), ("wz", np.asarray(wz)), ("ys", np.asarray(np.float32(0.4))),
             ("yz", _q(rng, tx, ())), ("B", rng.integers(-3000, 3000, size=(M,)).astype(np.int32))]
    attrs = {k: v for k, v in c.items() if k not in ("x", "w")}
    consts = ("w", "ws", "wz", "B")
    mini, ref = _run_both(_model("QLinearConv", feeds, NP_TO_TP[tx], attrs, consts), feeds, consts)
    _assert_quantized_close(mini, ref)


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
@pytest.mark.parametrize("tx,tw", [(np.uint8, np.uint8), (np.uint8, np.int8)])
def test_conv_integer(case, tx, tw):
    c = CONV_CASES[case]
    rng = np.random.default_rng(100 + case)
    feeds = [("x", _q(rng, tx, c["x"])), ("w", _q(rng, tw, c["w"])), ("xz", _q(rng, tx, ())), ("wz", _q(rng, tw, ()))]
    attrs = {k: v for k, v in c.items() if k not in ("x", "w")}
    mini, ref = _run_both(_model("ConvInteger", feeds, TP.INT32, attrs, ("w",)), feeds, ("w",))
    np.testing.assert_array_equal(mini, ref)


def _qdq_model(conv, per_channel, rng):
    """x_q -> DequantizeLinear -> Conv / MatMul (weights and bias through DequantizeLinear) -> QuantizeLinear."""
    xs, xz, ys, yz = np.float32(0.02), np.uint8(120), np.float32(0.3), np.uint8(100)
    if conv:
        x = _q(rng, np.uint8, (1, 8, 12, 12))
        w = _q(rng, np.int8, (16, 8, 3, 3))
    else:
        x = _q(rng, np.uint8, (9, 40))
        w = _q(rng, np.int8, (40, 24))
    M = w.shape[0] if conv else w.shape[1]
    ws = (rng.uniform(0.002, 0.01, M) if per_channel else np.array(0.005)).astype(np.float32)
    wz = np.zeros(ws.shape, np.int8)
    inits = [nh.from_array(np.array(v), n) for n, v in [("xs", xs), ("xz", xz), ("ys", ys), ("yz", yz)]]
    inits += [nh.from_array(w, "w"), nh.from_array(ws, "ws"), nh.from_array(wz, "wz")]
    axis = {"axis": 0 if conv else 1} if per_channel else {}
    nodes = [oh.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             oh.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], **axis)]
    ins = ["xf", "wf"]
    if conv:
        b = rng.integers(-2000, 2000, M).astype(np.int32)
        bs = (xs * ws * np.ones(M, np.float32)).astype(np.float32)
        inits += [nh.from_array(b, "b"), nh.from_array(bs, "bs"), nh.from_array(np.zeros(M, np.int32), "bz")]
        nodes.append(oh.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], axis=0))
        ins.append("bf")
    nodes.append(oh.make_node("Conv", ins, ["yf"], pads=[1, 1, 1, 1]) if conv else oh.make_node("MatMul", ins, ["yf"]))
    nodes.append(oh.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"]))
    g = oh.make_graph(nodes, "qdq", [oh.make_tensor_value_info("x", TP.UINT8, x.shape)],
                      [oh.make_tensor_value_info("y", TP.UINT8, None)], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString(), x


@pytest.mark.parametrize("conv", [True, False])
@pytest.mark.parametrize("per_channel", [False, True])
def test_qdq_unit_runs_as_integer_op(conv, per_channel):
    """The QDQ rule (runtime/graph_fusion_qdq.cc) turns the unit into QLinearConv / QLinearMatMul:
    the result must agree with onnxruntime (which fuses the same unit) within 1, in few elements.
    On a branch without the DequantizeLinear / QuantizeLinear kernels this still runs: the
    rule removes every DequantizeLinear / QuantizeLinear of the unit."""
    rng = np.random.default_rng(int(conv) * 2 + int(per_channel))
    model, x = _qdq_model(conv, per_channel, rng)
    mini, ref = _run_both(model, [("x", x)])
    _assert_quantized_close(mini, ref)


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("out", ["u8", "float"])
@pytest.mark.parametrize("c_shape", [None, (), (24,), (13, 24)])
def test_qgemm(trans_a, trans_b, out, c_shape):
    rng = np.random.default_rng(trans_a * 8 + trans_b * 4 + (out == "u8") * 2 + (0 if c_shape is None else len(c_shape) + 1))
    M, K, N = 13, 50, 24
    a = _q(rng, np.uint8, (K, M) if trans_a else (M, K))
    b = _q(rng, np.int8, (N, K) if trans_b else (K, N))
    feeds = [("a", a), ("as", np.asarray(np.float32(0.02))), ("az", _q(rng, np.uint8, ())), ("b", b),
             ("bs", rng.uniform(0.005, 0.02, N).astype(np.float32)), ("bz", np.zeros(N, np.int8)),
             ("c", None if c_shape is None else rng.integers(-3000, 3000, c_shape).astype(np.int32)),
             ("ys", np.asarray(np.float32(0.5)) if out == "u8" else None),
             ("yz", _q(rng, np.uint8, ()) if out == "u8" else None)]
    consts = ("b", "bs", "bz", "c")
    model = _model("QGemm", feeds, TP.UINT8 if out == "u8" else TP.FLOAT,
                   {"transA": trans_a, "transB": trans_b, "alpha": 0.75}, consts, domain=MS)
    mini, ref = _run_both(model, feeds, consts)
    if out == "u8":
        _assert_quantized_close(mini, ref)
    else:
        np.testing.assert_allclose(mini, ref, rtol=1e-6, atol=1e-5)
