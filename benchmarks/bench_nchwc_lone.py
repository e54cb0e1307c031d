"""Lone 3x3 Conv layers, NCHW against blocked: what the layout's cost rule for a one-Conv region
(runtime/graph_layout_nchwc.cc, kLoneConvIntensity and kLoneWinogradIntensity) decides from.

Each layer is a model of one Conv (pads 1, bias) + Relu, run whole by the CLI: its NCHW kernels
with ONNXMINI_NCHWC=0, and blocked with ONNXMINI_NCHWC=all (the cost rule off: ReorderToBlocked,
one NchwcConv, ReorderFromBlocked, whatever the rule would say). Per round one
`onnxmini run --repeat R --json` per side, alternating which goes first; the result is each
side's median over rounds and the median of the per-round ratios nchw / blocked (> 1: blocking
pays). The CSV also names what the rule chooses (the default environment, from --explain) and
the NchwcConv variant, so a row where `rule` and the ratio disagree is a rule to re-measure.

    .venv/bin/python benchmarks/bench_nchwc_lone.py [--threads 1 2] [--rounds 7] [--only 96x24 ...]
    ONNXMINI_ISA=avx2 .venv/bin/python benchmarks/bench_nchwc_lone.py    # the AVX2 path, own CSV
Raw CSV: benchmarks/results/nchwc_lone_<machine-tag>.csv (bench_zoo.machine_tag).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from bench_nchwc_models import write_rows
from bench_zoo import machine_tag

HERE = pathlib.Path(__file__).resolve().parent

# (input channels, output channels, H = W, stride): 3x3 layers of the zoo's detectors and OCR
# models and their neighbours, around both intensity thresholds (2 K^2 Cin Cout / (Cin s^2 + Cout)).
LAYERS = [(96, 24, 80, 1), (32, 32, 56, 1), (48, 48, 52, 1), (24, 24, 104, 1), (64, 32, 40, 1),
          (128, 32, 20, 1), (32, 64, 28, 1), (64, 64, 20, 1), (24, 48, 52, 1), (16, 32, 80, 1),
          (32, 16, 80, 1), (48, 24, 52, 1), (16, 32, 160, 2), (96, 96, 26, 1)]


def name(layer):
    c, m, h, s = layer
    return f"{c}x{m}_{h}" + (f"_s{s}" if s != 1 else "")


def intensity(layer):
    c, m, _, s = layer
    return 2 * 9 * c * m / (c * s * s + m)


def make_model(layer, folder):
    c, m, h, s = layer
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.uniform(-0.1, 0.1, [m, c, 3, 3]).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.uniform(-0.1, 0.1, [m]).astype(np.float32), "B")
    g = helper.make_graph([helper.make_node("Conv", ["X", "W", "B"], ["C"], pads=[1, 1, 1, 1], strides=[s, s]),
                           helper.make_node("Relu", ["C"], ["Y"])], "lone",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, c, h, h])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [w, b])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = folder / f"{name(layer)}.onnx"
    onnx.save(model, path)
    return path, f"X=random:1x{c}x{h}x{h}"


def run(cli, path, spec, env, extra):
    e = dict(os.environ)
    e.pop("ONNXMINI_NCHWC", None)
    e.update(env)
    out = subprocess.run([cli, "run", str(path), "--input", spec] + extra, env=e, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def explain(cli, path, spec, env):
    """(whether the graph holds an NchwcConv, its variant or the Conv's)."""
    nodes = run(cli, path, spec, env, ["--explain", "--json"])["nodes"]
    conv = next(n for n in nodes if n["op"] in ("Conv", "NchwcConv"))
    return conv["op"] == "NchwcConv", conv["variant"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default="build/tools/onnxmini")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--only", nargs="*", default=[], help="layer names (e.g. 96x24_80) to run")
    ap.add_argument("--out", default="", help="CSV path (default benchmarks/results/nchwc_lone_<tag>.csv)")
    a = ap.parse_args()
    layers = [layer for layer in LAYERS if not a.only or name(layer) in a.only]
    if not layers:
        raise SystemExit(f"--only matched no layer; the layers: {' '.join(name(x) for x in LAYERS)}")
    isa = os.environ.get("ONNXMINI_ISA", "native")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for layer in layers:
            path, spec = make_model(layer, pathlib.Path(tmp))
            rule_blocked, _ = explain(a.cli, path, spec, {})
            _, nchw_variant = explain(a.cli, path, spec, {"ONNXMINI_NCHWC": "0"})
            _, blocked_variant = explain(a.cli, path, spec, {"ONNXMINI_NCHWC": "all"})
            for t in a.threads:
                timed = ["--threads", str(t), "--repeat", str(a.repeat), "--warmup", "3", "--warmup-ms", "200", "--json"]
                nchw, blocked, ratios = [], [], []
                for r in range(a.rounds):
                    sides = [("nchw", "0"), ("blocked", "all")][:: 1 if r % 2 == 0 else -1]
                    got = {side: run(a.cli, path, spec, {"ONNXMINI_NCHWC": v}, timed)["latency_ms"]["median"]
                           for side, v in sides}
                    nchw.append(got["nchw"])
                    blocked.append(got["blocked"])
                    ratios.append(got["nchw"] / got["blocked"])
                row = {"layer": name(layer), "intensity": round(intensity(layer)), "isa": isa, "threads": t,
                       "nchw_ms": round(statistics.median(nchw), 4), "blocked_ms": round(statistics.median(blocked), 4),
                       "ratio": round(statistics.median(ratios), 3), "rule": "blocked" if rule_blocked else "nchw",
                       "nchw_variant": nchw_variant, "blocked_variant": blocked_variant, "rounds": a.rounds,
                       "machine": machine_tag()}
                rows.append(row)
                print(",".join(str(v) for v in row.values()), flush=True)
    out = pathlib.Path(a.out) if a.out else HERE / "results" / f"nchwc_lone_{machine_tag()}.csv"
    write_rows(out, rows)


if __name__ == "__main__":
    main()
