#!/usr/bin/env python3
"""Einsum benchmark, one thread, side by side in one run:

  onnxmini  (CLI `einsum --bench`: the Einsum node through a session, and the exported graph)
  numpy.einsum (default optimize=False, as the seed notebook measured it)
  onnxruntime's Einsum (one-node model)
  the exported graph under onnxruntime

Writes raw medians to benchmarks/results/einsum_<tag>.csv and prints a markdown table.
Usage: bench_einsum.py [--cli PATH] [--repeat N] [--tag NAME] [--quick]
"""
import argparse
import csv
import glob
import json
import os
import platform
import subprocess
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cases(quick):
    ns = [8, 32, 128, 512] if quick else [8, 16, 32, 64, 128, 256, 512]
    out = [("bsnh,btnh->bnts", [(20, 20, 20, 20), (20, 20, 20, 20)])]
    out += [("bsnh,btnh->bnts", [(2, n, 12, 64), (2, n, 12, 64)]) for n in ns]
    out += [("bhqd,bhkd->bhqk", [(2, 12, n, 64), (2, 12, n, 64)]) for n in ns]
    out += [("bhqk,bhkd->bhqd", [(2, 12, n, n), (2, 12, n, 64)]) for n in ns]
    return out


def median_us(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
    return float(np.median(times))


def ort_session(model_bytes):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def einsum_model(eq, shapes, out_shape):
    inputs = [helper.make_tensor_value_info(f"in{i}", TensorProto.FLOAT, s) for i, s in enumerate(shapes)]
    node = helper.make_node("Einsum", [f"in{i}" for i in range(len(shapes))], ["out"], equation=eq)
    graph = helper.make_graph([node], "einsum", inputs, [helper.make_tensor_value_info("out", TensorProto.FLOAT, out_shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return model.SerializeToString()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.environ.get("ONNXMINI_CLI"))
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--tag", default=platform.node() or "local")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    cli = args.cli or max(glob.glob(os.path.join(ROOT, "build*", "tools", "onnxmini")), key=os.path.getmtime)
    rows = []
    tmp = tempfile.mkdtemp()
    for eq, shapes in cases(args.quick):
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        expected = np.einsum(eq, *arrays)
        shape_arg = ",".join("x".join(str(d) for d in s) for s in shapes)
        graph_path = os.path.join(tmp, "g.onnx")
        res = subprocess.run([cli, "einsum", eq, "--shapes", shape_arg, "--bench", "--json", "--quiet", "--threads", "1",
                              "--repeat", str(args.repeat), "--export", graph_path], capture_output=True, text=True, check=True)
        bench = json.loads(res.stdout)["bench"]
        summary = json.loads(res.stdout)["summary"]
        feeds = {f"in{i}": a for i, a in enumerate(arrays)}
        numpy_us = median_us(lambda: np.einsum(eq, *arrays), max(5, args.repeat // 3))
        s_ort = ort_session(einsum_model(eq, shapes, list(expected.shape)))
        ort_us = median_us(lambda: s_ort.run(None, feeds), args.repeat)
        s_graph = ort_session(open(graph_path, "rb").read())
        got = s_graph.run(None, feeds)[0]
        assert np.allclose(got, expected, rtol=1e-4, atol=1e-3), "exported graph disagrees with numpy"
        ort_graph_us = median_us(lambda: s_graph.run(None, feeds), args.repeat)
        row = {
            "equation": eq, "shapes": shape_arg,
            "onnxmini_node_us": round(bench["node_median_us"], 2),
            "onnxmini_direct_us": round(bench["direct_median_us"], 2),
            "onnxmini_graph_us": round(bench["graph_median_us"], 2) if not bench["graph_error"] else "",
            "numpy_us": round(numpy_us, 2), "ort_einsum_us": round(ort_us, 2), "ort_graph_us": round(ort_graph_us, 2),
            "plan": summary,
        }
        row["x_vs_ort"] = round(ort_us / bench["node_median_us"], 2)
        row["x_vs_numpy"] = round(numpy_us / bench["node_median_us"], 2)
        rows.append(row)
        print(f"{eq:18s} {shape_arg:28s} onnxmini {row['onnxmini_node_us']:>9} us  numpy {row['numpy_us']:>10} us  "
              f"ort {row['ort_einsum_us']:>9} us  ort(graph) {row['ort_graph_us']:>9} us", flush=True)
    os.makedirs(os.path.join(ROOT, "benchmarks", "results"), exist_ok=True)
    path = os.path.join(ROOT, "benchmarks", "results", f"einsum_{args.tag}.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"\nraw results: {path}\n")
    print("| equation | shapes | onnxmini (Einsum node) | onnxmini exported graph | numpy.einsum | onnxruntime Einsum | "
          "exported graph on onnxruntime | vs ort | vs numpy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| `{r['equation']}` | {r['shapes']} | {r['onnxmini_node_us']} | {r['onnxmini_graph_us'] or 'n/a'} | "
              f"{r['numpy_us']} | {r['ort_einsum_us']} | {r['ort_graph_us']} | {r['x_vs_ort']}x | {r['x_vs_numpy']}x |")
    print(f"\nmachine: {platform.processor() or platform.machine()}, onnxruntime {ort.__version__}, numpy {np.__version__}, "
          f"onnx {onnx.__version__}")


if __name__ == "__main__":
    main()
