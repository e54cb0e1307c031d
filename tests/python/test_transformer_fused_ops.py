"""onnxruntime's fused transformer ops (kernels/nn/transformer_fused.cc): SkipLayerNormalization,
SkipSimplifiedLayerNormalization, SimplifiedLayerNormalization, BiasGelu, FastGelu, against
onnxruntime's CPU kernels on the same single-node models, float32 and float16.

Tolerances: float32, a row of H <= 768 normalised (two reductions of length H, then one multiply-add)
differs by reordering only: |err| <= ~sqrt(H) * 2^-24 * |y| ~ 2e-6 relative, outputs O(1-10): atol 1e-5,
rtol 1e-5. Gelu: erf/tanh in float32, a few ulps: 1e-6. float16: both runtimes compute in float32 and
round the output once (<= 2^-11 relative each, so 2^-10 apart), but onnxruntime rounds the sum
input + skip + bias to float16 before normalising where onnxmini keeps it in float32: one more
2^-11 relative on the sum, amplified by inv_std * gamma (<= ~3 here): rtol 4e-3, atol 4e-3.
"""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onnxmini

MS = "com.microsoft"
RNG = np.random.default_rng(0)
TOL = {np.float32: 1e-5, np.float16: 4e-3}
DTYPES = [np.float32, np.float16]


def _model(op, inputs, outputs, attrs, dtype, domain=MS):
    """One node; "" in `outputs` leaves that output out (positions kept)."""
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    node = helper.make_node(op, [n for n, _ in inputs], outputs, domain=domain, **attrs)
    named = [o for o in outputs if o]
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, elem, v.shape) for n, v in inputs],
        [onnx.ValueInfoProto(name=o) for o in named])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    return model.SerializeToString(), named


def _compare(op, inputs, outputs, attrs, dtype, domain=MS, tol=None):
    """onnxmini against onnxruntime on one node, every named output."""
    inputs = [(n, v.astype(dtype)) for n, v in inputs]
    model, named = _model(op, inputs, outputs, attrs, dtype, domain)
    feeds = dict(inputs)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = onnxmini.InferenceSession(model).run(None, feeds)
    tol = tol if tol is not None else TOL[dtype]
    for name, g, w in zip(named, got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, f"{op} {name}: dtype {g.dtype}, onnxruntime {w.dtype}"
        assert g.shape == w.shape, f"{op} {name}: shape {g.shape}, onnxruntime {w.shape}"
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol, err_msg=f"{op} {name}")


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float16"])
@pytest.mark.parametrize("shape,skip_shape", [((2, 7, 64), (2, 7, 64)), ((3, 768), (3, 768)), ((2, 5, 32), (5, 32))])
def test_skip_layer_normalization(dtype, shape, skip_shape):
    h = shape[-1]
    inputs = [("input", RNG.standard_normal(shape)), ("skip", RNG.standard_normal(skip_shape)),
              ("gamma", RNG.uniform(0.5, 1.5, h)), ("beta", RNG.standard_normal(h) * 0.1),
              ("bias", RNG.standard_normal(h) * 0.1)]
    # onnxruntime's float16 kernel has no mean / inv_std outputs: left out there (positions kept)
    outputs = ["out", "mean", "inv_std", "sum"] if dtype == np.float32 else ["out", "", "", "sum"]
    _compare("SkipLayerNormalization", inputs, outputs, {"epsilon": 1e-5}, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float16"])
def test_skip_simplified_layer_normalization(dtype):
    shape, h = (2, 6, 48), 48
    inputs = [("input", RNG.standard_normal(shape)), ("skip", RNG.standard_normal(shape)),
              ("gamma", RNG.uniform(0.5, 1.5, h)), ("bias", RNG.standard_normal(h) * 0.1)]
    outputs = ["out", "", "inv_std", "sum"] if dtype == np.float32 else ["out", "", "", "sum"]
    _compare("SkipSimplifiedLayerNormalization", inputs, outputs, {"epsilon": 1e-6}, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float16"])
def test_simplified_layer_normalization(dtype):
    """onnxruntime registers it in the ai.onnx domain (not com.microsoft), as onnxmini does."""
    inputs = [("X", RNG.standard_normal((3, 4, 40))), ("scale", RNG.uniform(0.5, 1.5, 40))]
    _compare("SimplifiedLayerNormalization", inputs, ["Y"], {"epsilon": 1e-6, "axis": -1}, dtype, domain="")


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float16"])
def test_bias_gelu_and_fast_gelu(dtype):
    a = RNG.standard_normal((4, 5, 96)) * 3
    b = RNG.standard_normal(96)
    tol = TOL[dtype] if dtype == np.float16 else 1e-6
    _compare("BiasGelu", [("A", a), ("B", b)], ["Y"], {}, dtype, tol=tol)
    _compare("FastGelu", [("X", a), ("bias", b)], ["Y"], {}, dtype, tol=tol)
    _compare("FastGelu", [("X", a)], ["Y"], {}, dtype, tol=tol)


def test_errors_name_the_node_and_the_value():
    inputs = [("input", np.zeros((2, 8), np.float32)), ("skip", np.zeros((2, 5), np.float32)),
              ("gamma", np.zeros(8, np.float32))]
    model, _ = _model("SkipLayerNormalization", inputs, ["out"], {}, np.float32)
    with pytest.raises(onnxmini.OnnxMiniError, match=r"SkipLayerNormalization.*skip has shape 2x5, expected input's shape 2x8"):
        onnxmini.InferenceSession(model).run(None, {"input": np.zeros((2, 8), np.float32), "skip": np.zeros((2, 5), np.float32),
                                                    "gamma": np.zeros(8, np.float32)})
