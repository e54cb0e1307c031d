"""What the graph optimizer gains: onnxmini's latency at each GraphOptimizationLevel against level 0
on the seed model and the zoo (docs/optimizer.md, "Measured gains").

The levels are timed alternately for --rounds rounds on one thread (the machine is shared): each
round makes a fresh session per level, warms it up, then runs it for about --round-s seconds; a
level's figure is the median of its per-round medians, and its gain is level 0 / level (> 1:
faster). Nodes: what runs after optimization (If/Loop bodies not counted).

    .venv/bin/python benchmarks/bench_optimizer.py [--only NAME ...] [--rounds 5] [--levels 0 1 2 99]
"""
import argparse
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import numpy as np  # noqa: E402

import onnxmini  # noqa: E402
import zoo_lib  # noqa: E402

SMALL = ROOT.parent / "shared" / "models" / "small.onnx"


def _models(only):
    out = []
    if SMALL.exists() and (not only or "small" in only):
        out.append(("small", SMALL, {"input": np.random.default_rng(0).standard_normal((1, 3, 112, 112)).astype(np.float32)}))
    for e in zoo_lib.load_manifest():
        path = zoo_lib.model_path(e)
        if path.exists() and (not only or e["name"] in only):
            out.append((e["name"], path, zoo_lib.make_feeds(e, 0)))
    return out


def _session(path, level):
    so = onnxmini.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = level
    return onnxmini.InferenceSession(str(path), so)


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
    ap.add_argument("--only", nargs="+", default=[])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--round-s", type=float, default=0.3)
    ap.add_argument("--levels", type=int, nargs="+", default=[0, 1, 2, 99])
    a = ap.parse_args()
    print("| model | nodes " + " ".join(f"L{lv} |" for lv in a.levels) + " ms " +
          " ".join(f"L{lv} |" for lv in a.levels) + " gain " + " ".join(f"L{lv} |" for lv in a.levels[1:]))
    for name, path, feeds in _models(a.only):
        medians = {lv: [] for lv in a.levels}
        nodes = {lv: len(_session(path, lv).describe()["nodes"]) for lv in a.levels}
        for _ in range(a.rounds):
            for lv in a.levels:
                medians[lv].append(_time_round(_session(path, lv), feeds, a.round_s))
        ms = {lv: statistics.median(medians[lv]) * 1e3 for lv in a.levels}
        base = ms[a.levels[0]]
        print(f"| {name} | " + " | ".join(str(nodes[lv]) for lv in a.levels) + " | " +
              " | ".join(f"{ms[lv]:.3f}" for lv in a.levels) + " | " +
              " | ".join(f"{base / ms[lv]:.2f}x" for lv in a.levels[1:]) + " |", flush=True)


if __name__ == "__main__":
    main()
