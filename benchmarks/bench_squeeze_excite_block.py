"""One synthetic squeeze-and-excitation block (GlobalAveragePool -> Conv 1x1 -> Relu -> Conv 1x1 ->
HardSigmoid -> Mul(X, gate) [-> Add(X, product)]) at ORT_ENABLE_ALL with the squeeze_excite rule
against the same model with the rule blocked (the gate also declared a graph output, not fetched):
what one SqueezeExcite node saves over the chain (docs/optimizer.md). Interleaved rounds, a fresh
session per round and variant, the gain the median of the per-round ratios without / with.

    .venv/bin/python benchmarks/bench_squeeze_excite_block.py C H CM [--residual] [--threads 1] [--rounds 7]
    ONNXMINI_ISA=avx2 .venv/bin/python benchmarks/bench_squeeze_excite_block.py ...
"""
import argparse
import os
import statistics
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import onnxmini


def _model(c, h, cm, residual, block, rng):
    inits = [numpy_helper.from_array(rng.standard_normal((cm, c, 1, 1)).astype(np.float32) * 0.1, "W1"),
             numpy_helper.from_array(np.zeros(cm, np.float32), "B1"),
             numpy_helper.from_array(rng.standard_normal((c, cm, 1, 1)).astype(np.float32) * 0.1, "W2"),
             numpy_helper.from_array(np.zeros(c, np.float32), "B2")]
    nodes = [helper.make_node("GlobalAveragePool", ["X"], ["P"]),
             helper.make_node("Conv", ["P", "W1", "B1"], ["T"]), helper.make_node("Relu", ["T"], ["Hd"]),
             helper.make_node("Conv", ["Hd", "W2", "B2"], ["T2"]),
             helper.make_node("HardSigmoid", ["T2"], ["G"], alpha=0.2, beta=0.5),
             helper.make_node("Mul", ["X", "G"], ["M" if residual else "Y"])]
    if residual:
        nodes.append(helper.make_node("Add", ["X", "M"], ["Y"]))
    outs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)]
    if block:
        outs.append(helper.make_tensor_value_info("G", TensorProto.FLOAT, None))
    g = helper.make_graph(nodes, "se", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, c, h, h])], outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString()


def _session(model, threads):
    so = onnxmini.SessionOptions()
    so.intra_op_num_threads = threads
    so.graph_optimization_level = 99
    return onnxmini.InferenceSession(model, so)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("C", type=int)
    ap.add_argument("H", type=int)
    ap.add_argument("CM", type=int)
    ap.add_argument("--residual", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--round-s", type=float, default=0.3)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    feeds = {"X": rng.standard_normal((1, a.C, a.H, a.H)).astype(np.float32)}
    variants = {k: _model(a.C, a.H, a.CM, a.residual, k == "without", rng) for k in ("with", "without")}
    assert any(r[0] == "squeeze_excite" for r in _session(variants["with"], 1).graph_rewrites())
    assert not any(r[0] == "squeeze_excite" for r in _session(variants["without"], 1).graph_rewrites())
    medians = {"with": [], "without": []}
    for r in range(a.rounds):
        for k in (["with", "without"] if r % 2 == 0 else ["without", "with"]):
            sess = _session(variants[k], a.threads)
            for _ in range(5):
                sess.run(["Y"], feeds)
            times, end = [], time.perf_counter() + a.round_s
            while time.perf_counter() < end or len(times) < 5:
                t = time.perf_counter()
                sess.run(["Y"], feeds)
                times.append(time.perf_counter() - t)
            medians[k].append(statistics.median(times))
    gain = statistics.median(w / f for w, f in zip(medians["without"], medians["with"]))
    print(f"ONNXMINI_ISA={os.environ.get('ONNXMINI_ISA', '(default)')} 1x{a.C}x{a.H}x{a.H} Cm {a.CM} "
          f"residual {int(a.residual)} threads {a.threads}: with {statistics.median(medians['with']) * 1e6:.1f} us, "
          f"without {statistics.median(medians['without']) * 1e6:.1f} us, gain {gain:.3f}x "
          f"(load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
