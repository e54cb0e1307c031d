"""What the attention fusion (runtime/graph_fusion_attention.h) gains on zoo models: onnxmini at level 99
with the rule firing vs the same model where it cannot fire (docs/optimizer.md, "Measured gains").

"Without" is the model with every attention Softmax's output also declared a graph output: a
second reader of P, so the rule leaves the block unfused (its near-miss) while every other rule
applies as before (as benchmarks/bench_conv_add.py blocks its rule); only the model's own outputs
are fetched, so the extra output costs keeping P alive (a few KB here).
Both variants are timed alternately for --rounds rounds on one thread (the machine is shared):
each round makes a fresh session per variant, warms it up, then runs it for about --round-s
seconds; the figure is the median of per-round medians, the gain the median of the per-round
ratios without / with (> 1: the fusion is faster). A model without such a block (g2p_id_bert_mlm,
whose attention is tf2onnx's Einsum lowering) times the same graph twice: the noise floor.

    .venv/bin/python benchmarks/bench_attention_fusion.py [--only ppocr_v4_rec ...] [--rounds 7]

--blocks H,S,D[,m] ... times one block instead (opset 14: Q * 1/sqrt(D), K's Transpose, MatMul,
[Add(mask [1, 1, 1, S])], Softmax, MatMul with V; batch 1, Q K V [1, H, S, D]) at level 0 (unfused)
against level 99 (one Attention node), same rounds and ratios: where the fused kernel wins.
"""
import argparse
import os
import pathlib
import statistics
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import onnxmini  # noqa: E402
import zoo_lib  # noqa: E402
# The round timer (warm-up, then runs for `seconds`, fetching `outputs`) of the conv_add benchmark.
from bench_conv_add import _time_round  # noqa: E402


def _attention_softmaxes(model):
    """Softmax outputs read by exactly one MatMul as its left operand: the attention P values."""
    readers = {}
    for n in model.graph.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    out = []
    for n in model.graph.node:
        r = readers.get(n.output[0], [])
        if n.op_type == "Softmax" and len(r) == 1 and r[0].op_type == "MatMul" and r[0].input[0] == n.output[0]:
            out.append(n.output[0])
    return out


def _without(model):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for name in _attention_softmaxes(model):
        m.graph.output.add().name = name
    return m.SerializeToString()


def _session(model_bytes, level=99):
    so = onnxmini.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = level
    return onnxmini.InferenceSession(model_bytes, so)


def _block(h, s, d, mask):
    nodes = [helper.make_node("Mul", ["q", "c"], ["qs"]),
             helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["qs", "kt"], ["s"])]
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, h, "seq", d]) for n in "qkv"]
    scores = "s"
    if mask:
        nodes.append(helper.make_node("Add", ["s", "m"], ["sm"]))
        ins.append(helper.make_tensor_value_info("m", TensorProto.FLOAT, [1, 1, 1, "seq"]))
        scores = "sm"
    nodes += [helper.make_node("Softmax", [scores], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    graph = helper.make_graph(nodes, "block", ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.float32(1 / np.sqrt(d)), "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString()
    rng = np.random.default_rng(0)
    feeds = {n: rng.standard_normal((1, h, s, d)).astype(np.float32) for n in "qkv"}
    if mask:
        feeds["m"] = np.where(rng.random((1, 1, 1, s)) < 0.1, -10000.0, 0.0).astype(np.float32)
    return model, feeds


def _blocks(specs, rounds, round_s):
    for spec in specs:
        parts = spec.split(",")
        h, s, d = (int(x) for x in parts[:3])
        mask = len(parts) > 3 and parts[3] == "m"
        model, feeds = _block(h, s, d, mask)
        times = {0: [], 99: []}
        for _ in range(rounds):
            for level in times:
                times[level].append(_time_round(_session(model, level), feeds, None, round_s))
        ratios = [a / b for a, b in zip(times[0], times[99])]
        print(f"H {h} S {s} D {d}{' mask' if mask else ''}: unfused {statistics.median(times[0]) * 1e6:.1f} us, "
              f"fused {statistics.median(times[99]) * 1e6:.1f} us, gain {statistics.median(ratios):.2f}x "
              f"(per-round {min(ratios):.2f}-{max(ratios):.2f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="+", default=["ppocr_v4_rec", "g2p_id_bert_mlm"])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--round-s", type=float, default=0.5)
    ap.add_argument("--blocks", nargs="+", default=[])
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    if args.blocks:
        _blocks(args.blocks, args.rounds, args.round_s)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return
    for e in zoo_lib.load_manifest():
        if e["name"] not in args.only or not zoo_lib.model_path(e).exists():
            continue
        model = onnx.load(str(zoo_lib.model_path(e)))
        feeds = zoo_lib.make_feeds(e, 0)
        outputs = [o.name for o in model.graph.output]
        variants = {"with": model.SerializeToString(), "without": _without(model)}
        times = {k: [] for k in variants}
        for _ in range(args.rounds):
            for k, b in variants.items():
                times[k].append(_time_round(_session(b), feeds, outputs, args.round_s))
        ratios = [a / b for a, b in zip(times["without"], times["with"])]
        print(f"{e['name']}: {len(_attention_softmaxes(model))} attention blocks; with {statistics.median(times['with']) * 1e3:.3f} ms, "
              f"without {statistics.median(times['without']) * 1e3:.3f} ms, gain {statistics.median(ratios):.3f}x "
              f"(per-round {min(ratios):.3f}-{max(ratios):.3f})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
