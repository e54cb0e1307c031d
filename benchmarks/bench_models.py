"""Whole-model latency, onnxmini vs onnxruntime, side by side in one run.

For each model and thread count: onnxruntime (all graph optimizations on) timed
in-process with session.run, onnxmini timed by `onnxmini run --json --optimize N`
(graph fusions on by default, level 1; the median of its timed runs; session
creation and process start excluded on both sides; both warm up for at least
--warmup runs and 0.3 s). The machine is shared, so
the two are measured alternately for --rounds rounds and each side reports the
median of its per-round medians. Reports the ratio onnxruntime / onnxmini
(> 1: onnxmini faster). onnxruntime's figure includes the Python call overhead
of session.run (a few microseconds), onnxmini's is the C++ Session::run call.

    .venv/bin/python benchmarks/bench_models.py [--repeat 200] [--rounds 3] [--threads 1 2] [--optimize 1]
        [--only small] [--out benchmarks/results/models.csv]
"""
import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Both runtimes warm up for at least --warmup runs and WARMUP_S seconds: a new
# process's (or session's) pool threads may start on one core, and the OS takes
# tens of milliseconds to spread them; timed runs should see the steady state.
WARMUP_S = 0.3
CLI = os.path.join(os.environ.get("ONNXMINI_BUILD_DIR", os.path.join(ROOT, "build")), "tools", "onnxmini")


def gemm_concat_models(n, tmp):
    """The seed's pair: Gemm+Gemm+Concat vs Concat(weights)+one Gemm, both N x N."""
    rng = np.random.default_rng(0)
    w1, w2 = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    b1, b2 = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [n, n])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n, 2 * n])
    inits = [numpy_helper.from_array(a, name) for a, name in [(w1, "W1"), (w2, "W2"), (b1, "B1"), (b2, "B2")]]
    two = helper.make_graph(
        [helper.make_node("Gemm", ["X", "W1", "B1"], ["G1"]), helper.make_node("Gemm", ["X", "W2", "B2"], ["G2"]),
         helper.make_node("Concat", ["G1", "G2"], ["Y"], axis=1)], "gemm_gemm_concat", [x], [y], inits)
    one = helper.make_graph(
        [helper.make_node("Concat", ["W1", "W2"], ["W"], axis=1), helper.make_node("Concat", ["B1", "B2"], ["B"], axis=0),
         helper.make_node("Gemm", ["X", "W", "B"], ["Y"])], "concat_gemm", [x], [y], inits)
    paths = []
    for g in (two, one):
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        p = os.path.join(tmp, f"{g.name}_{n}.onnx")
        onnx.save(m, p)
        paths.append(p)
    return paths


def cases(tmp):
    rng = np.random.default_rng(1)
    out = []
    small = os.path.join(ROOT, "..", "shared", "models", "small.onnx")
    if os.path.exists(small):
        out.append(("small.onnx [1,3,112,112]", small, {"input": rng.standard_normal((1, 3, 112, 112)).astype(np.float32)}))
    km = os.path.join(ROOT, "models", "kmeans.onnx")
    if os.path.exists(km):
        name = onnx.load(km).graph.input[0].name
        out.append(("kmeans 100000x20", km, {name: rng.standard_normal((100000, 20)).astype(np.float32)}))
    lr = os.path.join(ROOT, "models", "linear_regression.onnx")
    if os.path.exists(lr):
        g = onnx.load(lr).graph.input[0]
        feats = g.type.tensor_type.shape.dim[1].dim_value
        out.append(("linear_regression 1000x%d" % feats, lr, {g.name: rng.standard_normal((1000, feats)).astype(np.float32)}))
    mlp = os.path.join(ROOT, "models", "mlp_gemm.onnx")
    if os.path.exists(mlp):
        g = onnx.load(mlp).graph.input[0]
        feats = g.type.tensor_type.shape.dim[1].dim_value
        out.append(("mlp 512x%d" % feats, mlp, {g.name: rng.standard_normal((512, feats)).astype(np.float32)}))
    for n in (256, 512, 1024):
        a, b = gemm_concat_models(n, tmp)
        x = {"X": rng.standard_normal((n, n)).astype(np.float32)}
        out.append((f"gemm+gemm+concat {n}", a, x))
        out.append((f"concat+gemm {n}", b, x))
    return out


def time_ort(path, feeds, threads, repeat, warmup):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    t_end, k = time.perf_counter() + WARMUP_S, 0
    while k < warmup or time.perf_counter() < t_end:  # same warm-up rule as onnxmini's --warmup-ms
        s.run(None, feeds)
        k += 1
    ts = []
    c0 = time.process_time()  # CPU time over the whole loop, as onnxmini's cpu_ms.mean
    for _ in range(repeat):
        t0 = time.perf_counter()
        s.run(None, feeds)
        ts.append((time.perf_counter() - t0) * 1e3)
    cpu = (time.process_time() - c0) * 1e3 / repeat
    return {"median": float(np.median(ts)), "min": float(np.min(ts)), "cpu": cpu}


def time_onnxmini(path, feeds, threads, repeat, warmup, tmp, optimize):
    args = [CLI, "run", path, "--json", "--threads", str(threads), "--repeat", str(repeat), "--warmup", str(warmup),
            "--warmup-ms", str(WARMUP_S * 1e3),
            "--optimize", str(optimize)]
    for name, arr in feeds.items():
        p = os.path.join(tmp, f"feed_{abs(hash(name))}_{os.getpid()}.npy")
        np.save(p, arr)
        args += ["--input", f"{name}={p}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    j = json.loads(r.stdout)
    return {"median": j["latency_ms"]["median"], "min": j["latency_ms"]["min"], "cpu": j["cpu_ms"]["mean"]}, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=3, help="alternating onnxruntime / onnxmini rounds per case")
    ap.add_argument("--optimize", type=int, default=1, help="onnxmini graph optimization level")
    ap.add_argument("--only", default="", help="run only the cases whose label contains this text")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "models.csv"))
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, path, feeds in cases(tmp):
            if a.only and a.only not in label:
                continue
            for t in a.threads:
                ort_r, mini_r, err = [], [], ""
                for _ in range(a.rounds):
                    ort_r.append(time_ort(path, feeds, t, a.repeat, a.warmup))
                    m, err = time_onnxmini(path, feeds, t, a.repeat, a.warmup, tmp, a.optimize)
                    if m is None:
                        break
                    mini_r.append(m)
                med = lambda rs, k: float(np.median([r[k] for r in rs])) if rs else float("nan")
                ort_ms, mini_ms = med(ort_r, "median"), med(mini_r, "median")
                ort_min, mini_min = min(r["min"] for r in ort_r), (min(r["min"] for r in mini_r) if mini_r else float("nan"))
                ort_cpu, mini_cpu = med(ort_r, "cpu"), med(mini_r, "cpu")
                ratio = ort_ms / mini_ms
                load = os.getloadavg()[0]
                rows.append({"model": label, "threads": t, "onnxruntime_ms": round(ort_ms, 4),
                             "onnxmini_ms": round(mini_ms, 4), "ratio_ort_over_onnxmini": round(ratio, 3),
                             "onnxruntime_min_ms": round(ort_min, 4), "onnxmini_min_ms": round(mini_min, 4),
                             "ratio_min": round(ort_min / mini_min, 3),
                             "onnxruntime_cpu_ms": round(ort_cpu, 4), "onnxmini_cpu_ms": round(mini_cpu, 4),
                             "ratio_cpu": round(ort_cpu / mini_cpu, 3),
                             "load1": round(load, 1), "note": err})
                print(f"{label:32s} threads={t}  median ort {ort_ms:9.3f} mini {mini_ms:9.3f} ratio {ratio:5.2f} | "
                      f"min ort {ort_min:8.3f} mini {mini_min:8.3f} ratio {ort_min / mini_min:5.2f} | "
                      f"cpu ort {ort_cpu:8.3f} mini {mini_cpu:8.3f} ratio {ort_cpu / mini_cpu:5.2f} | load {load:.1f} {err}",
                      flush=True)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    import onnxruntime
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    print(f"\nmachine: {cpu}, {os.cpu_count()} cores; onnxruntime {onnxruntime.__version__}; repeat {a.repeat} x "
          f"{a.rounds} rounds; onnxmini --optimize {a.optimize}; load average now {os.getloadavg()}")
    print("\n| model | threads | ort median ms | onnxmini median ms | ratio | ort min ms | onnxmini min ms | ratio min "
          "| ort CPU ms | onnxmini CPU ms | ratio CPU | load |\n|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['threads']} | {r['onnxruntime_ms']} | {r['onnxmini_ms']} | {r['ratio_ort_over_onnxmini']} "
              f"| {r['onnxruntime_min_ms']} | {r['onnxmini_min_ms']} | {r['ratio_min']} | {r['onnxruntime_cpu_ms']} "
              f"| {r['onnxmini_cpu_ms']} | {r['ratio_cpu']} | {r['load1']} |")


if __name__ == "__main__":
    sys.exit(main())
