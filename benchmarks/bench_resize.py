"""Resize, onnxmini vs onnxruntime, side by side: the detector upsampling cases.

One-node float32 models: 2x nearest (YOLO neck shapes), 2x bilinear (PP-OCR
detection neck) and a non-integer bilinear resize. Per case, thread count and
ONNXMINI_ISA level, the rounds alternate onnxruntime, onnxmini's fast kernels
and onnxmini's reference kernels (`--kernels reference`: the general separable
path every case took before the fast paths); each time is a median over
--repeat runs; reported are the medians over rounds of the times and of the
per-round ratios. Ratios > 1: onnxmini faster.

    .venv/bin/python benchmarks/bench_resize.py [--repeat 50] [--rounds 5] [--threads 1 2]
        [--isas avx2 avx512] [--out benchmarks/results/resize_<machine>.csv]
"""
import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_models  # noqa: E402  (shared timing helpers)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def resize_model(shape, scales=None, sizes=None, **attrs):
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None] * len(shape))
    inits, inputs = [], ["X", ""]
    if scales is not None:
        inits.append(helper.make_tensor("scales", TensorProto.FLOAT, [len(scales)], scales))
        inputs.append("scales")
    else:
        inits.append(helper.make_tensor("sizes", TensorProto.INT64, [len(sizes)], sizes))
        inputs += ["", "sizes"]
    node = helper.make_node("Resize", inputs, ["Y"], **attrs)
    g = helper.make_graph([node], "resize", [x], [y], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


NEAREST = {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
LINEAR = {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}
# (label, input shape, scales, sizes, attributes)
CASES = [
    ("nearest 2x 1x256x40x40", (1, 256, 40, 40), [1, 1, 2, 2], None, NEAREST),
    ("nearest 2x 1x128x80x80", (1, 128, 80, 80), [1, 1, 2, 2], None, NEAREST),
    ("bilinear 2x 1x64x160x160", (1, 64, 160, 160), [1, 1, 2, 2], None, LINEAR),
    ("bilinear 1x64x120x160 to 200x280", (1, 64, 120, 160), None, [1, 64, 200, 280], LINEAR),
]


def time_mini(path, x_path, threads, repeat, warmup, isa, kernels):
    args = [bench_models.CLI, "run", path, "--json", "--threads", str(threads), "--repeat", str(repeat),
            "--warmup", str(warmup), "--warmup-ms", str(bench_models.WARMUP_S * 1e3), "--kernels", kernels,
            "--input", f"X={x_path}"]
    r = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, ONNXMINI_ISA=isa))
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout)["latency_ms"]["median"]


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--isas", nargs="+", default=["avx2", "avx512"])
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "resize.csv"))
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    machine = f"{cpu_name()}, {os.cpu_count()} cores"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, shape, scales, sizes, attrs in CASES:
            if a.only and a.only not in label:
                continue
            path = os.path.join(tmp, f"resize_{len(rows)}.onnx")
            onnx.save(resize_model(shape, scales, sizes, **attrs), path)
            x = rng.standard_normal(shape).astype(np.float32)
            x_path = os.path.join(tmp, "x.npy")
            np.save(x_path, x)
            feeds = {"X": x}
            for t in a.threads:
                for isa in a.isas:
                    ort_ms, fast_ms, ref_ms = [], [], []
                    for _ in range(a.rounds):
                        ort_ms.append(bench_models.time_ort(path, feeds, t, a.repeat, a.warmup)["median"])
                        fast_ms.append(time_mini(path, x_path, t, a.repeat, a.warmup, isa, "fast"))
                        ref_ms.append(time_mini(path, x_path, t, a.repeat, a.warmup, isa, "reference"))
                    o, f, r = (float(np.median(v)) for v in (ort_ms, fast_ms, ref_ms))
                    # Ratios per round (the three runs of a round share the machine's state), then the median.
                    ratio = float(np.median([x / y for x, y in zip(ort_ms, fast_ms)]))
                    speedup = float(np.median([x / y for x, y in zip(ref_ms, fast_ms)]))
                    rows.append({"case": label, "threads": t, "isa": isa, "onnxruntime_ms": round(o, 4),
                                 "onnxmini_ms": round(f, 4), "onnxmini_general_ms": round(r, 4),
                                 "ratio_ort_over_onnxmini": round(ratio, 3),
                                 "speedup_over_general": round(speedup, 2), "rounds": a.rounds, "repeat": a.repeat,
                                 "machine": machine, "load1": round(os.getloadavg()[0], 1)})
                    print(f"{label:34s} T{t} {isa:7s} ort {o:8.3f} ms  mini {f:8.3f} ms  general {r:8.3f} ms  "
                          f"ort/mini {ratio:5.2f}  general/mini {speedup:5.1f}", flush=True)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    import onnxruntime
    print(f"\n{machine}; onnxruntime {onnxruntime.__version__}; load average {os.getloadavg()}")
    print("\n| case | threads | ISA | onnxruntime ms | onnxmini ms | ort / onnxmini | onnxmini general ms |"
          "\n|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['threads']} | {r['isa']} | {r['onnxruntime_ms']} | {r['onnxmini_ms']} | "
              f"{r['ratio_ort_over_onnxmini']} | {r['onnxmini_general_ms']} |")


if __name__ == "__main__":
    sys.exit(main())
