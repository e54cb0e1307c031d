"""Per-call cost of the Python APIs on the seed's example: LinearRegression, 10 features,
a batch of 1000 rows (not a test; run by hand).

    .venv/bin/python benchmarks/bench_api.py [--repeat 2000] [--csv benchmarks/results/api_linear_regression.csv]

Measures, per call: scikit-learn predict, onnxruntime run, onnxruntime with io
binding, onnxmini run, onnxmini with io binding. Both runtimes use 1 intra-op
thread (onnxruntime: graph optimizations on, its default). Each call is timed on
its own (time.perf_counter_ns); the table reports mean, standard deviation, min
median, min and max in microseconds. Prints a markdown table (docs/python.md holds one).
"""
import argparse
import csv
import os
import platform
import statistics
import time

import numpy as np
import onnxruntime as ort
from skl2onnx import to_onnx
from sklearn.datasets import make_regression
from sklearn.linear_model import LinearRegression

import onnxmini


def timed(fn, repeat, warmup=50):
    for _ in range(warmup):
        fn()
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn()
        t.append((time.perf_counter_ns() - t0) / 1e3)
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--csv", default=os.path.join(os.path.dirname(__file__), "results", "api_linear_regression.csv"))
    a = ap.parse_args()

    X, y = make_regression(a.rows, 10, random_state=0)
    X = X.astype(np.float32)
    model = LinearRegression().fit(X, y)
    onx = to_onnx(model, X[:1], target_opset={"": 17, "ai.onnx.ml": 3}).SerializeToString()

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    s_ort = ort.InferenceSession(onx, so, providers=["CPUExecutionProvider"])
    mini_so = onnxmini.SessionOptions()
    mini_so.intra_op_num_threads = 1  # as onnxruntime's above (the Python default is 0: one per hardware thread)
    s_mini = onnxmini.InferenceSession(onx, mini_so)
    name = s_ort.get_inputs()[0].name
    out = s_ort.get_outputs()[0].name

    ref = s_ort.run(None, {name: X})[0]
    got = s_mini.run(None, {name: X})[0]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-3 * np.abs(ref).max() * 1e-3)

    b_ort = s_ort.io_binding()
    b_ort.bind_cpu_input(name, X)
    b_ort.bind_output(out, "cpu")

    b_mini = s_mini.io_binding()
    b_mini.bind_input(name, X)
    out_arr = np.empty_like(got)
    b_mini.bind_output(out, out_arr)

    cases = [
        ("sklearn predict", lambda: model.predict(X)),
        ("onnxruntime run", lambda: s_ort.run(None, {name: X})),
        ("onnxruntime io binding", lambda: s_ort.run_with_iobinding(b_ort)),
        ("onnxmini run", lambda: s_mini.run(None, {name: X})),
        ("onnxmini io binding", lambda: s_mini.run_with_iobinding(b_mini)),
    ]
    rows = []
    for label, fn in cases:
        t = timed(fn, a.repeat)
        rows.append({"api": label, "mean_us": statistics.fmean(t), "std_us": statistics.pstdev(t),
                     "median_us": statistics.median(t),
                     "min_us": min(t), "max_us": max(t), "calls": a.repeat})
    np.testing.assert_allclose(out_arr, ref, rtol=1e-4, atol=1e-3)

    os.makedirs(os.path.dirname(a.csv), exist_ok=True)
    with open(a.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.2f}" if isinstance(v, float) else v) for k, v in r.items()})
    print(f"LinearRegression, {a.rows}x10 float32, {a.repeat} calls each; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cpus, onnxruntime {ort.__version__}, onnxmini {onnxmini.__version__}")
    print("| API | mean (us) | std (us) | median (us) | min (us) | max (us) |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['api']} | {r['mean_us']:.1f} | {r['std_us']:.1f} | {r['median_us']:.1f} | {r['min_us']:.1f} | {r['max_us']:.1f} |")


if __name__ == "__main__":
    main()
