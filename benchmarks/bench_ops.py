"""Memory-bound single ops, onnxmini vs onnxruntime, side by side in one run.

Each case is a one-node model (float32). Both runtimes are timed as in
bench_models.py (alternating rounds; onnxruntime in-process with all
optimizations, onnxmini through `onnxmini run --json`), at 1 and 2 threads.
Reported: median ms, the ratio onnxruntime / onnxmini (> 1: onnxmini faster),
and the effective bandwidth of onnxmini, (bytes read + bytes written) / time,
next to numpy's copy bandwidth for the same number of bytes (one read, one
write: what "close to memory bandwidth" is measured against).

    .venv/bin/python benchmarks/bench_ops.py [--repeat 50] [--rounds 3] [--threads 1 2] [--only Transpose]
        [--out benchmarks/results/ops.csv]
"""
import argparse
import csv
import os
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_models  # noqa: E402  (shared timing helpers)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def one_node(op, shapes, out_rank, attrs, opset=13):
    names = [f"X{i}" for i in range(len(shapes))]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)]
    out_type = TensorProto.INT64 if op in ("ArgMin", "ArgMax") else TensorProto.FLOAT
    y = helper.make_tensor_value_info("Y", out_type, [None] * out_rank)
    g = helper.make_graph([helper.make_node(op, names, ["Y"], **attrs)], op.lower(), inputs, [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


# (label, op, input shapes, output rank, attributes)
CASES = [
    ("Add 1024x1024 + 1024x1024", "Add", [(1024, 1024), (1024, 1024)], 2, {}),
    ("Add 100000x8 + 100000x1", "Add", [(100000, 8), (100000, 1)], 2, {}),
    ("Add 100000x8 + 8", "Add", [(100000, 8), (8,)], 2, {}),
    ("Mul 64x112x112 * 64x1x1", "Mul", [(64, 112, 112), (64, 1, 1)], 3, {}),
    ("Relu 1M", "Relu", [(1 << 20,)], 1, {}),
    ("Sqrt 800000", "Sqrt", [(800000,)], 1, {}),
    ("Exp 1M", "Exp", [(1 << 20,)], 1, {}),
    ("Sigmoid 1M", "Sigmoid", [(1 << 20,)], 1, {}),
    ("ReduceSum 1000x1000 axis 1", "ReduceSum", [(1000, 1000)], 2, {"keepdims": 1}),
    ("ReduceSumSquare 100000x20 axis 1", "ReduceSumSquare", [(100000, 20)], 2, {"axes": [1], "keepdims": 1}),
    ("ReduceMean 1x64x112x112 axes 2,3", "ReduceMean", [(1, 64, 112, 112)], 4, {"axes": [2, 3], "keepdims": 1}),
    ("ReduceMax 1x64x112x112 axis 1", "ReduceMax", [(1, 64, 112, 112)], 4, {"axes": [1], "keepdims": 1}),
    ("ArgMin 100000x8 axis 1", "ArgMin", [(100000, 8)], 1, {"axis": 1, "keepdims": 0}),
    ("ArgMax 1000x1000 axis 0", "ArgMax", [(1000, 1000)], 1, {"axis": 0, "keepdims": 0}),
    ("Softmax 512x10", "Softmax", [(512, 10)], 2, {"axis": -1}),
    ("Softmax 128x1000", "Softmax", [(128, 1000)], 2, {"axis": -1}),
    ("Transpose 1024x1024", "Transpose", [(1024, 1024)], 2, {"perm": [1, 0]}),
    ("Transpose 1x64x112x112 to NHWC", "Transpose", [(1, 64, 112, 112)], 4, {"perm": [0, 2, 3, 1]}),
    ("Transpose 8x64x56x56 perm 0,2,1,3", "Transpose", [(8, 64, 56, 56)], 4, {"perm": [0, 2, 1, 3]}),
]
# ReduceSum takes its axes as an input from opset 13: use opset 11 for it.
OPSET = {"ReduceSum": 11}


def copy_gbps(nbytes, repeat=50):
    """numpy's copy of nbytes/2 floats (read + write = nbytes), best of repeat."""
    n = max(1, nbytes // 8)
    a, b = np.ones(n, np.float32), np.empty(n, np.float32)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t0)
    return 2 * n * 4 / best / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "ops.csv"))
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, op, shapes, out_rank, attrs in CASES:
            if a.only and a.only not in label:
                continue
            path = os.path.join(tmp, f"{op}_{len(rows)}.onnx")
            onnx.save(one_node(op, shapes, out_rank, attrs, OPSET.get(op, 13)), path)
            feeds = {f"X{i}": rng.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
            import onnxruntime as ort
            out = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
            nbytes = sum(v.nbytes for v in feeds.values()) + out.nbytes
            copy = copy_gbps(nbytes)
            for t in a.threads:
                ort_ms, mini_ms, err = [], [], ""
                for _ in range(a.rounds):
                    ort_ms.append(bench_models.time_ort(path, feeds, t, a.repeat, a.warmup)["median"])
                    m, err = bench_models.time_onnxmini(path, feeds, t, a.repeat, a.warmup, tmp, 1)
                    if m is None:
                        break
                    mini_ms.append(m["median"])
                o, m = float(np.median(ort_ms)), (float(np.median(mini_ms)) if mini_ms else float("nan"))
                gbps = nbytes / (m * 1e-3) / 1e9
                rows.append({"op": label, "threads": t, "onnxruntime_ms": round(o, 4), "onnxmini_ms": round(m, 4),
                             "ratio_ort_over_onnxmini": round(o / m, 3), "bytes": nbytes,
                             "onnxmini_gbps": round(gbps, 2), "numpy_copy_gbps": round(copy, 2),
                             "load1": round(os.getloadavg()[0], 1), "note": err})
                print(f"{label:36s} T{t}  ort {o:8.4f} ms  mini {m:8.4f} ms  ratio {o / m:5.2f}  "
                      f"mini {gbps:6.1f} GB/s  (numpy copy {copy:5.1f} GB/s) {err}", flush=True)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    import onnxruntime
    print(f"\nonnxruntime {onnxruntime.__version__}; {os.cpu_count()} cores; load average {os.getloadavg()}")
    print("\n| op | threads | ort ms | onnxmini ms | ratio | onnxmini GB/s | numpy copy GB/s |\n|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['op']} | {r['threads']} | {r['onnxruntime_ms']} | {r['onnxmini_ms']} | "
              f"{r['ratio_ort_over_onnxmini']} | {r['onnxmini_gbps']} | {r['numpy_copy_gbps']} |")


if __name__ == "__main__":
    sys.exit(main())
