"""Before/after latency of one model through two onnxmini CLI builds, interleaved.

Each round runs `onnxmini run MODEL --repeat R --json` once with the "before" build and once
with the "after" build (alternating which goes first), so that both see the same load on a
shared machine; the result is the median over rounds of each side's per-round median latency
and of the per-round ratio before / after (> 1: after is faster), plus the same for process
CPU time per run (less sensitive to other processes taking the core).

    .venv/bin/python benchmarks/ab_cli.py --before /tmp/base/onnxmini --before-lib /tmp/base \\
        --after build/tools/onnxmini MODEL.onnx --input images=x.npy [--rounds 9] [--repeat 20] [--threads 1]

--before-lib: a folder with the "before" build's libonnxmini.so.0 (put on LD_LIBRARY_PATH).
Set ONNXMINI_ISA in the environment to compare one ISA's path.
"""
import argparse
import json
import os
import statistics
import subprocess


def one(cli, lib, a):
    env = dict(os.environ)
    if lib:
        env["LD_LIBRARY_PATH"] = lib
    args = [cli, "run", a.model, "--threads", str(a.threads), "--repeat", str(a.repeat), "--warmup", "3",
            "--warmup-ms", "200", "--json"]
    for i in a.input:
        args += ["--input", i]
    d = json.loads(subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout)
    return d["latency_ms"]["median"], d["cpu_ms"]["mean"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--input", nargs="*", default=[])
    p.add_argument("--before", required=True)
    p.add_argument("--before-lib", default="")
    p.add_argument("--after", required=True)
    p.add_argument("--after-lib", default="")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    rows = []
    for r in range(a.rounds):
        sides = [("before", a.before, a.before_lib), ("after", a.after, a.after_lib)]
        if r % 2:
            sides.reverse()
        got = {name: one(cli, lib, a) for name, cli, lib in sides}
        rows.append(got)
    med = lambda xs: statistics.median(xs)
    b_lat, a_lat = med([g["before"][0] for g in rows]), med([g["after"][0] for g in rows])
    b_cpu, a_cpu = med([g["before"][1] for g in rows]), med([g["after"][1] for g in rows])
    ratio = med([g["before"][0] / g["after"][0] for g in rows])
    ratio_cpu = med([g["before"][1] / g["after"][1] for g in rows])
    print(json.dumps({"model": os.path.basename(a.model), "isa": os.environ.get("ONNXMINI_ISA", "native"),
                      "rounds": a.rounds, "repeat": a.repeat, "threads": a.threads, "before_ms": round(b_lat, 3),
                      "after_ms": round(a_lat, 3), "ratio": round(ratio, 3), "before_cpu_ms": round(b_cpu, 3),
                      "after_cpu_ms": round(a_cpu, 3), "ratio_cpu": round(ratio_cpu, 3),
                      "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
