#!/usr/bin/env python3
"""Python call overhead of onnxmini.einsum, one thread, against

  the C++ call einsum() itself   (`onnxmini einsum --bench --json`: direct_median_us)
  the bare binding               (onnxmini._onnxmini.einsum.einsum: no Python wrapper)
  numpy.einsum(optimize=True)    (numpy's path search, then BLAS where it can)
  numpy.einsum()                 (numpy's default optimize=False)
  onnxruntime's Einsum           (one-node model, InferenceSession.run)

Small shapes are overhead-dominated (8x8 matmul); `bsnh,btnh->bnts` is the issue's
equation at a few sizes. The machine is shared, so every method is timed in each of
--rounds interleaved rounds (per method and round: the median of 7 batch means), and the
median over rounds is reported; the CLI's own median comes from a run per round too.
Raw CSV: benchmarks/results/einsum_python_<machine-tag>.csv.
Usage: bench_einsum_python.py [--cli PATH] [--rounds N] [--tag NAME]
"""
import argparse
import csv
import datetime
import glob
import json
import os
import subprocess
import sys
import time

import numpy as np

import onnxmini

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from bench_einsum import einsum_model, ort_session  # noqa: E402  (same one-node model and session options)
from bench_zoo import cpu_name, machine_tag, widest_isa  # noqa: E402  (one machine tag for every benchmark)

CASES = [
    ("ij,jk->ik", [(8, 8), (8, 8)]),
    ("i,i->", [(16,), (16,)]),
    ("ij->ji", [(8, 8)]),
    ("bij,bjk->bik", [(4, 8, 8), (4, 8, 8)]),
    ("bsnh,btnh->bnts", [(2, 8, 12, 64), (2, 8, 12, 64)]),
    ("bsnh,btnh->bnts", [(2, 32, 12, 64), (2, 32, 12, 64)]),
    ("bsnh,btnh->bnts", [(20, 20, 20, 20), (20, 20, 20, 20)]),
    ("bsnh,btnh->bnts", [(2, 128, 12, 64), (2, 128, 12, 64)]),
]


def per_call_us(fn, budget_s=0.0006, batches=7):
    """Microseconds per call: the median over `batches` batches (each about budget_s long, at
    least one call) of the batch's mean. The median of batches drops the batches another
    process interrupted, as the CLI's median of single calls does."""
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    n = max(1, min(20000, int(budget_s / one)))
    means = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        means.append((time.perf_counter() - t0) / n * 1e6)
    return float(np.median(means))


def cli_direct_us(cli, eq, shapes, repeat):
    shape_arg = ",".join("x".join(map(str, s)) for s in shapes)
    res = subprocess.run([cli, "einsum", eq, "--shapes", shape_arg, "--bench", "--json", "--quiet", "--threads", "1",
                          "--repeat", str(repeat)], capture_output=True, text=True, check=True)
    return json.loads(res.stdout)["bench"]["direct_median_us"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.environ.get("ONNXMINI_CLI"))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--tag", default=machine_tag())
    args = ap.parse_args()
    cli = args.cli or max(glob.glob(os.path.join(ROOT, "build*", "tools", "onnxmini")), key=os.path.getmtime)
    import onnxruntime as ort

    binding = onnxmini._onnxmini.einsum.einsum
    rows = []
    for eq, shapes in CASES:
        rng = np.random.default_rng(0)
        ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        want = np.einsum(eq, *ops)
        got = onnxmini.einsum(eq, *ops)  # plans (cost model) and caches
        assert np.allclose(got, want, rtol=1e-4, atol=1e-4), f"{eq}: onnxmini.einsum disagrees with numpy"
        sess = ort_session(einsum_model(eq, shapes, list(want.shape)))
        feeds = {f"in{i}": a for i, a in enumerate(ops)}
        methods = {
            "onnxmini_us": lambda: onnxmini.einsum(eq, *ops),
            "binding_us": lambda: binding(eq, ops),
            "numpy_opt_us": lambda: np.einsum(eq, *ops, optimize=True),
            "numpy_default_us": lambda: np.einsum(eq, *ops),
            "ort_einsum_us": lambda: sess.run(None, feeds),
        }
        samples = {k: [] for k in methods}
        samples["cpp_direct_us"] = []
        for r in range(args.rounds):
            order = list(methods) if r % 2 == 0 else list(reversed(methods))  # no method always goes first
            for k in order:
                samples[k].append(per_call_us(methods[k]))
            samples["cpp_direct_us"].append(cli_direct_us(cli, eq, shapes, 200))
        med = {k: float(np.median(v)) for k, v in samples.items()}
        shape_arg = ",".join("x".join(map(str, s)) for s in shapes)
        row = {"equation": eq, "shapes": shape_arg, **{k: round(v, 3) for k, v in med.items()}}
        row["python_overhead_us"] = round(med["onnxmini_us"] - med["cpp_direct_us"], 3)
        row["x_vs_numpy_opt"] = round(med["numpy_opt_us"] / med["onnxmini_us"], 2)
        row["x_vs_numpy_default"] = round(med["numpy_default_us"] / med["onnxmini_us"], 2)
        row["x_vs_ort"] = round(med["ort_einsum_us"] / med["onnxmini_us"], 2)
        row.update(rounds=args.rounds, machine=cpu_name(), isa=widest_isa(), cores=os.cpu_count(),
                   load1=round(os.getloadavg()[0], 1), numpy=np.__version__, onnxruntime=ort.__version__,
                   date=datetime.date.today().isoformat(), plan=onnxmini.einsum_plan(eq, *shapes).summary)
        rows.append(row)
        print(f"{eq:18s} {shape_arg:26s} onnxmini {row['onnxmini_us']:>9} us  C++ {row['cpp_direct_us']:>9} us  "
              f"binding {row['binding_us']:>9} us  numpy(opt) {row['numpy_opt_us']:>9} us  "
              f"numpy {row['numpy_default_us']:>9} us  ort {row['ort_einsum_us']:>9} us", flush=True)
    path = os.path.join(ROOT, "benchmarks", "results", f"einsum_python_{args.tag}.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"\nraw results: {path}\n")
    print("| equation | shapes | onnxmini.einsum | C++ einsum() | Python overhead | numpy.einsum(optimize=True) | "
          "numpy.einsum() | onnxruntime Einsum | vs numpy opt | vs numpy | vs ort |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| `{r['equation']}` | {r['shapes']} | {r['onnxmini_us']:.2f} | {r['cpp_direct_us']:.2f} | "
              f"{r['python_overhead_us']:.2f} | {r['numpy_opt_us']:.2f} | {r['numpy_default_us']:.2f} | "
              f"{r['ort_einsum_us']:.2f} | {r['x_vs_numpy_opt']}x | {r['x_vs_numpy_default']}x | {r['x_vs_ort']}x |")
    print(f"\nmachine: {cpu_name()} ({widest_isa()}, {os.cpu_count()} cores), numpy {np.__version__}, "
          f"onnxruntime {ort.__version__}, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
