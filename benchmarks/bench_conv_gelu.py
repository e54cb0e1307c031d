"""What the conv_gelu rule (runtime/graph_fusion.cc) gains on single Conv + Gelu layers: the model at
ORT_ENABLE_ALL (Gelu in the Conv's epilogue) against the same model at ORT_ENABLE_BASIC (Conv, then
the Gelu op: its own pass over Y), one thread, interleaved rounds. No other level-2 rule applies to
these two-node models (checked).

Each round makes a fresh session per variant, warms it up, then runs it for about --round-s seconds
(the order of the two alternates between rounds); a variant's figure is the median of its per-round
medians, the gain the median of the per-round ratios unfused / fused (> 1: the rule is faster).

    .venv/bin/python benchmarks/bench_conv_gelu.py [--rounds 7]
    ONNXMINI_ISA=avx2 .venv/bin/python benchmarks/bench_conv_gelu.py   # the AVX2 kernels
"""
import argparse
import os
import statistics
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import onnxmini

# name, X shape, W shape, group, pads, approximate
LAYERS = [
    ("3x3 64->64 @56x56, erf", (1, 64, 56, 56), (64, 64, 3, 3), 1, [1, 1, 1, 1], "none"),
    ("3x3 64->64 @56x56, tanh", (1, 64, 56, 56), (64, 64, 3, 3), 1, [1, 1, 1, 1], "tanh"),
    ("1x1 128->512 @28x28, erf (ConvNeXt-like MLP)", (1, 128, 28, 28), (512, 128, 1, 1), 1, [0, 0, 0, 0], "none"),
    ("depthwise 3x3 256 @28x28, erf", (1, 256, 28, 28), (256, 1, 3, 3), 256, [1, 1, 1, 1], "none"),
]


def _model(x_shape, w_shape, group, pads, approx):
    rng = np.random.default_rng(0)
    fan_in = int(np.prod(w_shape[1:]))
    inits = [numpy_helper.from_array((rng.standard_normal(w_shape) / np.sqrt(fan_in)).astype(np.float32), "W"),
             numpy_helper.from_array((rng.standard_normal(w_shape[0]) * 0.1).astype(np.float32), "B")]
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", pads=pads, group=group),
             helper.make_node("Gelu", ["c"], ["y"], name="gelu", approximate=approx)]
    graph = helper.make_graph(nodes, "conv_gelu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9).SerializeToString()


def _session(model_bytes, level):
    so = onnxmini.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = level
    return onnxmini.InferenceSession(model_bytes, so)


def _time_round(sess, feeds, seconds):
    for _ in range(2):
        sess.run(None, feeds)
    times, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 3:
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--round-s", type=float, default=0.4)
    a = ap.parse_args()
    print(f"ONNXMINI_ISA={os.environ.get('ONNXMINI_ISA', '(default)')}, load average {os.getloadavg()}")
    print("| layer | ms fused | ms unfused | gain (median ratio) | ratio range |")
    for name, xs, ws, group, pads, approx in LAYERS:
        model = _model(xs, ws, group, pads, approx)
        probe = _session(model, 99)
        assert [r for r, _ in probe.graph_rewrites()] == ["conv_gelu"], probe.graph_rewrites()
        assert not _session(model, 1).graph_rewrites()
        feeds = {"x": np.random.default_rng(1).standard_normal(xs).astype(np.float32)}
        medians = {99: [], 1: []}
        for r in range(a.rounds):
            for level in ([99, 1] if r % 2 == 0 else [1, 99]):
                medians[level].append(_time_round(_session(model, level), feeds, a.round_s))
        ratios = [u / f for u, f in zip(medians[1], medians[99])]
        print(f"| {name} | {statistics.median(medians[99]) * 1e3:.3f} | "
              f"{statistics.median(medians[1]) * 1e3:.3f} | {statistics.median(ratios):.2f}x | "
              f"{min(ratios):.2f}-{max(ratios):.2f} |", flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
