#!/usr/bin/env python3
"""Einsum benchmark, one thread, side by side in one run:

  onnxmini  (CLI `einsum --bench`: the Einsum node through a session, and the exported graph)
  numpy.einsum (default optimize=False, as the seed notebook measured it)
  numpy.matmul on strided views of the operands (batched products only: the issue's "numpy's matmul on the
    same strided views"; numpy's BLAS held to one thread)
  onnxruntime's Einsum (one-node model)
  the exported graph under onnxruntime

--isa picks onnxmini's kernels (ONNXMINI_ISA for the CLI: avx512, avx2, portable); onnxruntime and numpy.einsum
keep theirs. With --isa avx2, numpy's OpenBLAS (DYNAMIC_ARCH) is held to its Haswell (AVX2) kernels through
OPENBLAS_CORETYPE, so the "numpy.matmul on views" column compares like with like (the CSV's numpy_blas_core).
--rounds N repeats every row N times, methods interleaved, and reports the median over rounds.

Writes raw medians to benchmarks/results/einsum_<tag>.csv and prints a markdown table.
Usage: bench_einsum.py [--cli PATH] [--repeat N] [--rounds N] [--isa ISA] [--tag NAME] [--quick]
"""
import os
import sys

# numpy's bundled BLAS would use every core for matmul: one thread, as every other column.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# OpenBLAS reads its core type when numpy loads it: decide before the import (see --isa above).
if "--isa=avx2" in sys.argv or any(a == "--isa" and b == "avx2" for a, b in zip(sys.argv, sys.argv[1:])):
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

import argparse
import csv
import glob
import json
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


def matmul_on_views(eq, arrays):
    """numpy.matmul on transposed views computing `eq`, or None when `eq` is not a batched
    product with one free letter per operand and one contracted letter (the result stays a
    view in the output's letter order, as an einsum kernel reading strided operands would)."""
    lhs, out = eq.split("->")
    a, b = lhs.split(",")
    if len(set(a)) != len(a) or len(set(b)) != len(b) or len(arrays) != 2:
        return None
    batch = [c for c in a if c in b and c in out]
    contr = [c for c in a if c in b and c not in out]
    free_a = [c for c in a if c not in b]
    free_b = [c for c in b if c not in a]
    if len(contr) != 1 or len(free_a) != 1 or len(free_b) != 1 or sorted(out) != sorted(batch + free_a + free_b):
        return None
    perm_a = [a.index(c) for c in batch + free_a + contr]
    perm_b = [b.index(c) for c in batch + contr + free_b]
    got = "".join(batch + free_a + free_b)
    perm_out = [got.index(c) for c in out]
    va, vb = arrays[0].transpose(perm_a), arrays[1].transpose(perm_b)
    return lambda: np.matmul(va, vb).transpose(perm_out)


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
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--isa", choices=["avx512", "avx2", "portable"], help="onnxmini's kernels (ONNXMINI_ISA)")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.isa:
        env["ONNXMINI_ISA"] = args.isa
    cli = args.cli or max(glob.glob(os.path.join(ROOT, "build*", "tools", "onnxmini")), key=os.path.getmtime)
    rows = []
    tmp = tempfile.mkdtemp()
    for eq, shapes in cases(args.quick):
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        expected = np.einsum(eq, *arrays)
        shape_arg = ",".join("x".join(str(d) for d in s) for s in shapes)
        graph_path = os.path.join(tmp, "g.onnx")
        feeds = {f"in{i}": a for i, a in enumerate(arrays)}
        s_ort = ort_session(einsum_model(eq, shapes, list(expected.shape)))
        views = matmul_on_views(eq, arrays)
        if views is not None:
            assert np.allclose(views(), expected, rtol=1e-4, atol=1e-3), "numpy matmul views disagree with einsum"
        per_round = {k: [] for k in ("node", "direct", "graph", "numpy", "matmul", "ort", "ort_graph")}
        for _ in range(args.rounds):
            res = subprocess.run([cli, "einsum", eq, "--shapes", shape_arg, "--bench", "--json", "--quiet", "--threads",
                                  "1", "--repeat", str(args.repeat), "--export", graph_path], capture_output=True,
                                 text=True, check=True, env=env)
            bench = json.loads(res.stdout)["bench"]
            summary = json.loads(res.stdout)["summary"]
            per_round["node"].append(bench["node_median_us"])
            per_round["direct"].append(bench["direct_median_us"])
            per_round["graph"].append(None if bench["graph_error"] else bench["graph_median_us"])
            per_round["numpy"].append(median_us(lambda: np.einsum(eq, *arrays), max(5, args.repeat // 3)))
            per_round["matmul"].append(median_us(views, args.repeat) if views else None)
            per_round["ort"].append(median_us(lambda: s_ort.run(None, feeds), args.repeat))
            s_graph = ort_session(open(graph_path, "rb").read())
            got = s_graph.run(None, feeds)[0]
            assert np.allclose(got, expected, rtol=1e-4, atol=1e-3), "exported graph disagrees with numpy"
            per_round["ort_graph"].append(median_us(lambda: s_graph.run(None, feeds), args.repeat))
        med = {k: (float(np.median(v)) if None not in v else None) for k, v in per_round.items()}
        ratio = lambda other: float(np.median([o / n for o, n in zip(per_round[other], per_round["node"])]))
        row = {
            "equation": eq, "shapes": shape_arg,
            "isa": args.isa or "default", "rounds": args.rounds,
            "onnxmini_node_us": round(med["node"], 2),
            "onnxmini_direct_us": round(med["direct"], 2),
            "onnxmini_graph_us": round(med["graph"], 2) if med["graph"] is not None else "",
            "numpy_us": round(med["numpy"], 2),
            "numpy_matmul_views_us": round(med["matmul"], 2) if med["matmul"] is not None else "",
            "ort_einsum_us": round(med["ort"], 2), "ort_graph_us": round(med["ort_graph"], 2),
            "plan": summary,
            "numpy_blas_core": os.environ.get("OPENBLAS_CORETYPE", "auto"),
        }
        row["x_vs_ort"] = round(ratio("ort"), 2)
        row["x_vs_numpy"] = round(ratio("numpy"), 2)
        row["x_vs_numpy_matmul"] = round(ratio("matmul"), 2) if med["matmul"] is not None else ""
        rows.append(row)
        print(f"{eq:18s} {shape_arg:28s} onnxmini {row['onnxmini_node_us']:>9} us  numpy {row['numpy_us']:>10} us  "
              f"matmul {row['numpy_matmul_views_us']:>9} us  ort {row['ort_einsum_us']:>9} us  "
              f"ort(graph) {row['ort_graph_us']:>9} us", flush=True)
    os.makedirs(os.path.join(ROOT, "benchmarks", "results"), exist_ok=True)
    path = os.path.join(ROOT, "benchmarks", "results", f"einsum_{args.tag}.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"\nraw results: {path}\n")
    print("| equation | shapes | onnxmini (Einsum node) | onnxmini exported graph | numpy.einsum | numpy.matmul on views | "
          "onnxruntime Einsum | exported graph on onnxruntime | vs ort | vs numpy | vs numpy matmul |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        mm = f"{r['x_vs_numpy_matmul']}x" if r["x_vs_numpy_matmul"] != "" else "n/a"
        print(f"| `{r['equation']}` | {r['shapes']} | {r['onnxmini_node_us']} | {r['onnxmini_graph_us'] or 'n/a'} | "
              f"{r['numpy_us']} | {r['numpy_matmul_views_us'] or 'n/a'} | {r['ort_einsum_us']} | {r['ort_graph_us']} | "
              f"{r['x_vs_ort']}x | {r['x_vs_numpy']}x | {mm} |")
    print(f"\nmachine: {platform.processor() or platform.machine()}, onnxruntime {ort.__version__}, numpy {np.__version__}, "
          f"onnx {onnx.__version__}, numpy BLAS core {os.environ.get('OPENBLAS_CORETYPE', 'auto')}")


if __name__ == "__main__":
    main()
