#!/usr/bin/env python3
"""The GEMM learning ladder (docs/kernels/gemm-ladder.md): runs `bench_gemm --ladder`
for several rounds (each round runs every row once, so a burst of load on a shared
machine hits all rows alike), writes every round's figures to a raw CSV, and prints the
median table in Markdown.

Usage: .venv/bin/python benchmarks/gemm_ladder.py [--rounds 5] [--build-dir build]
           [--out benchmarks/results/gemm_ladder_<machine>.csv]
"""
import argparse
import csv
import io
import os
import platform
import statistics
import subprocess
import sys


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def one_round(bench, min_time):
    cmd = [bench, "--ladder", "--benchmark_format=csv", f"--benchmark_min_time={min_time}s"]
    env = dict(os.environ)
    env.pop("ONNXMINI_ISA", None)  # the ladder pins each ISA itself
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    header = out.index("name,")
    rows = {}
    for r in csv.DictReader(io.StringIO(out[header:])):
        rows[r["name"].replace("/real_time", "")] = float(r["GFLOPS"])
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--out", default="benchmarks/results/gemm_ladder_xeon_avx512_2core.csv")
    a = ap.parse_args()
    bench = os.path.join(a.build_dir, "benchmarks", "bench_gemm")
    machine = f"{cpu_model()}, {os.cpu_count()} cpus"
    records = []
    for rnd in range(a.rounds):
        load = os.getloadavg()[0]
        for name, gflops in one_round(bench, a.min_time).items():
            records.append({"round": rnd, "row": name, "gflops": f"{gflops:.2f}", "load1": f"{load:.2f}", "machine": machine})
        print(f"round {rnd + 1}/{a.rounds} done (load {load:.2f})", file=sys.stderr)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["round", "row", "gflops", "load1", "machine"])
        w.writeheader()
        w.writerows(records)
    by_row = {}
    for r in records:
        by_row.setdefault(r["row"], []).append(float(r["gflops"]))
    peak = statistics.median(by_row.get("fma_peak/avx512/T1", [float("nan")]))
    loads = [float(r["load1"]) for r in records]
    print(f"machine: {machine}; load average (1 min) {min(loads):.1f}..{max(loads):.1f}; "
          f"{a.rounds} rounds, medians; FMA peak of one core {peak:.0f} GFLOPS\n")
    # A shared machine's load moves from round to round: each row is also given as a share of
    # the FMA peak measured in the same round (median over rounds), which cancels most of it.
    peak_of_round = {r["round"]: float(r["gflops"]) for r in records if r["row"] == "fma_peak/avx512/T1"}
    print("| row | GFLOPS | % of the FMA peak of the cores used | same, per round vs that round's peak | x previous row |")
    print("|---|---|---|---|---|")
    prev_shape, prev = None, None
    for row, vals in by_row.items():
        if not row.startswith("ladder/"):
            continue
        _, shape, step, threads = row.split("/")
        med = statistics.median(vals)
        ratio = f"{med / prev:.1f}x" if prev and shape == prev_shape else ""
        cores = int(threads[1:])
        per_round = [float(r["gflops"]) / (peak_of_round[r["round"]] * cores) for r in records
                     if r["row"] == row and r["round"] in peak_of_round]
        rel = f"{100 * statistics.median(per_round):.0f}%" if per_round else ""
        print(f"| {shape} {step} {threads} | {med:.1f} | {100 * med / (peak * cores):.0f}% | {rel} | {ratio} |")
        prev_shape, prev = shape, med


if __name__ == "__main__":
    main()
