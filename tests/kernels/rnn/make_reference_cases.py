#!/usr/bin/env python3
"""Writes tests/kernels/rnn/reference_cases/: LSTM, GRU and RNN node tests (ONNX
node-test layout: model.onnx + test_data_set_0/*.pb) whose expected outputs come from
onnxruntime, for what the ONNX test data leaves out: bidirectional with sequence_lens,
layout 1, peepholes, input_forget, clip, GRU linear_before_reset 0/1, every activation
with and without activation_alpha/beta, omitted outputs, hidden sizes that leave SIMD
tails. test_rnn_reference_cases.cc runs them with both kernel modes.

    .venv/bin/python tests/kernels/rnn/make_reference_cases.py
"""
import os
import pathlib
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as P
from onnx import helper as h
from onnx import numpy_helper as nh

root = pathlib.Path(__file__).resolve().parent / "reference_cases"
rng = np.random.default_rng(0)
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
written = []


def case(name, op, *, seq=4, batch=3, inp=5, hidden=6, direction="forward", layout=0, opset=22, bias=True,
         lens=None, h0=False, c0=False, peep=False, outputs=("Y", "Y_h", "Y_c"), scale=0.5, **attrs):
    nd = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    x_shape = (seq, batch, inp) if layout == 0 else (batch, seq, inp)
    state = (nd, batch, hidden) if layout == 0 else (batch, nd, hidden)
    feeds = {"X": rng.standard_normal(x_shape).astype(np.float32),
             "W": (scale * rng.standard_normal((nd, g * hidden, inp))).astype(np.float32),
             "R": (scale * rng.standard_normal((nd, g * hidden, hidden))).astype(np.float32)}
    names = ["X", "W", "R"]
    optional = [("B", bias, lambda: (0.3 * rng.standard_normal((nd, 2 * g * hidden))).astype(np.float32)),
                ("sequence_lens", lens is not None, lambda: np.array(lens, dtype=np.int32)),
                ("initial_h", h0, lambda: rng.standard_normal(state).astype(np.float32))]
    if op == "LSTM":
        optional += [("initial_c", c0, lambda: rng.standard_normal(state).astype(np.float32)),
                     ("P", peep, lambda: (0.5 * rng.standard_normal((nd, 3 * hidden))).astype(np.float32))]
    for n, present, make in optional:
        if present:
            feeds[n] = make()
            names.append(n)
        else:
            names.append("")
    while names[-1] == "":
        names.pop()
    all_outs = ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]
    outs = [o if o in outputs else "" for o in all_outs]
    while outs[-1] == "":
        outs.pop()
    if layout:
        attrs["layout"] = layout
    node = h.make_node(op, names, outs, direction=direction, hidden_size=hidden, **attrs)
    ins = [h.make_tensor_value_info(n, nh.from_array(feeds[n]).data_type, feeds[n].shape) for n in names if n]
    graph = h.make_graph([node], name, ins, [h.make_tensor_value_info(o, P.FLOAT, None) for o in outs if o])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    results = run_ort(model, {n: feeds[n] for n in names if n}, layout)
    for o, r in zip([o for o in outs if o], results):
        graph.output[[x.name for x in graph.output].index(o)].CopyFrom(h.make_tensor_value_info(o, P.FLOAT, r.shape))
    d = root / ("test_" + name)
    os.makedirs(d / "test_data_set_0", exist_ok=True)
    onnx.save(model, d / "model.onnx")
    for i, n in enumerate([n for n in names if n]):
        (d / f"test_data_set_0/input_{i}.pb").write_bytes(nh.from_array(feeds[n], n).SerializeToString())
    for i, (o, r) in enumerate(zip([o for o in outs if o], results)):
        (d / f"test_data_set_0/output_{i}.pb").write_bytes(nh.from_array(r, o).SerializeToString())
    written.append(name)


def run_ort(model, feeds, layout):
    """onnxruntime's outputs; it has no layout 1, so that runs as the transposed layout-0 problem."""
    if layout == 1:
        model = onnx.ModelProto.FromString(model.SerializeToString())
        node = model.graph.node[0]
        for a in node.attribute:
            if a.name == "layout":
                a.i = 0
        for vi in list(model.graph.input) + list(model.graph.output):
            vi.type.tensor_type.ClearField("shape")
        feeds = {n: (v.transpose(1, 0, 2) if n in ("X", "initial_h", "initial_c") else v) for n, v in feeds.items()}
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    results = sess.run(None, feeds)
    if layout == 1:
        names = [o.name for o in model.graph.output]
        results = [r.transpose(2, 0, 1, 3) if n == "Y" else r.transpose(1, 0, 2) for n, r in zip(names, results)]
    return [np.ascontiguousarray(r) for r in results]


shutil.rmtree(root, ignore_errors=True)
full = dict(bias=True, h0=True, lens=[4, 0, 2])  # an empty sequence too
for op in ("LSTM", "GRU", "RNN"):
    k = op.lower()
    extra = dict(c0=True) if op == "LSTM" else {}
    case(f"{k}_bidirectional_seq_lens", op, direction="bidirectional", **full, **extra)
    case(f"{k}_reverse_seq_lens", op, direction="reverse", **full, **extra)
    case(f"{k}_layout1_bidirectional", op, direction="bidirectional", layout=1, **full, **extra)
    case(f"{k}_clip", op, direction="bidirectional", clip=0.7, scale=1.5, **full, **extra)
    case(f"{k}_simd_tails", op, seq=3, batch=5, inp=7, hidden=19, direction="bidirectional", h0=True)
    case(f"{k}_opset7", op, opset=7, direction="reverse", h0=True)
    case(f"{k}_only_y", op, outputs=("Y",), lens=[3, 4, 1])
    case(f"{k}_only_y_h", op, outputs=("Y_h",), direction="bidirectional", lens=[3, 4, 1])
case("lstm_peepholes", "LSTM", peep=True, c0=True, h0=True, direction="bidirectional", lens=[4, 1, 3])
case("lstm_input_forget", "LSTM", input_forget=1, peep=True, c0=True, h0=True)
case("lstm_only_y_c", "LSTM", outputs=("Y_c",), c0=True)
case("lstm_no_bias", "LSTM", bias=False, peep=True)
for lbr in (0, 1):
    case(f"gru_linear_before_reset_{lbr}", "GRU", linear_before_reset=lbr, direction="bidirectional", **full)
    case(f"gru_linear_before_reset_{lbr}_tails", "GRU", linear_before_reset=lbr, hidden=21, batch=2, lens=[4, 3])

# Every activation: RNN's f, with activation_alpha / activation_beta given and left at their defaults.
ACTS = {"Relu": (), "Tanh": (), "Sigmoid": (), "Affine": (0.7, -0.2), "LeakyRelu": (0.3,), "ThresholdedRelu": (0.4,),
        "ScaledTanh": (1.3, 0.8), "HardSigmoid": (0.3, 0.4), "Elu": (0.6,), "Softsign": (), "Softplus": ()}
for act, ab in ACTS.items():
    params = {}
    if len(ab) >= 1:
        params["activation_alpha"] = [ab[0]]
    if len(ab) >= 2:
        params["activation_beta"] = [ab[1]]
    case(f"rnn_act_{act.lower()}", "RNN", activations=[act], h0=True, **params)
    # Defaults: onnxruntime uses 0 for a missing alpha / beta of Affine, ScaledTanh and
    # ThresholdedRelu, onnxmini the stand-alone ops' defaults (docs/kernels/rnn.md), so only
    # the activations where both agree are compared here.
    if act in ("LeakyRelu", "HardSigmoid", "Elu"):
        case(f"rnn_act_{act.lower()}_defaults", "RNN", activations=[act], h0=True)
# Non-default activations in LSTM and GRU (alphas consumed in order by the activations that take them).
case("lstm_activations", "LSTM", activations=["HardSigmoid", "Softsign", "Elu", "LeakyRelu", "ScaledTanh", "Affine"],
     activation_alpha=[0.25, 0.8, 0.1, 1.2, 0.9], activation_beta=[0.45, 0.7, 0.1], direction="bidirectional", **full)
case("gru_activations", "GRU", activations=["HardSigmoid", "Softplus", "Sigmoid", "ThresholdedRelu"],
     activation_alpha=[0.3, 0.2], activation_beta=[0.6], direction="bidirectional", **full)
print(len(written), "cases")
