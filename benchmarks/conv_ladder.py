#!/usr/bin/env python3
"""The convolution ladder (docs/kernels/conv-ladder.md): one 3x3 layer (64 -> 64
channels, 56x56, pad 1; scripts/learn_models.py) timed through every Conv path,
forced with ONNXMINI_CONV_VARIANT (kernels/nn/conv_variant.h): the reference loops,
im2col + GEMM, the implicit GEMM, the direct loops and conv2d_lanes. Each round runs
every path once (`onnxmini run --repeat R --warmup W --json`), so load on a shared
machine hits all paths alike; the table gives medians over rounds. Every path's
kernel_variant is checked in a profile first, so a row cannot silently time another path.

Usage: .venv/bin/python benchmarks/conv_ladder.py [--rounds 5] [--build-dir build]
"""
import argparse
import csv
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import learn_models  # noqa: E402

# (row, ONNXMINI_CONV_VARIANT, extra CLI args, kernel_variant expected in the profile)
STEPS = [
    ("reference loops", None, ["--kernels", "reference"], "reference"),  # every reference kernel reports "reference"
    ("im2col + GEMM", "im2col", [], "conv2d_im2col"),
    ("implicit GEMM", "implicit", [], "conv2d_implicit_gemm"),
    ("direct loops", "direct", [], "conv2d_direct"),
    ("lanes", "lanes", [], "conv2d_lanes"),  # AVX-512 or AVX2, whichever the machine has
]


def run(cli, model, variant, extra, repeat, warmup, profile=None):
    env = dict(os.environ)
    env.pop("ONNXMINI_CONV_VARIANT", None)
    if variant:
        env["ONNXMINI_CONV_VARIANT"] = variant
    # --optimize 2: the plain NCHW layout, where ONNXMINI_CONV_VARIANT chooses the path (at the default
    # level a lone heavy Conv runs blocked: docs/optimizer.md nchwc_layout).
    cmd = [cli, "run", model, "--optimize", "2", "--repeat", str(repeat), "--warmup", str(warmup), "--json"] + extra
    if profile:
        cmd += ["--profile", profile]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)["latency_ms"]["median"]


def variant_in_profile(cli, model, variant, extra, tmp):
    prefix = os.path.join(tmp, "p_" + (variant or "reference"))
    run(cli, model, variant, extra, 1, 0, profile=prefix)
    trace = json.load(open(glob.glob(prefix + "*.json")[0]))
    return {e["args"].get("kernel_variant") for e in trace if e.get("name", "").endswith("kernel_time")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--out", default="benchmarks/results/conv_ladder_xeon_avx512_2core.csv")
    a = ap.parse_args()
    cli = os.path.join(a.build_dir, "tools", "onnxmini")
    tmp = tempfile.mkdtemp(prefix="conv_ladder_")
    model = os.path.join(tmp, "conv3x3_64.onnx")
    import onnx
    onnx.save(learn_models.conv(), model)
    flops = 2.0 * 64 * 56 * 56 * 64 * 9
    for row, variant, extra, want in STEPS:
        got = variant_in_profile(cli, model, variant, extra, tmp)
        if got != {want}:
            sys.exit(f"{row}: ONNXMINI_CONV_VARIANT={variant} ran {got}, expected {want}")
    records = []
    for rnd in range(a.rounds):
        load = os.getloadavg()[0]
        for row, variant, extra, _ in STEPS:
            ref = variant is None
            ms = run(cli, model, variant, extra, 1 if ref else 30, 0 if ref else 5)
            records.append({"round": rnd, "row": row, "variant": variant or "reference", "median_ms": f"{ms:.4f}",
                            "gflops": f"{flops / ms / 1e6:.2f}", "load1": f"{load:.2f}"})
        print(f"round {rnd + 1}/{a.rounds} done (load {load:.2f})", file=sys.stderr)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(records[0].keys()))
        w.writeheader()
        w.writerows(records)
    loads = [float(r["load1"]) for r in records]
    print(f"layer: Conv 3x3, 64 -> 64 channels, 56x56, pad 1, 1 thread ({flops / 1e9:.2f} GFLOP); "
          f"load average {min(loads):.1f}..{max(loads):.1f}; {a.rounds} rounds, medians\n")
    print("| step | ms | GFLOPS | x previous row |")
    print("|---|---|---|---|")
    prev = None
    for row, *_ in STEPS:
        ms = statistics.median(float(r["median_ms"]) for r in records if r["row"] == row)
        ratio = f"{prev / ms:.1f}x" if prev else ""
        print(f"| {row} | {ms:.3f} | {flops / ms / 1e6:.1f} | {ratio} |")
        prev = ms


if __name__ == "__main__":
    main()
