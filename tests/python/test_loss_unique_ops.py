"""The trickier ops of issue #13's batch A against onnxruntime (same one-node models, same inputs):
NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss over random shapes, reductions, weights and
ignore_index (float32 and float64), and Unique (sorted / unsorted, with and without axis, all four
outputs), plus GatherND / ScatterND / CumSum spot checks.

Tolerance: both sides sum at most a few hundred float32 terms of magnitude <= ~10 in some order:
|difference| <= terms * 2^-24 * sum|terms| -> atol 1e-4, rtol 1e-5 for float32; float64 1e-12.
Index, Unique and scatter outputs are compared exactly.
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

import onnxmini

NP_TO_TP = {np.float32: TP.FLOAT, np.float64: TP.DOUBLE, np.int64: TP.INT64, np.int32: TP.INT32, np.bool_: TP.BOOL}


def _model(op, feeds, n_outputs, opset, **attrs):
    names = list(feeds)
    inputs = [oh.make_tensor_value_info(n, NP_TO_TP[feeds[n].dtype.type], None) for n in names]
    outs = [f"y{i}" for i in range(n_outputs)]
    node = oh.make_node(op, names, outs, **attrs)
    g = oh.make_graph([node], "g", inputs, [oh.make_value_info(o, oh.make_empty_tensor_value_info(o).type) for o in outs])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def _both(op, feeds, n_outputs, opset, **attrs):
    data = _model(op, feeds, n_outputs, opset, **attrs)
    ours = onnxmini.InferenceSession(data).run(None, feeds)
    theirs = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    return ours, theirs


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("op", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
def test_losses_match_onnxruntime(op, seed):
    rng = np.random.default_rng(seed)
    dtype = np.float64 if seed % 4 == 3 else np.float32
    n, c = int(rng.integers(1, 6)), int(rng.integers(2, 7))
    extra = [int(v) for v in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
    x = rng.standard_normal([n, c] + extra).astype(dtype) * 2
    if op == "NegativeLogLikelihoodLoss":
        x = -np.abs(x)  # log-probabilities
    target = rng.integers(0, c, size=[n] + extra).astype(np.int64 if seed % 2 else np.int32)
    attrs = {"reduction": ["none", "sum", "mean"][seed % 3]}
    if seed % 5 in (1, 3):
        ii = int(rng.choice([-1, 0, c - 1]))
        attrs["ignore_index"] = ii
        target.flat[:: 3] = ii
    feeds = {"x": x, "t": target}
    if seed % 2 == 0:
        feeds["w"] = rng.uniform(0.2, 2.0, size=[c]).astype(dtype)
    n_out = 2 if op == "SoftmaxCrossEntropyLoss" else 1
    ours, theirs = _both(op, feeds, n_out, 13, **attrs)
    tol = dict(atol=1e-12, rtol=1e-12) if dtype == np.float64 else dict(atol=1e-4, rtol=1e-5)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, **tol)


@pytest.mark.parametrize("case", range(12))
def test_unique_matches_onnxruntime(case):
    rng = np.random.default_rng(100 + case)
    shape = [int(v) for v in rng.integers(1, 6, size=int(rng.integers(1, 4)))]
    x = rng.integers(-3, 3, size=shape).astype([np.float32, np.int64, np.float64][case % 3])
    attrs = {"sorted": case % 2}
    if case % 4 >= 2:
        attrs["axis"] = int(rng.integers(-len(shape), len(shape)))
    ours, theirs = _both("Unique", {"x": x}, 4, 11, **attrs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def test_gather_scatter_nd_and_cumsum_match_onnxruntime():
    rng = np.random.default_rng(5)
    data = rng.standard_normal([3, 4, 5]).astype(np.float32)
    idx = rng.integers(-3, 3, size=[3, 6, 1]).astype(np.int64)
    ours, theirs = _both("GatherND", {"data": data, "idx": idx}, 1, 13, batch_dims=1)
    np.testing.assert_array_equal(ours[0], theirs[0])
    sidx = np.array([[0, 1], [2, 3], [0, 1]], dtype=np.int64)
    upd = rng.standard_normal([3, 5]).astype(np.float32)
    ours, theirs = _both("ScatterND", {"data": data, "idx": sidx, "upd": upd}, 1, 18, reduction="add")
    np.testing.assert_allclose(ours[0], theirs[0], atol=1e-6)
    for exclusive in (0, 1):
        for reverse in (0, 1):
            feeds = {"x": data, "axis": np.array(1, dtype=np.int64)}
            ours, theirs = _both("CumSum", feeds, 1, 14, exclusive=exclusive, reverse=reverse)
            np.testing.assert_allclose(ours[0], theirs[0], atol=1e-5, rtol=1e-5)
