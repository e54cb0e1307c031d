"""Two builds' CLIs on the same zoo models, the blocked layout rule on in both (level 99), interleaved
like bench_nchwc_models.py (per round one `onnxmini run --repeat R --json` per build, alternating which
goes first). Used to measure a change to the rule itself (e.g. the main checkout's build as A, a
branch's as B). Ratios A / B of the per-round median latency and CPU time per run (> 1: B faster).

    ONNXMINI_ISA=avx2 .venv/bin/python benchmarks/bench_nchwc_builds.py --a /work/main/build/tools/onnxmini \\
        --b build/tools/onnxmini --tag xeon_avx2path_2c_pools_vs_main
Raw CSV: benchmarks/results/nchwc_builds_<tag>.csv
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess

from bench_nchwc_models import MODELS, ZOO, write_rows

HERE = pathlib.Path(__file__).resolve().parent


def one(cli, model, threads, repeat):
    args = [cli, "run", str(ZOO / f"{model}.onnx"), "--input", MODELS[model], "--threads", str(threads), "--repeat",
            str(repeat), "--warmup", "3", "--warmup-ms", "200", "--json"]
    env = dict(os.environ, ONNXMINI_NCHWC="1")
    d = json.loads(subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout)
    return d["latency_ms"]["median"], d["cpu_ms"]["mean"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--threads", type=int, nargs="+", default=[1])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--models", nargs="+", default=list(MODELS))
    ap.add_argument("--tag", required=True)
    a = ap.parse_args()
    rows = []
    for model in a.models:
        for t in a.threads:
            res = {"a": [], "b": []}
            lat_ratio, cpu_ratio = [], []
            for r in range(a.rounds):
                got = {side: one(getattr(a, side), model, t, a.repeat) for side in (("a", "b") if r % 2 == 0 else ("b", "a"))}
                for side in ("a", "b"):
                    res[side].append(got[side])
                lat_ratio.append(got["a"][0] / got["b"][0])
                cpu_ratio.append(got["a"][1] / got["b"][1])
            row = {"model": model, "threads": t, "isa": os.environ.get("ONNXMINI_ISA", "avx512"),
                   "a_ms": round(statistics.median(x[0] for x in res["a"]), 3),
                   "b_ms": round(statistics.median(x[0] for x in res["b"]), 3),
                   "ratio_latency": round(statistics.median(lat_ratio), 3),
                   "a_cpu_ms": round(statistics.median(x[1] for x in res["a"]), 3),
                   "b_cpu_ms": round(statistics.median(x[1] for x in res["b"]), 3),
                   "ratio_cpu": round(statistics.median(cpu_ratio), 3), "rounds": a.rounds}
            rows.append(row)
            print(",".join(str(v) for v in row.values()), flush=True)
    out = HERE / "results" / f"nchwc_builds_{a.tag}.csv"
    write_rows(out, rows)


if __name__ == "__main__":
    main()
