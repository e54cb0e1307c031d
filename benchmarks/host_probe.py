"""Does a 2-thread timing on this (virtual) machine depend on what the host is doing? Runs
benchmarks/host_probe.cc (cross-core cache-line latency, reading 256 KB another core just
wrote, one- and two-thread FMA rate) and, right after it, a fresh Python process timing a
zoo model with 2 threads in onnxmini (and optionally onnxruntime), every --every seconds,
and writes one CSV row per sample (docs/threads.md "Slow periods on the EPYC VM").

    .venv/bin/python benchmarks/host_probe.py [--samples 30] [--every 15] [--model ppocr_v4_det] [--ort]

Raw CSV: benchmarks/results/host_probe_<machine-tag>.csv (appended).
"""
import argparse
import csv
import datetime
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_zoo  # noqa: E402  (machine tag)

TIMER = r'''
import sys, time, json
import numpy as np
sys.path.insert(0, sys.argv[3])
import zoo_lib
name, runtime = sys.argv[1], sys.argv[2]
e = {x["name"]: x for x in zoo_lib.load_manifest()}[name]
feeds = zoo_lib.make_feeds(e, 0)
if runtime == "onnxmini":
    import onnxmini as rt
    so = rt.SessionOptions(); so.intra_op_num_threads = 2
    s = rt.InferenceSession(str(zoo_lib.model_path(e)), so)
else:
    import onnxruntime as rt
    so = rt.SessionOptions(); so.intra_op_num_threads = 2; so.log_severity_level = 3
    s = rt.InferenceSession(str(zoo_lib.model_path(e)), so, providers=["CPUExecutionProvider"])
t0 = time.perf_counter()
while time.perf_counter() - t0 < 0.3:
    s.run(None, feeds)
ts = []
t0 = time.perf_counter()
while time.perf_counter() - t0 < 1.0:
    t = time.perf_counter(); s.run(None, feeds); ts.append(time.perf_counter() - t)
print(json.dumps(float(np.median(ts) * 1e3)))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--every", type=float, default=15.0, help="seconds between samples")
    ap.add_argument("--model", default="ppocr_v4_det")
    ap.add_argument("--ort", action="store_true", help="also time onnxruntime with 2 threads")
    a = ap.parse_args()
    exe = pathlib.Path(tempfile.mkdtemp()) / "host_probe"
    subprocess.run(["g++", "-O2", "-std=c++17", "-pthread", "-march=native", str(ROOT / "benchmarks" / "host_probe.cc"),
                    "-o", str(exe)], check=True)
    out = ROOT / "benchmarks" / "results" / f"host_probe_{bench_zoo.machine_tag()}.csv"
    new = not out.exists()
    with open(out, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["time", "handoff_ns", "remote_us", "fma1_gflops", "fma2_gflops", "model",
                        "onnxmini_2t_ms", "onnxruntime_2t_ms", "load1", "machine", "isa"])
        for i in range(a.samples):
            t_start = time.time()
            probe = dict(kv.split("=") for kv in subprocess.run([str(exe)], capture_output=True, text=True,
                                                               check=True).stdout.split())
            times = {}
            for runtime in ["onnxmini"] + (["onnxruntime"] if a.ort else []):
                r = subprocess.run([sys.executable, "-c", TIMER, a.model, runtime, str(ROOT / "tests" / "zoo")],
                                   capture_output=True, text=True, check=True)
                times[runtime] = float(r.stdout.strip().splitlines()[-1])
            row = [datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"), probe["handoff_ns"], probe["remote_us"],
                   probe["fma1"], probe["fma2"], a.model, f"{times['onnxmini']:.3f}",
                   f"{times['onnxruntime']:.3f}" if "onnxruntime" in times else "", f"{os.getloadavg()[0]:.1f}",
                   bench_zoo.cpu_name(), bench_zoo.widest_isa()]
            w.writerow(row)
            f.flush()
            print(" ".join(str(x) for x in row), flush=True)
            time.sleep(max(0.0, a.every - (time.time() - t_start)))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
