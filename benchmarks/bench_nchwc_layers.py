"""One Conv layer in NCHW (the Conv kernel's own rule: conv2d_lanes, GEMM paths, depthwise) vs the
same layer as one NchwcConv on blocked NCHW16c data (input already blocked, output left blocked:
the cost inside a region, reorders excluded), for the Conv rows of benchmarks/shape_cases.json.

Each round runs `onnxmini run --repeat R --json` once per side (alternating which goes first), so
both see the same load; the result is each side's median over rounds and the median of the
per-round ratios nchw / nchwc (> 1: the blocked layer is faster), of latency and of CPU time per
run (process CPU time / runs: less sensitive to other processes taking the core). Feeds the cost rule of
runtime/graph_layout_nchwc.cc (docs/performance.md "Blocked layout (NCHW16c)").

    .venv/bin/python benchmarks/bench_nchwc_layers.py [--threads 1 2] [--rounds 5] [--kinds conv_dense ...]
    ONNXMINI_ISA=avx2 .venv/bin/python benchmarks/bench_nchwc_layers.py --tag avx2
Raw CSV: benchmarks/results/nchwc_layers_<tag>.csv
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from bench_nchwc_models import write_rows

HERE = pathlib.Path(__file__).resolve().parent


def blocks(c):
    return (c + 15) // 16


def models(case, folder, i):
    x_shape, w_shape = case["inputs"][0]["shape"], case["inputs"][1]["shape"]
    attrs = {k: v for k, v in case["attrs"].items() if k != "kernel_shape"}
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.uniform(-1, 1, w_shape).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.uniform(-1, 1, [w_shape[0]]).astype(np.float32), "B")
    plain = helper.make_graph([helper.make_node("Conv", ["X", "W", "B"], ["Y"], **attrs)], "plain",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [w, b])
    xb = [x_shape[0], blocks(x_shape[1]), x_shape[2], x_shape[3], 16]
    blocked = helper.make_graph(
        [helper.make_node("NchwcConv", ["X", "W", "B"], ["Y"], domain="ai.onnxmini", channels=w_shape[0], **attrs)],
        "blocked", [helper.make_tensor_value_info("X", TensorProto.FLOAT, xb)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [w, b])
    out = []
    for name, g, shape in (("plain", plain, x_shape), ("blocked", blocked, xb)):
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnxmini", 1)])
        m.ir_version = 8
        path = folder / f"{i}_{name}.onnx"
        onnx.save(m, path)
        out.append((path, "X=random:" + "x".join(map(str, shape))))
    return out


def latency(cli, path, spec, threads, repeat):
    args = [cli, "run", str(path), "--input", spec, "--threads", str(threads), "--repeat", str(repeat), "--warmup",
            "3", "--warmup-ms", "100", "--json"]
    d = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return d["latency_ms"]["median"], d["cpu_ms"]["mean"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/tools/onnxmini")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--kinds", nargs="+", default=["conv_dense", "conv_pointwise", "conv_depthwise", "conv_first"])
    ap.add_argument("--tag", default="xeon_avx512_2c")
    a = ap.parse_args()
    cases = [c for c in json.load(open(HERE / "shape_cases.json"))["cases"]
             if c["op"] == "Conv" and c["kind"] in a.kinds and len(c["inputs"][0]["shape"]) == 4]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(cases):
            (pp, ps), (bp, bs) = models(case, pathlib.Path(tmp), i)
            for t in a.threads:
                plain, blocked, ratios, cpu_ratios = [], [], [], []
                for r in range(a.rounds):
                    order = [(0, pp, ps), (1, bp, bs)][:: 1 if r % 2 == 0 else -1]
                    got = {}
                    for side, p, s in order:
                        got[side] = latency(a.cli, p, s, t, a.repeat)
                    plain.append(got[0][0])
                    blocked.append(got[1][0])
                    ratios.append(got[0][0] / got[1][0])
                    cpu_ratios.append(got[0][1] / got[1][1])
                row = {"kind": case["kind"], "model": case["model"], "node": case["node"],
                       "x": "x".join(map(str, case["inputs"][0]["shape"])),
                       "w": "x".join(map(str, case["inputs"][1]["shape"])),
                       "strides": "x".join(map(str, case["attrs"].get("strides", [1, 1]))), "threads": t,
                       "nchw_ms": round(statistics.median(plain), 4), "nchwc_ms": round(statistics.median(blocked), 4),
                       "ratio": round(statistics.median(ratios), 3),
                       "ratio_cpu": round(statistics.median(cpu_ratios), 3)}
                rows.append(row)
                print(",".join(str(v) for v in row.values()), flush=True)
    out = HERE / "results" / f"nchwc_layers_{a.tag}.csv"
    write_rows(out, rows)


if __name__ == "__main__":
    main()
