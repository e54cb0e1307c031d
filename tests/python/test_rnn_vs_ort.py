"""Random LSTM, GRU and RNN models (onnx.helper) run by onnxmini and by onnxruntime, compared.

Each seed draws a cell, a direction, sizes, and which optional parts are present
(bias, sequence_lens, initial_h / initial_c, peepholes, clip, input_forget,
linear_before_reset, weights as initializers - prepacked by onnxmini - or as
inputs, omitted outputs). onnxruntime has no layout 1, so layout-1 models are
compared with the transposed layout-0 results.

Tolerance: both sides compute the same float32 recurrence; they differ by the
rounding of the dot products (K = input + hidden + 2 terms: K * 2^-24 * Mz, Mz the
largest sum of |terms|) and by the activations (onnxmini's fast sigmoid / tanh are
within 2^-20 of exact), per step. The weights are drawn so that one step is a
contraction (sum of |R| over a row < 1 / 4), so the per-step differences add up
over the steps instead of growing: atol = steps * 4 * (K * 2^-24 * Mz + 2^-20).
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as onh

import onnxmini

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _draw(seed):
    rng = np.random.default_rng(seed)
    op = ["LSTM", "GRU", "RNN"][seed % 3]
    direction = ["forward", "reverse", "bidirectional"][(seed // 3) % 3]
    nd = 2 if direction == "bidirectional" else 1
    seq, batch, inp, hidden = (int(v) for v in rng.integers(1, [7, 5, 20, 40]))
    g = GATES[op]
    layout = int(rng.integers(0, 2))
    feeds, inits = {}, []
    x_shape = (seq, batch, inp) if layout == 0 else (batch, seq, inp)
    state = (nd, batch, hidden) if layout == 0 else (batch, nd, hidden)
    arrays = {"X": rng.standard_normal(x_shape).astype(np.float32),
              "W": (rng.standard_normal((nd, g * hidden, inp)) / np.sqrt(inp)).astype(np.float32),
              # |R| row sums ~ 0.2: a contraction (see the module docstring)
              "R": (0.25 / hidden * rng.standard_normal((nd, g * hidden, hidden))).astype(np.float32)}
    if rng.random() < 0.7:
        arrays["B"] = (0.3 * rng.standard_normal((nd, 2 * g * hidden))).astype(np.float32)
    if rng.random() < 0.5:
        arrays["sequence_lens"] = rng.integers(0, seq + 1, batch).astype(np.int32)
    if rng.random() < 0.7:
        arrays["initial_h"] = (0.5 * rng.standard_normal(state)).astype(np.float32)
    if op == "LSTM" and rng.random() < 0.7:
        arrays["initial_c"] = (0.5 * rng.standard_normal(state)).astype(np.float32)
    if op == "LSTM" and rng.random() < 0.5:
        arrays["P"] = (0.05 * rng.standard_normal((nd, 3 * hidden))).astype(np.float32)
    attrs = {"hidden_size": hidden, "direction": direction}
    if layout:
        attrs["layout"] = 1
    if rng.random() < 0.3:
        attrs["clip"] = float(rng.uniform(0.3, 2.0))
    if op == "LSTM" and rng.random() < 0.3:
        attrs["input_forget"] = 1
    if op == "GRU":
        attrs["linear_before_reset"] = int(rng.integers(0, 2))
    slots = ["X", "W", "R", "B", "sequence_lens", "initial_h"] + (["initial_c", "P"] if op == "LSTM" else [])
    names = [s if s in arrays else "" for s in slots]
    while names[-1] == "":
        names.pop()
    weights_const = rng.random() < 0.5
    for n in names:
        if not n:
            continue
        if weights_const and n in ("W", "R", "B"):
            inits.append(onh.from_array(arrays[n], n))
        else:
            feeds[n] = arrays[n]
    all_outs = ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]
    keep = rng.random(len(all_outs)) < 0.7
    if not keep.any():
        keep[0] = True
    outs = [o if k else "" for o, k in zip(all_outs, keep)]
    while outs[-1] == "":
        outs.pop()
    node = oh.make_node(op, names, outs, **attrs)
    vis = [oh.make_tensor_value_info(n, onh.from_array(v).data_type, v.shape) for n, v in feeds.items()]
    graph = oh.make_graph([node], "rnn", vis, [oh.make_tensor_value_info(o, TP.FLOAT, None) for o in outs if o], inits)
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 14)])
    model.ir_version = 8
    return model, feeds, arrays, layout, [o for o in outs if o]


def _ort(model, feeds, layout, outs):
    if layout == 1:
        m = type(model)()
        m.CopyFrom(model)
        for a in m.graph.node[0].attribute:
            if a.name == "layout":
                a.i = 0
        for vi in m.graph.input:
            vi.type.tensor_type.ClearField("shape")
        feeds = {n: (v.transpose(1, 0, 2) if n in ("X", "initial_h", "initial_c") else v) for n, v in feeds.items()}
        model = m
    res = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    if layout == 1:
        res = [r.transpose(2, 0, 1, 3) if o == "Y" else r.transpose(1, 0, 2) for o, r in zip(outs, res)]
    return res


def _atol(arrays, steps):
    x = np.abs(arrays["X"]).max()
    w, r = np.abs(arrays["W"]), np.abs(arrays["R"])
    state = max([1.0] + [float(np.abs(arrays[n]).max()) for n in ("initial_h", "initial_c") if n in arrays])
    b = np.abs(arrays["B"]).max() * 2 if "B" in arrays else 0.0
    mz = float((w.sum(axis=2) * x).max() + r.sum(axis=2).max() * state + b)
    k = w.shape[2] + r.shape[2] + 2
    return max(1, steps) * 4 * (k * 2.0 ** -24 * mz + 2.0 ** -20)


@pytest.mark.parametrize("seed", range(36))
def test_random_rnn_matches_onnxruntime(seed):
    model, feeds, arrays, layout, outs = _draw(seed)
    ours = onnxmini.InferenceSession(model.SerializeToString()).run(None, feeds)
    theirs = _ort(model, feeds, layout, outs)
    steps = arrays["X"].shape[1 if layout else 0]
    atol = _atol(arrays, steps)
    assert len(ours) == len(theirs)
    for name, a, b in zip(outs, ours, theirs):
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=0, atol=atol, err_msg=f"{name} (seed {seed})")
