"""int2 / uint2 / float8e8m0 through the Python API, against onnx's reference implementation
(onnxruntime's Python cannot return these types: "No corresponding Numpy type").

Arrays of these types are ml_dtypes arrays (ml_dtypes >= 0.5 has int2, uint2 and
float8_e8m0fnu): they go in as inputs and come back as outputs with the same bytes, one
code per byte as ml_dtypes stores them. Results must equal onnx.reference's bit for bit.
"""
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx.reference import ReferenceEvaluator

import onnxmini

ml_dtypes = pytest.importorskip("ml_dtypes")
if not all(hasattr(ml_dtypes, n) for n in ("int2", "uint2", "float8_e8m0fnu")):
    pytest.skip("ml_dtypes without int2 / uint2 / float8_e8m0fnu", allow_module_level=True)

NP = {TP.INT2: ml_dtypes.int2, TP.UINT2: ml_dtypes.uint2, TP.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu,
      TP.FLOAT: np.float32, TP.FLOAT16: np.float16, TP.INT8: np.int8, TP.UINT8: np.uint8}
TP_OF = {np.dtype(v): k for k, v in NP.items()}


def _cast_model(x, to, **attrs):
    g = oh.make_graph([oh.make_node("Cast", ["x"], ["y"], to=to, **attrs)], "g",
                      [oh.make_tensor_value_info("x", TP_OF[x.dtype], x.shape)],
                      [oh.make_tensor_value_info("y", to, x.shape)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 25)])
    m.ir_version = 11
    return m


def _both(model, feeds):
    mini = onnxmini.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    ref = ReferenceEvaluator(model).run(None, feeds)[0]
    return mini, ref


def _floats():
    rng = np.random.default_rng(131)
    x = (rng.standard_normal(200) * 4).astype(np.float32)
    x[:12] = [-3, -2, -1, 0, 1, 2, 3, 2.5, -1.5, 7.9, -0.5, 1.75]
    return x


@pytest.mark.parametrize("to", [TP.INT2, TP.UINT2])
@pytest.mark.parametrize("src", [np.float32, np.float16])
def test_cast_float_to_2bit_matches_reference(to, src):
    x = _floats().astype(src)
    mini, ref = _both(_cast_model(x, to), {"x": x})
    assert mini.dtype == np.dtype(NP[to])
    np.testing.assert_array_equal(mini.view(np.uint8), ref.astype(NP[to]).view(np.uint8))


@pytest.mark.parametrize("frm", [TP.INT2, TP.UINT2])
@pytest.mark.parametrize("to", [TP.FLOAT, TP.FLOAT16, TP.INT8, TP.UINT8])
def test_every_2bit_code_casts_like_the_reference(frm, to):
    x = np.arange(4, dtype=np.uint8).view(NP[frm])  # every code, as an ml_dtypes input
    mini, ref = _both(_cast_model(x, to), {"x": x})
    np.testing.assert_array_equal(mini, ref)


@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [0, 1])
def test_cast_float_to_e8m0_matches_reference(round_mode, saturate):
    p = np.ldexp(np.float32(1), np.arange(-126, 128, dtype=np.int32)).astype(np.float32)
    x = np.concatenate([p, np.nextafter(p, np.float32(0)), np.nextafter(p, np.float32(np.inf)), p * np.float32(1.5),
                        np.nextafter(p * np.float32(1.5), np.float32(0)), _floats() ** 2,
                        np.array([0, np.inf, np.nan, 3e38, np.finfo(np.float32).max], np.float32)]).astype(np.float32)
    with np.errstate(over="ignore"):
        mini, ref = _both(_cast_model(x, TP.FLOAT8E8M0, saturate=saturate, round_mode=round_mode), {"x": x})
    assert mini.dtype == np.dtype(ml_dtypes.float8_e8m0fnu)
    np.testing.assert_array_equal(mini.view(np.uint8), ref.view(np.uint8))


def test_every_e8m0_code_to_float():
    x = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    for to in (TP.FLOAT, TP.FLOAT16):
        mini, ref = _both(_cast_model(x, to), {"x": x})
        np.testing.assert_array_equal(mini, ref)
        # and the same values as ml_dtypes' own conversion
        np.testing.assert_array_equal(mini, x.astype(NP[to]))


@pytest.mark.parametrize("qt", [TP.INT2, TP.UINT2])
def test_quantize_dequantize_2bit_matches_reference(qt):
    x = _floats().reshape(8, 25)
    scale = np.linspace(0.5, 2.0, 8).astype(np.float32)
    zp = np.array([-2, -1, 0, 1] * 2 if qt == TP.INT2 else [0, 1, 2, 3] * 2).astype(NP[qt])
    q = oh.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=0)
    g = oh.make_graph([q], "g", [oh.make_tensor_value_info(n, t, a.shape) for n, t, a in
                                 [("x", TP.FLOAT, x), ("s", TP.FLOAT, scale), ("z", qt, zp)]],
                      [oh.make_tensor_value_info("q", qt, x.shape)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 25)])
    m.ir_version = 11
    feeds = {"x": x, "s": scale, "z": zp}
    mini, ref = _both(m, feeds)
    np.testing.assert_array_equal(mini.view(np.uint8), ref.astype(NP[qt]).view(np.uint8))
    d = oh.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=0)
    g = oh.make_graph([d], "g", [oh.make_tensor_value_info(n, t, a.shape) for n, t, a in
                                 [("q", qt, mini), ("s", TP.FLOAT, scale), ("z", qt, zp)]],
                      [oh.make_tensor_value_info("y", TP.FLOAT, x.shape)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 25)])
    m.ir_version = 11
    mini_y, ref_y = _both(m, {"q": mini, "s": scale, "z": zp})
    np.testing.assert_array_equal(mini_y, ref_y)
