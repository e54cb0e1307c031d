"""What the exporter-form normalization rules gain (docs/optimizer.md, "Measured gains"):
layer_norm_tf, rms_norm and gelu_tanh (runtime/graph_fusion_norm_exports.cc).

Each model is timed three ways, alternately for --rounds rounds on one thread (the machine is
shared): onnxmini at level 1 (the decomposed nodes: no rule of level 2 applies to these models
but the one measured), onnxmini at level 99 (fused), and onnxruntime at ORT_ENABLE_ALL (which has
its own fusions for these patterns). Each round makes a fresh session per configuration, warms it
up, then runs it for about --round-s seconds and takes the median; a ratio is taken per round and
the median over rounds is reported (> 1: the second is faster).

Models: built here with onnx.helper in the exporters' forms, one pattern on [1, 128, 768] rows
(TF LayerNorm at opset 17, RMSNorm at opset 23 and 18, tanh-Gelu at opset 20 and 15), and the
zoo's g2p_id_bert_mlm (4 TF LayerNorms, opset 14) and magika_standard_v3_3 (2 tanh-Gelus, jax2tf
grouping, opset 15) when they are in the zoo cache.

    .venv/bin/python benchmarks/bench_norm_patterns.py [--rounds 7] [--round-s 0.5] [--only NAME ...]
"""
import argparse
import os
import pathlib
import statistics
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import onnxmini  # noqa: E402
import zoo_lib  # noqa: E402

SHAPE = [1, 128, 768]


def _const(name, value):
    return numpy_helper.from_array(np.asarray(value, np.float32), name)


def _vec(name, seed, lo=-1.0, hi=1.0):
    return numpy_helper.from_array(np.random.default_rng(seed).uniform(lo, hi, SHAPE[-1:]).astype(np.float32), name)


def _model(name, nodes, inits, opset):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, SHAPE)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def layer_norm_tf(opset=17):
    n = helper.make_node
    nodes = [n("GlobalAveragePool", ["X"], ["m"]), n("Sub", ["X", "m"], ["d"]), n("Mul", ["d", "d"], ["sq"]),
             n("GlobalAveragePool", ["sq"], ["var"]), n("Add", ["var", "eps"], ["ve"]), n("Sqrt", ["ve"], ["s"]),
             n("Reciprocal", ["s"], ["r"]), n("Mul", ["r", "gamma"], ["sg"]), n("Mul", ["m", "sg"], ["mm"]),
             n("Sub", ["beta", "mm"], ["shift"]), n("Mul", ["X", "sg"], ["xs"]), n("Add", ["xs", "shift"], ["Y"])]
    return _model("layer_norm_tf", nodes, [_const("eps", 1e-6), _vec("gamma", 1, 0.5, 1.5), _vec("beta", 2)], opset)


def rms_norm(opset=23):
    n = helper.make_node
    axes = numpy_helper.from_array(np.array([-1], np.int64), "axes")
    mean = n("ReduceMean", ["sq", "axes"], ["ms"]) if opset >= 18 else n("ReduceMean", ["sq"], ["ms"], axes=[-1])
    nodes = [n("Pow", ["X", "two"], ["sq"]), mean, n("Add", ["ms", "eps"], ["ve"]), n("Sqrt", ["ve"], ["r"]),
             n("Reciprocal", ["r"], ["inv"]), n("Mul", ["X", "inv"], ["nx"]), n("Mul", ["weight", "nx"], ["Y"])]
    inits = [_const("two", 2.0), _const("eps", 1e-6), _vec("weight", 3, 0.5, 1.5)] + ([axes] if opset >= 18 else [])
    return _model("rms_norm", nodes, inits, opset)


def gelu_tanh(opset=20):
    n = helper.make_node
    nodes = [n("Mul", ["X", "X"], ["x2"]), n("Mul", ["X", "x2"], ["x3"]), n("Mul", ["cubic", "x3"], ["c"]),
             n("Add", ["X", "c"], ["inner"]), n("Mul", ["k", "inner"], ["u"]), n("Tanh", ["u"], ["t"]),
             n("Add", ["one", "t"], ["a"]), n("Mul", ["X", "a"], ["xa"]), n("Mul", ["half", "xa"], ["Y"])]
    inits = [_const("cubic", 0.044715), _const("k", np.sqrt(2.0 / np.pi)), _const("one", 1.0), _const("half", 0.5)]
    return _model("gelu_tanh", nodes, inits, opset)


def _models(only):
    x = {"X": np.random.default_rng(0).uniform(-3.0, 3.0, SHAPE).astype(np.float32)}
    out = [("layer_norm_tf_o17", layer_norm_tf(17), x), ("rms_norm_o23", rms_norm(23), x),
           ("rms_norm_o18", rms_norm(18), x), ("gelu_tanh_o20", gelu_tanh(20), x), ("gelu_tanh_o15", gelu_tanh(15), x)]
    for e in zoo_lib.load_manifest():
        path = zoo_lib.model_path(e)
        if e["name"] in ("g2p_id_bert_mlm", "magika_standard_v3_3") and path.exists():
            out.append((e["name"], path.read_bytes(), zoo_lib.make_feeds(e, 0)))
    return [m for m in out if not only or m[0] in only]


def _mini(model, level):
    so = onnxmini.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = level
    return onnxmini.InferenceSession(model, so)


def _ort(model):
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def _median_ms(sess, feeds, seconds):
    for _ in range(3):
        sess.run(None, feeds)
    times = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 5:
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--round-s", type=float, default=0.5)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f}; {args.rounds} rounds, one thread")
    print("| model | nodes L1 -> L99 | L1 ms (median) | L99 ms | ort ms | L1/L99 (median ratio) | per-round range |"
          " ort/L99 |")
    print("|---|---|---|---|---|---|---|---|")
    for name, model, feeds in _models(args.only):
        makers = {"l1": lambda: _mini(model, 1), "l99": lambda: _mini(model, 99), "ort": lambda: _ort(model)}
        nodes = {k: len(_mini(model, lvl).describe()["nodes"]) for k, lvl in (("l1", 1), ("l99", 99))}
        ms = {k: [] for k in makers}
        for _ in range(args.rounds):
            for k, make in makers.items():
                ms[k].append(_median_ms(make(), feeds, args.round_s))
        ratios = [a / b for a, b in zip(ms["l1"], ms["l99"])]
        fused_ratio = statistics.median(ratios)
        ort_ratio = statistics.median(a / b for a, b in zip(ms["ort"], ms["l99"]))
        rewrites = _mini(model, 99).graph_rewrites()
        fused = len([r for r, _ in rewrites if r.startswith(("layer_norm_tf", "rms_norm", "gelu_tanh"))])
        med = {k: statistics.median(v) for k, v in ms.items()}
        print(f"| {name} | {fused} fused ({nodes['l1']} -> {nodes['l99']}) | {med['l1']:.4f} | {med['l99']:.4f} | "
              f"{med['ort']:.4f} | {fused_ratio:.2f}x | {min(ratios):.2f}-{max(ratios):.2f}x | {ort_ratio:.2f}x |",
              flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
