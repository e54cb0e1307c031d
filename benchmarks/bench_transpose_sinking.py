"""Transpose sinking (runtime/graph_sinking.h) on a converter-style model: no zoo model has
elementwise ops between Transposes, so this builds the graph tf2onnx emits for a TF (NHWC)
CNN before its own optimizer runs: every Conv wrapped as Transpose(NHWC->NCHW) -> Conv ->
Transpose(NCHW->NHWC), then BiasAdd (Add of a [C] constant) and Relu in NHWC.

Each variant (a model file and a GraphOptimizationLevel) is timed alternately for --rounds
rounds on one thread (the machine is shared): per round a fresh session, a warm-up, then about
--round-s seconds of runs; a variant's figure is the median of its per-round medians.
--extra LABEL=PATH adds a model file timed at level 0 (e.g. the model another build's
`onnxmini optimize` saved, to compare optimizers on the same kernels).

    .venv/bin/python benchmarks/bench_transpose_sinking.py [--rounds 7] [--extra main99=/tmp/x.onnx] [--base main99]
"""
import argparse
import pathlib
import statistics
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnxmini
# One thread, a level, and the round timer of the optimizer benchmark (same folder).
from bench_optimizer import _session as session, _time_round as time_round  # noqa: E402

TO_NCHW, TO_NHWC = [0, 3, 1, 2], [0, 2, 3, 1]


def converter_style_cnn(path, size=56, channels=(16, 32, 32, 64, 64, 64), seed=0):
    """Input NHWC [1, size, size, 3]; one wrapped 3x3 Conv + BiasAdd + Relu per entry of
    `channels` (stride 2 on every other one); output NHWC."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    x, c_in = "input", 3
    for i, c in enumerate(channels):
        w = (rng.standard_normal((c, c_in, 3, 3)) / np.sqrt(9 * c_in)).astype(np.float32)
        b = (0.1 * rng.standard_normal(c)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        stride = 2 if i % 2 == 0 else 1
        nodes += [
            helper.make_node("Transpose", [x], [f"nchw{i}"], f"to_nchw{i}", perm=TO_NCHW),
            helper.make_node("Conv", [f"nchw{i}", f"w{i}"], [f"conv{i}"], f"conv{i}", pads=[1, 1, 1, 1],
                             strides=[stride, stride]),
            helper.make_node("Transpose", [f"conv{i}"], [f"nhwc{i}"], f"to_nhwc{i}", perm=TO_NHWC),
            helper.make_node("Add", [f"nhwc{i}", f"b{i}"], [f"biased{i}"], f"bias_add{i}"),
            helper.make_node("Relu", [f"biased{i}"], [f"relu{i}"], f"relu{i}"),
        ]
        x, c_in = f"relu{i}", c
    nodes.append(helper.make_node("Identity", [x], ["output"], "out"))
    graph = helper.make_graph(nodes, "tf2onnx_style_cnn",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, size, size, 3])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, path)
    return {"input": rng.standard_normal((1, size, size, 3)).astype(np.float32)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--round-s", type=float, default=0.3)
    ap.add_argument("--size", type=int, default=56)
    ap.add_argument("--extra", nargs="*", default=[], help="LABEL=PATH, timed at level 0")
    ap.add_argument("--base", default="L0", help="the variant the ratios divide (its time / this time)")
    a = ap.parse_args()
    path = pathlib.Path(tempfile.gettempdir()) / "onnxmini_converter_style_cnn.onnx"
    feeds = converter_style_cnn(path, a.size)
    variants = [("L0", path, 0), ("L1", path, 1), ("L99", path, 99)]
    variants += [(e.split("=", 1)[0], pathlib.Path(e.split("=", 1)[1]), 0) for e in a.extra]
    ref = session(path, 0).run(None, feeds)[0]
    for label, p, level in variants:
        s = session(p, level)
        out = s.run(None, feeds)[0]
        ops = [n["op_type"] for n in s.describe()["nodes"]]
        print(f"{label}: {len(ops)} nodes, {ops.count('Transpose')} Transposes, "
              f"max |diff| vs L0 {float(np.max(np.abs(out - ref))):.3g}")
    medians = {v[0]: [] for v in variants}
    for _ in range(a.rounds):
        for label, p, level in variants:
            medians[label].append(time_round(session(p, level), feeds, a.round_s))
    for label, _, _ in variants:
        ms = statistics.median(medians[label])
        ratios = [b / m for b, m in zip(medians[a.base], medians[label])]
        print(f"{label}: {ms * 1e3:.3f} ms, {a.base} / this: median of per-round ratios "
              f"{statistics.median(ratios):.3f}x")


if __name__ == "__main__":
    main()
