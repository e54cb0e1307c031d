"""Per-node profile of zoo models, onnxmini against onnxruntime (issue #14 item 6).

For each model: the manifest's seeded inputs (seed 0) are written as .npy, onnxruntime 1.x is
profiled in-process (SessionOptions.enable_profiling, intra_op_num_threads = --threads, all
graph optimizations), onnxmini through its CLI (`onnxmini run --profile`, the same --threads,
default optimization level), both with the same number of warm-up and recorded runs, and
`onnxmini profile compare ORT OURS --by op` and `--by shape` are written next to the traces.
The machine's ISA for onnxmini is whatever ONNXMINI_ISA says (unset: the widest one found).

    .venv/bin/python benchmarks/profile_zoo.py --only nudenet_320n [--runs 20] [--out /tmp/prof]
    .venv/bin/python benchmarks/profile_zoo.py --only magika_standard_v3_3 --threads 2 --tag 2t
    ONNXMINI_ISA=avx2 .venv/bin/python benchmarks/profile_zoo.py --only nudenet_320n --tag avx2

Output per model, under --out: <model>_<tag>_ort.json, <model>_<tag>_ours.json (traces),
<model>_<tag>_by_op.txt, <model>_<tag>_by_shape.csv (the comparisons).
"""
import argparse
import glob
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import zoo_lib  # noqa: E402


def cli() -> pathlib.Path:
    build = pathlib.Path(os.environ.get("ONNXMINI_BUILD_DIR", ROOT / "build"))
    return build / "tools" / "onnxmini"


def profile_ort(path, feeds, warmup, runs, prefix, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_profiling = True
    so.profile_file_prefix = str(prefix)
    so.log_severity_level = 3
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    for _ in range(warmup + runs):
        sess.run(None, feeds)
    return pathlib.Path(sess.end_profiling())


def profile_ours(path, feed_files, warmup, runs, prefix, threads):
    args = [str(cli()), "run", str(path), "--threads", str(threads), "--repeat", str(runs),
            "--warmup", str(warmup), "--warmup-ms", "300", "--profile", str(prefix),
            "--profile-skip-runs", str(warmup)]
    for name, f in feed_files.items():
        args += ["--input", f"{name}={f}"]
    before = set(glob.glob(f"{prefix}*.json"))
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    made = sorted(set(glob.glob(f"{prefix}*.json")) - before, key=os.path.getmtime)
    return pathlib.Path(made[-1])


def compare(ort_trace, ours_trace, by, fmt, skip_runs):
    out = subprocess.run([str(cli()), "profile", "compare", str(ort_trace), str(ours_trace),
                          "--by", by, "--format", fmt, "--skip-runs", str(skip_runs)],
                         check=True, capture_output=True, text=True)
    return out.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="+", required=True, help="zoo model names")
    p.add_argument("--runs", type=int, default=20, help="recorded runs per runtime")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--out", default="/tmp/onnxmini_profile_zoo")
    p.add_argument("--threads", type=int, default=1, help="intra-op threads for both runtimes")
    p.add_argument("--tag", default=os.environ.get("ONNXMINI_ISA", "native"))
    a = p.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    entries = {e["name"]: e for e in zoo_lib.load_manifest()}
    for name in a.only:
        e = entries[name]
        path = zoo_lib.model_path(e)
        feeds = zoo_lib.make_feeds(e, 0)
        feed_files = {}
        for k, v in feeds.items():
            f = out / f"{name}_{k.replace('/', '_')}.npy"
            np.save(f, v)
            feed_files[k] = f
        stem = out / f"{name}_{a.tag}"
        ort_trace = profile_ort(path, feeds, a.warmup, a.runs, f"{stem}_ortraw", a.threads)
        shutil.move(ort_trace, f"{stem}_ort.json")
        ours = profile_ours(path, feed_files, a.warmup, a.runs, f"{stem}_oursraw", a.threads)
        shutil.move(ours, f"{stem}_ours.json")
        # onnxruntime's trace holds the warm-up runs too; ours skipped them at record time.
        by_op = compare(f"{stem}_ort.json", f"{stem}_ours.json", "op", "text", a.warmup)
        (out / f"{name}_{a.tag}_by_op.txt").write_text(by_op)
        (out / f"{name}_{a.tag}_by_shape.csv").write_text(
            compare(f"{stem}_ort.json", f"{stem}_ours.json", "shape", "csv", a.warmup))
        print(f"== {name} ({a.tag})\n{by_op}")


if __name__ == "__main__":
    main()
