"""Markdown tables for docs/performance.md and docs/gemm.md from the raw results
in benchmarks/results/ (models.csv, ops.csv, gemm_sgemm.csv), so the docs show
exactly the measured numbers.

    .venv/bin/python benchmarks/make_tables.py [models|ops|gemm ...]
"""
import csv
import io
import os
import statistics
import sys
from collections import defaultdict

RES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def models():
    rows = list(csv.DictReader(open(os.path.join(RES, "models.csv"))))
    print("| model | threads | onnxruntime ms | onnxmini ms | ratio | ratio (min) | ratio (CPU) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['threads']} | {float(r['onnxruntime_ms']):.4g} | {float(r['onnxmini_ms']):.4g} "
              f"| **{float(r['ratio_ort_over_onnxmini']):.2f}** | {float(r['ratio_min']):.2f} | {float(r['ratio_cpu']):.2f} |")


def ops():
    rows = list(csv.DictReader(open(os.path.join(RES, "ops.csv"))))
    print("| op (float32) | threads | onnxruntime ms | onnxmini ms | ratio | onnxmini GB/s | numpy copy GB/s (1 thread) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['op']} | {r['threads']} | {float(r['onnxruntime_ms']):.4g} | {float(r['onnxmini_ms']):.4g} "
              f"| **{float(r['ratio_ort_over_onnxmini']):.2f}** | {float(r['onnxmini_gbps']):.1f} | {float(r['numpy_copy_gbps']):.1f} |")


def gemm():
    text = open(os.path.join(RES, "gemm_sgemm.csv")).read()
    body = text[text.index("name,iterations"):]
    g = defaultdict(list)
    for r in csv.DictReader(io.StringIO(body)):
        if r.get("error_occurred"):
            continue
        _, shape, backend, threads, _ = r["name"].strip('"').split("/")
        g[(shape, backend, threads)].append(float(r["GFLOPS"]))
    shapes = []
    for (shape, _, _) in g:
        if shape not in shapes:
            shapes.append(shape)
    cols = [("builtin", "T1"), ("openblas", "T1"), ("eigen", "T1"), ("builtin_avx2", "T1"), ("builtin", "T2"),
            ("openblas", "T2")]
    print("| shape | " + " | ".join(f"{b} {t}" for b, t in cols) + " | builtin / OpenBLAS T1 |")
    print("|---" * (len(cols) + 2) + "|")
    for s in shapes:
        med = {c: statistics.median(g[(s, *c)]) for c in cols if g.get((s, *c))}
        cells = [f"{med[c]:.0f}" if c in med else "" for c in cols]
        ratio = med[("builtin", "T1")] / med[("openblas", "T1")] if ("openblas", "T1") in med else float("nan")
        print(f"| {s} | " + " | ".join(cells) + f" | {ratio:.0%} |")


if __name__ == "__main__":
    for what in sys.argv[1:] or ["models", "ops", "gemm"]:
        {"models": models, "ops": ops, "gemm": gemm}[what]()
        print()
