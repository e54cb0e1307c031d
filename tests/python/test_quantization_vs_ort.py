"""Quantization ops against onnxruntime: one-node models built with onnx.helper, run by both on
the same seeded inputs.

Exactness: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConcat and
QLinearLeakyRelu compute the same float32 expressions as onnxruntime (a division by the scale,
round half to even; the product (x - zp) * scale) and must agree bit for bit.
The com.microsoft ops whose onnxruntime kernel reorders or fuses float operations may differ by
one quantization step (|diff| <= 1 in the integer domain) where the exact real value lies within
a few ulps of a rounding tie:
  - QLinearAdd / QLinearMul: MLAS evaluates a*(sa/sc) + b*(sb/sc) + const with FMA / a different
    association than the spec's dequantize-add-quantize;
  - QLinearSigmoid: MLAS fills its 256-entry table with its own logistic approximation
    (a few ulps from expf-based 1/(1+exp(-x)));
  - QLinearGlobalAveragePool / QLinearAveragePool: onnxruntime scales the integer sum by
    x_scale / (y_scale * count) in one float product;
  - QLinearSoftmax: onnxruntime uses exp tables in float and floor(1 / y_scale) as the output
    multiplier (exact for the quantizer's y_scale = 1/256, used here).
"""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper

import onnxmini

NP_TO_TP = {np.float32: TP.FLOAT, np.float16: TP.FLOAT16, np.uint8: TP.UINT8, np.int8: TP.INT8,
            np.uint16: TP.UINT16, np.int16: TP.INT16, np.int32: TP.INT32, np.int64: TP.INT64}
try:  # the narrow types as numpy sees them (onnx itself depends on ml_dtypes)
    import ml_dtypes

    NP_TO_TP.update({ml_dtypes.float8_e4m3fn: TP.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fnuz: TP.FLOAT8E4M3FNUZ,
                     ml_dtypes.float8_e5m2: TP.FLOAT8E5M2, ml_dtypes.float8_e5m2fnuz: TP.FLOAT8E5M2FNUZ,
                     ml_dtypes.int4: TP.INT4, ml_dtypes.uint4: TP.UINT4})
except ImportError:
    pass


def _model(op, opset, feeds, consts, n_out, attrs, domain="", ms_opset=1):
    """feeds: (name, array) graph inputs; consts: (name, array) initializers (array None = absent)."""
    names = [n for n, _ in feeds] + [n for n, _ in consts]
    order = attrs.pop("_order", None)
    if order is not None:
        names = order
    inputs = [oh.make_tensor_value_info(n, NP_TO_TP[a.dtype.type], a.shape) for n, a in feeds]
    inits = [numpy_helper.from_array(a, n) for n, a in consts if a is not None]
    node = oh.make_node(op, names, [f"y{i}" for i in range(n_out)], domain=domain, **attrs)
    outs = [onnx.ValueInfoProto(name=f"y{i}") for i in range(n_out)]
    g = oh.make_graph([node], "g", inputs, outs, inits)
    opsets = [oh.make_opsetid("", opset)]
    if domain:
        opsets.append(oh.make_opsetid(domain, ms_opset))
    m = oh.make_model(g, opset_imports=opsets)
    m.ir_version = 9
    return m.SerializeToString()


def _run_both(model, feeds):
    feed = dict(feeds)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, feed)
    mini = onnxmini.InferenceSession(model).run(None, feed)
    return mini, ref


def _assert_equal(mini, ref, max_step=0):
    assert len(mini) == len(ref)
    for m, r in zip(mini, ref):
        m, r = np.asarray(m), np.asarray(r)
        assert m.dtype == r.dtype and m.shape == r.shape, (m.dtype, r.dtype, m.shape, r.shape)
        if max_step == 0:
            np.testing.assert_array_equal(m, r)
        else:
            diff = np.abs(m.astype(np.int64) - r.astype(np.int64))
            assert diff.max(initial=0) <= max_step, f"max diff {diff.max()} at {np.argmax(diff)}"


def _x(shape, seed=0, lo=-4.0, hi=4.0):
    x = np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)
    flat = x.reshape(-1)
    if flat.size >= 8:  # exact ties of x / scale, where half-to-even rounding matters
        flat[:4] = np.array([0.05, -0.05, 0.15, 0.25], np.float32) * 2
    return x


QTYPES = [np.uint8, np.int8, np.uint16, np.int16]


def _zp(qt, shape, seed=1):
    info = np.iinfo(qt)
    rng = np.random.default_rng(seed)
    span = min(50, (int(info.max) - int(info.min)) // 4)
    mid = (int(info.max) + int(info.min)) // 2
    return rng.integers(mid - span, mid + span, size=shape).astype(qt)


@pytest.mark.parametrize("qt", QTYPES)
@pytest.mark.parametrize("n", [7, 100, 1000])
def test_quantize_per_tensor(qt, n):
    x = _x((n,))
    x[-1] = 1e6  # saturation
    x[-2] = -1e6
    scale = np.array(0.1, np.float32)
    zp = _zp(qt, ())
    opset = 21 if qt in (np.uint16, np.int16) else 13
    _assert_equal(*_run_both(_model("QuantizeLinear", opset, [("x", x)], [("s", scale), ("z", zp)], 1, {}),
                             [("x", x)]))


@pytest.mark.parametrize("qt", [np.uint8, np.int8])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_quantize_per_axis(qt, axis):
    x = _x((3, 40, 5), seed=2)
    d = x.shape[axis]
    scale = np.random.default_rng(3).uniform(0.01, 0.1, size=(d,)).astype(np.float32)
    zp = _zp(qt, (d,))
    _assert_equal(*_run_both(_model("QuantizeLinear", 13, [("x", x)], [("s", scale), ("z", zp)], 1,
                                    {"axis": axis}), [("x", x)]))


@pytest.mark.parametrize("qt", [np.uint8, np.int8, np.int16])
def test_quantize_blocked(qt):
    x = _x((4, 10, 3), seed=4)
    scale = np.random.default_rng(5).uniform(0.01, 0.1, size=(4, 3, 3)).astype(np.float32)
    zp = _zp(qt, (4, 3, 3))
    _assert_equal(*_run_both(_model("QuantizeLinear", 21, [("x", x)], [("s", scale), ("z", zp)], 1,
                                    {"axis": 1, "block_size": 4}), [("x", x)]))


def test_quantize_default_uint8_and_output_dtype():
    x = _x((50,), seed=6)
    scale = np.array(0.05, np.float32)
    _assert_equal(*_run_both(_model("QuantizeLinear", 13, [("x", x)], [("s", scale)], 1, {}), [("x", x)]))
    _assert_equal(*_run_both(_model("QuantizeLinear", 21, [("x", x)], [("s", scale)], 1,
                                    {"output_dtype": TP.INT8}), [("x", x)]))


def test_quantize_float16():
    x = _x((64,), seed=7).astype(np.float16)
    scale = np.array(0.03, np.float16)
    zp = np.array(3, np.int8)
    _assert_equal(*_run_both(_model("QuantizeLinear", 19, [("x", x)], [("s", scale), ("z", zp)], 1, {}),
                             [("x", x)]))


@pytest.mark.parametrize("qt", QTYPES + [np.int32])
def test_dequantize_per_tensor(qt):
    info = np.iinfo(qt)
    lo, hi = max(int(info.min), -100000), min(int(info.max), 100000)
    x = np.random.default_rng(8).integers(lo, hi, size=(300,)).astype(qt)
    scale = np.array(0.0371, np.float32)
    zp = np.array(0, qt) if qt == np.int32 else _zp(qt, ())
    opset = 21 if qt in (np.uint16, np.int16) else 13
    _assert_equal(*_run_both(_model("DequantizeLinear", opset, [("x", x)], [("s", scale), ("z", zp)], 1, {}),
                             [("x", x)]))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_dequantize_per_axis_and_blocked(axis):
    x = np.random.default_rng(9).integers(-128, 127, size=(3, 8, 4)).astype(np.int8)
    d = x.shape[axis]
    scale = np.random.default_rng(10).uniform(0.01, 0.1, size=(d,)).astype(np.float32)
    zp = _zp(np.int8, (d,))
    _assert_equal(*_run_both(_model("DequantizeLinear", 13, [("x", x)], [("s", scale), ("z", zp)], 1,
                                    {"axis": axis}), [("x", x)]))
    bshape = list(x.shape)
    bshape[axis] = (bshape[axis] + 1) // 2
    scale = np.random.default_rng(11).uniform(0.01, 0.1, size=bshape).astype(np.float32)
    zp = _zp(np.int8, bshape)
    _assert_equal(*_run_both(_model("DequantizeLinear", 21, [("x", x)], [("s", scale), ("z", zp)], 1,
                                    {"axis": axis, "block_size": 2}), [("x", x)]))


def test_dequantize_float16_scale():
    x = np.random.default_rng(12).integers(0, 255, size=(40,)).astype(np.uint8)
    scale = np.array(0.02, np.float16)
    zp = np.array(128, np.uint8)
    _assert_equal(*_run_both(_model("DequantizeLinear", 19, [("x", x)], [("s", scale), ("z", zp)], 1, {}),
                             [("x", x)]))


@pytest.mark.parametrize("shape,lo,hi", [((1000,), -3, 5), ((7, 9), 0.5, 2), ((64,), -2, -1), ((10,), 0, 0)])
def test_dynamic_quantize_linear(shape, lo, hi):
    x = np.random.default_rng(13).uniform(lo, hi, size=shape).astype(np.float32)
    _assert_equal(*_run_both(_model("DynamicQuantizeLinear", 11, [("x", x)], [], 3, {}), [("x", x)]))


@pytest.mark.parametrize("op", ["QuantizeLinear", "DequantizeLinear"])
def test_com_microsoft_quantize_dequantize(op):
    if op == "QuantizeLinear":
        x = _x((4, 30), seed=14)
        scale = np.random.default_rng(15).uniform(0.01, 0.1, size=(30,)).astype(np.float32)
        zp = _zp(np.uint16, (30,))
    else:
        x = np.random.default_rng(16).integers(0, 65535, size=(4, 30)).astype(np.uint16)
        scale = np.random.default_rng(17).uniform(0.01, 0.1, size=(30,)).astype(np.float32)
        zp = _zp(np.uint16, (30,))
    model = _model(op, 13, [("x", x)], [("s", scale), ("z", zp)], 1, {"axis": 1}, domain="com.microsoft")
    _assert_equal(*_run_both(model, [("x", x)]))


# --- com.microsoft QLinear* element-wise ops (QOperator format) -----------------------------------

MS = "com.microsoft"


def _q8(qt, shape, seed):
    info = np.iinfo(qt)
    return np.random.default_rng(seed).integers(int(info.min), int(info.max) + 1, size=shape).astype(qt)


def _params(qt, seed):
    rng = np.random.default_rng(seed)
    zp = np.array(rng.integers(100, 150) if qt == np.uint8 else rng.integers(-20, 20), qt)
    return np.array(rng.uniform(0.01, 0.08), np.float32), zp


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("qt", [np.uint8, np.int8])
@pytest.mark.parametrize("shapes", [((2, 3, 40), (2, 3, 40)), ((2, 3, 40), (40,)), ((4, 1, 5), (1, 6, 1)), ((), (7,))])
def test_qlinear_binary(op, qt, shapes):
    a, b = _q8(qt, shapes[0], 20), _q8(qt, shapes[1], 21)
    (sa, za), (sb, zb), (sc, zc) = _params(qt, 22), _params(qt, 23), _params(qt, 24)
    if op == "QLinearMul":
        sc = np.array(sa * sb * 40, np.float32)
    names = ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"]
    consts = [("sa", sa), ("za", za), ("sb", sb), ("zb", zb), ("sc", sc), ("zc", zc)]
    model = _model(op, 13, [("a", a), ("b", b)], consts, 1, {"_order": names}, domain=MS)
    _assert_equal(*_run_both(model, [("a", a), ("b", b)]), max_step=1)


@pytest.mark.parametrize("op,attrs,max_step", [("QLinearSigmoid", {}, 1), ("QLinearLeakyRelu", {"alpha": 0.1}, 0)])
@pytest.mark.parametrize("qt", [np.uint8, np.int8])
def test_qlinear_lookup(op, attrs, max_step, qt):
    x = _q8(qt, (3, 50), 30)
    (sx, zx), (sy, zy) = _params(qt, 31), _params(qt, 32)
    if op == "QLinearSigmoid":
        sy = np.array(1 / 256, np.float32)
        zy = np.array(0 if qt == np.uint8 else -128, qt)
    consts = [("sx", sx), ("zx", zx), ("sy", sy), ("zy", zy)]
    model = _model(op, 13, [("x", x)], consts, 1, dict(attrs), domain=MS)
    _assert_equal(*_run_both(model, [("x", x)]), max_step=max_step)


@pytest.mark.parametrize("qt", [np.uint8, np.int8])
@pytest.mark.parametrize("same", [False, True])
def test_qlinear_concat(qt, same):
    xs = [_q8(qt, (2, c, 3), 40 + c) for c in (1, 4, 2)]
    sy, zy = _params(qt, 41)
    names, consts, feeds = ["sy", "zy"], [("sy", sy), ("zy", zy)], []
    for i, x in enumerate(xs):
        s, z = (sy, zy) if same else _params(qt, 50 + i)
        names += [f"x{i}", f"s{i}", f"z{i}"]
        consts += [(f"s{i}", s), (f"z{i}", z)]
        feeds.append((f"x{i}", x))
    model = _model("QLinearConcat", 13, feeds, consts, 1, {"_order": names, "axis": 1}, domain=MS)
    _assert_equal(*_run_both(model, feeds))


@pytest.mark.parametrize("qt", [np.uint8, np.int8])
@pytest.mark.parametrize("channels_last", [0, 1])
def test_qlinear_global_average_pool(qt, channels_last):
    x = _q8(qt, (2, 5, 7, 6), 60)
    (sx, zx), (sy, zy) = _params(qt, 61), _params(qt, 62)
    consts = [("sx", sx), ("zx", zx), ("sy", sy), ("zy", zy)]
    model = _model("QLinearGlobalAveragePool", 13, [("x", x)], consts, 1, {"channels_last": channels_last},
                   domain=MS)
    _assert_equal(*_run_both(model, [("x", x)]), max_step=1)


@pytest.mark.parametrize("qt", [np.uint8, np.int8])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
    {"kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]},
    {"kernel_shape": [2, 2], "channels_last": 1},
])
def test_qlinear_average_pool(qt, attrs):
    x = _q8(qt, (2, 3, 7, 8), 70)
    (sx, zx), (sy, zy) = _params(qt, 71), _params(qt, 72)
    consts = [("sx", sx), ("zx", zx), ("sy", sy), ("zy", zy)]
    model = _model("QLinearAveragePool", 13, [("x", x)], consts, 1, dict(attrs), domain=MS)
    _assert_equal(*_run_both(model, [("x", x)]), max_step=1)


@pytest.mark.parametrize("qt", [np.uint8, np.int8])
@pytest.mark.parametrize("opset,axis", [(13, -1), (13, 1), (11, 1)])
def test_qlinear_softmax(qt, opset, axis):
    x = _q8(qt, (3, 10, 4), 80)
    sx, zx = _params(qt, 81)
    sy = np.array(1 / 256, np.float32)
    zy = np.array(0 if qt == np.uint8 else -128, qt)
    consts = [("sx", sx), ("zx", zx), ("sy", sy), ("zy", zy)]
    model = _model("QLinearSoftmax", 13, [("x", x)], consts, 1, {"axis": axis, "opset": opset}, domain=MS)
    _assert_equal(*_run_both(model, [("x", x)]), max_step=1)


# --- float8 / int4 ---------------------------------------------------------------------------------
# onnxruntime's Python returns float8e4m3fn as uint8 and refuses the other narrow types ("No
# corresponding Numpy type"), so the models below compare float outputs: the narrow value converted
# back to float32 (every code but the NaN codes has a distinct float value). onnxmini returns the
# narrow types as ml_dtypes arrays (test_narrow_outputs_are_ml_dtypes).

F8 = [TP.FLOAT8E4M3FN, TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2, TP.FLOAT8E5M2FNUZ]




def _special_floats(n=200, seed=90):
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32) * np.float32(60)
    x[:8] = [np.inf, -np.inf, 1e9, -1e9, 0.0, -0.0, 448.0, 464.0]
    return x


@pytest.mark.parametrize("to", F8 + [TP.INT4, TP.UINT4])
@pytest.mark.parametrize("saturate", [0, 1])
def test_cast_to_narrow_types_and_back(to, saturate):
    if to in (TP.INT4, TP.UINT4) and saturate == 0:
        pytest.skip("saturate concerns the float8 types only")
    x = _special_floats()
    if to in (TP.INT4, TP.UINT4):
        x = np.clip(np.round(x / 10), -20, 20).astype(np.float32)  # in and out of the 4-bit range
    nodes = [oh.make_node("Cast", ["x"], ["n"], to=to, saturate=saturate),
             oh.make_node("Cast", ["n"], ["y"], to=TP.FLOAT)]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", TP.FLOAT, x.shape)],
                      [oh.make_tensor_value_info("y", TP.FLOAT, x.shape)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 21)])
    m.ir_version = 10
    mini, ref = _run_both(m.SerializeToString(), [("x", x)])
    _assert_equal(mini, ref)


@pytest.mark.parametrize("qt", F8 + [TP.INT4, TP.UINT4])
def test_quantize_dequantize_narrow_types(qt):
    x = _special_floats(64)[8:]
    scale = np.array(0.5, np.float32)
    q = oh.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])
    d = oh.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])
    zp = oh.make_tensor("z", qt, [], [0 if qt not in (TP.INT4, TP.UINT4) else 1])
    g = oh.make_graph([q, d], "g", [oh.make_tensor_value_info("x", TP.FLOAT, x.shape)],
                      [oh.make_tensor_value_info("y", TP.FLOAT, x.shape)],
                      [numpy_helper.from_array(scale, "s"), zp])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 21)])
    m.ir_version = 10
    mini, ref = _run_both(m.SerializeToString(), [("x", x)])
    _assert_equal(mini, ref)


def test_int4_initializer_packed_two_per_byte():
    """A blocked int4 weight as quantizers write it: raw_data packs two values per byte."""
    w = np.random.default_rng(91).integers(-8, 8, size=(4, 7)).astype(np.int8)  # odd count: a half-filled byte
    scale = np.random.default_rng(92).uniform(0.01, 0.1, size=(4, 4)).astype(np.float32)
    wt = oh.make_tensor("w", TP.INT4, w.shape, w.flatten().tolist())
    d = oh.make_node("DequantizeLinear", ["w", "s"], ["y"], axis=1, block_size=2)
    g = oh.make_graph([d], "g", [], [oh.make_tensor_value_info("y", TP.FLOAT, w.shape)],
                      [wt, numpy_helper.from_array(scale, "s")])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 21)])
    m.ir_version = 10
    mini, ref = _run_both(m.SerializeToString(), [])
    np.testing.assert_array_equal(mini[0], ref[0])
    np.testing.assert_array_equal(mini[0], (w.astype(np.float32) * np.repeat(scale, 2, axis=1)[:, :7]))


def test_narrow_outputs_are_ml_dtypes():
    """Narrow outputs come back as ml_dtypes arrays with the bytes ml_dtypes itself computes
    (its astype rounds to nearest even and does not saturate, as Cast with saturate=0)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = _special_floats()
    for to, t in [(TP.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn), (TP.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
                  (TP.FLOAT8E5M2, ml_dtypes.float8_e5m2), (TP.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz)]:
        model = _model("Cast", 21, [("x", x)], [], 1, {"to": to, "saturate": 0})
        got = onnxmini.InferenceSession(model).run(None, {"x": x})[0]
        assert got.dtype == np.dtype(t)
        np.testing.assert_array_equal(got.view(np.uint8), x.astype(t).view(np.uint8))
        # ...and go back in as inputs unchanged.
        back = _model("Cast", 21, [("x", got)], [], 1, {"to": TP.FLOAT})
        np.testing.assert_array_equal(onnxmini.InferenceSession(back).run(None, {"x": got})[0],
                                      got.astype(np.float32))
    q = np.array([-8, -3, 0, 7], ml_dtypes.int4)
    back = _model("Cast", 21, [("x", q)], [], 1, {"to": TP.INT8})
    np.testing.assert_array_equal(onnxmini.InferenceSession(back).run(None, {"x": q})[0], [-8, -3, 0, 7])
