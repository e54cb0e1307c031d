#!/usr/bin/env python3
"""Per-layer Conv timing of one model under two or more environment settings, for the
conv2d_lanes dispatch rule (docs/kernels/nn.md, docs/performance.md "AVX2 lanes convolution").

Each round runs every setting once (`onnxmini run --repeat R --warmup W --profile`), so
load on a shared machine hits all settings alike. Per Conv node: the fastest kernel_time
of a round's runs (--per-round min, the default: on an oversubscribed machine a node of
several ms is often descheduled mid-run, which a median over a few runs does not remove;
--per-round median is offered too), then the median over rounds; GFLOP/s from the trace's flops. The
kernel_variant / isa each setting took are printed beside the times.

Settings are NAME=ENV[,ENV...], e.g. the AVX2 path before / after conv2d_lanes on AVX2:
    .venv/bin/python benchmarks/conv_lanes_layers.py MODEL \
        "before=ONNXMINI_ISA=avx2,ONNXMINI_CONV_LANES=0" "after=ONNXMINI_ISA=avx2,ONNXMINI_CONV_LANES=1"
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import tempfile


def conv_times(cli, model, env_pairs, repeat, warmup, tmp, tag, extra):
    env = dict(os.environ)
    for k in ("ONNXMINI_ISA", "ONNXMINI_CONV_LANES", "ONNXMINI_CONV_VARIANT"):
        env.pop(k, None)
    env.update(env_pairs)
    prefix = os.path.join(tmp, tag)
    for f in glob.glob(prefix + "_*.json"):
        os.remove(f)
    subprocess.run([cli, "run", model, "--repeat", str(repeat), "--warmup", str(warmup), "--profile", prefix,
                    "--profile-skip-runs", str(warmup)] + extra, check=True, capture_output=True, env=env)
    trace = json.load(open(glob.glob(prefix + "_*.json")[0]))
    events = trace if isinstance(trace, list) else trace["traceEvents"]
    per_node = {}
    for e in events:
        a = e.get("args", {})
        if a.get("op_name") == "Conv" and e.get("name", "").endswith("_kernel_time"):
            node = e["name"][: -len("_kernel_time")]
            d = per_node.setdefault(node, {"dur": [], "flops": int(a.get("flops", 0)), "variant": a.get("kernel_variant"),
                                           "isa": a.get("isa"), "x": a["input_type_shape"][0]["float"],
                                           "w": a["input_type_shape"][1]["float"]})
            d["dur"].append(e["dur"])
    return per_node


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("settings", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--run-args", default="", help="more `onnxmini run` arguments, e.g. \"--dim height=320\"")
    ap.add_argument("--per-round", choices=["min", "median"], default="min")
    ap.add_argument("--min-mflop", type=float, default=0.0, help="leave out smaller Conv nodes")
    a = ap.parse_args()
    cli = os.path.join(a.build_dir, "tools", "onnxmini")
    settings = []
    for s in a.settings:
        name, _, envs = s.partition("=")
        settings.append((name, dict(p.split("=", 1) for p in envs.split(",") if p)))
    extra = ["--threads", str(a.threads)] + a.run_args.split()
    rounds = {name: [] for name, _ in settings}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.rounds):
            for name, env in settings:
                rounds[name].append(conv_times(cli, a.model, env, a.repeat, a.warmup, tmp, name, extra))
    first = rounds[settings[0][0]][0]
    nodes = [n for n in first if first[n]["flops"] >= a.min_mflop * 1e6]
    cols = " | ".join(f"{n} us | {n} GFLOP/s | {n} variant" for n, _ in settings)
    print(f"| node | X | W | MFLOP | {cols} |" + (f" {settings[0][0]}/{settings[-1][0]} |" if len(settings) > 1 else ""))
    print("|" + "---|" * (4 + 3 * len(settings) + (1 if len(settings) > 1 else 0)))
    totals = {n: 0.0 for n, _ in settings}
    for node in nodes:
        info = first[node]
        row = [node, "x".join(map(str, info["x"])), "x".join(map(str, info["w"])), f"{info['flops'] / 1e6:.1f}"]
        meds = []
        for name, _ in settings:
            pick = min if a.per_round == "min" else statistics.median
            per_round = [pick(r[node]["dur"]) for r in rounds[name]]
            med = statistics.median(per_round)
            meds.append(med)
            totals[name] += med
            r0 = rounds[name][0][node]
            row += [f"{med:.0f}", f"{info['flops'] / med / 1e3:.1f}", f"{r0['variant']} ({r0['isa']})"]
        if len(meds) > 1:
            row.append(f"{meds[0] / meds[-1]:.2f}")
        print("| " + " | ".join(row) + " |")
    print("\nsum of medians (us): " + ", ".join(f"{n} {t:.0f}" for n, t in totals.items()))


if __name__ == "__main__":
    main()
