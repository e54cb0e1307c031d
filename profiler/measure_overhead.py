"""Profiling overhead: median latency of `onnxmini run` with and without --profile,
interleaved rounds so both sides see the same machine load.

  python profiler/measure_overhead.py MODEL --input NAME=SPEC [--rounds 5] [--repeat 200] [--threads 1]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_ms(cli, model, inputs, repeat, threads, extra):
    args = [cli, "run", model, "--repeat", str(repeat), "--warmup", "10", "--threads", str(threads), "--json", *extra]
    for i in inputs:
        args += ["--input", i]
    out = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    if "profile_file" in out:
        os.remove(out["profile_file"])
    return out["latency_ms"]["median"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--input", action="append", default=[])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=200)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--cli", default=os.path.join(os.environ.get("ONNXMINI_BUILD_DIR", os.path.join(ROOT, "build")),
                                                 "tools", "onnxmini"))
    a = p.parse_args()
    prefix = os.path.join(tempfile.mkdtemp(), "overhead")
    off, on, kernel = [], [], []
    for _ in range(a.rounds):
        off.append(median_ms(a.cli, a.model, a.input, a.repeat, a.threads, []))
        on.append(median_ms(a.cli, a.model, a.input, a.repeat, a.threads, ["--profile", prefix]))
        kernel.append(median_ms(a.cli, a.model, a.input, a.repeat, a.threads,
                                ["--profile", prefix, "--profile-layout", "kernel"]))
    mo, mf, mk = statistics.median(off), statistics.median(on), statistics.median(kernel)
    print(f"{os.path.basename(a.model)}: off {mo:.4f} ms, fences {mf:.4f} ms ({100 * (mf / mo - 1):+.1f}%), "
          f"kernel-only {mk:.4f} ms ({100 * (mk / mo - 1):+.1f}%)  [median of {a.rounds} rounds x {a.repeat} runs]")
    print("  off rounds:", " ".join(f"{x:.4f}" for x in off))
    print("  fences rounds:", " ".join(f"{x:.4f}" for x in on))


if __name__ == "__main__":
    main()
