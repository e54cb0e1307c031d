"""LSTM and GRU, onnxmini vs onnxruntime, side by side in one run.

Cases: batch-1 streaming (one step per run with the state fed back as
initial_h / initial_c: the silero-VAD case, latency per step) and a batch-32
sequence (seq 50, hidden 256). Weights W, R, B are initializers (as in real
models), X and the initial state are inputs. Both runtimes are timed as in
bench_models.py (onnxruntime in-process with all optimizations, onnxmini through
`onnxmini run --json`), in interleaved rounds: per round onnxruntime, onnxmini
at the machine's ISA, onnxmini with ONNXMINI_ISA=avx2. Reported: the medians
over rounds of each round's median ms, and the ratio onnxruntime / onnxmini
(> 1: onnxmini faster).

    .venv/bin/python benchmarks/bench_rnn.py [--rounds 5] [--repeat 200] [--threads 1 2] [--only LSTM]
        [--out benchmarks/results/rnn_<machine>.csv]
"""
import argparse
import csv
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_models  # noqa: E402  (shared timing helpers)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GATES = {"LSTM": 4, "GRU": 3}

# (label, op, seq, batch, input, hidden, repeat scale)
CASES = [
    ("LSTM stream b1 in64 h64", "LSTM", 1, 1, 64, 64, 4),
    ("LSTM stream b1 in128 h128", "LSTM", 1, 1, 128, 128, 4),
    ("GRU stream b1 in64 h64", "GRU", 1, 1, 64, 64, 4),
    ("GRU stream b1 in128 h128", "GRU", 1, 1, 128, 128, 4),
    ("LSTM b32 seq50 in256 h256", "LSTM", 50, 32, 256, 256, 0.1),
    ("GRU b32 seq50 in256 h256", "GRU", 50, 32, 256, 256, 0.1),
]


def rnn_model(op, seq, batch, inp, hidden, rng):
    g = GATES[op]
    s = 1.0 / np.sqrt(hidden)
    inits = [numpy_helper.from_array((s * rng.standard_normal((1, g * hidden, inp))).astype(np.float32), "W"),
             numpy_helper.from_array((s * rng.standard_normal((1, g * hidden, hidden))).astype(np.float32), "R"),
             numpy_helper.from_array((0.1 * rng.standard_normal((1, 2 * g * hidden))).astype(np.float32), "B")]
    ins = ["X", "W", "R", "B", "", "initial_h"] + (["initial_c"] if op == "LSTM" else [])
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, ins, outs, hidden_size=hidden)
    state = [1, batch, hidden]
    vi = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, inp])]
    vi += [helper.make_tensor_value_info(n, TensorProto.FLOAT, state) for n in ins[5:]]
    out_vi = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs]
    m = helper.make_model(helper.make_graph([node], op.lower(), vi, out_vi, inits),
                          opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    feeds = {"X": rng.standard_normal((seq, batch, inp)).astype(np.float32)}
    for n in ins[5:]:
        feeds[n] = (0.5 * rng.standard_normal(state)).astype(np.float32)
    return m, feeds


def time_mini(path, feeds, threads, repeat, warmup, tmp, isa):
    old = os.environ.get("ONNXMINI_ISA")
    if isa:
        os.environ["ONNXMINI_ISA"] = isa
    try:
        m, err = bench_models.time_onnxmini(path, feeds, threads, repeat, warmup, tmp, 1)
    finally:
        if isa:
            if old is None:
                del os.environ["ONNXMINI_ISA"]
            else:
                os.environ["ONNXMINI_ISA"] = old
    if m is None:
        raise RuntimeError(err)
    return m["median"]


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--only", default="")
    ap.add_argument("--machine", default="xeon_avx512")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    out = a.out or os.path.join(ROOT, "benchmarks", "results", f"rnn_{a.machine}.csv")
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, op, seq, batch, inp, hidden, scale in CASES:
            if a.only and a.only not in label:
                continue
            model, feeds = rnn_model(op, seq, batch, inp, hidden, rng)
            path = os.path.join(tmp, f"case{len(rows)}.onnx")
            onnx.save(model, path)
            repeat = max(5, int(a.repeat * scale))
            for t in a.threads:
                ort_ms, mini_ms, avx2_ms = [], [], []
                for _ in range(a.rounds):  # interleaved: drift hits all three alike
                    ort_ms.append(bench_models.time_ort(path, feeds, t, repeat, a.warmup)["median"])
                    mini_ms.append(time_mini(path, feeds, t, repeat, a.warmup, tmp, None))
                    avx2_ms.append(time_mini(path, feeds, t, repeat, a.warmup, tmp, "avx2"))
                o, m, m2 = (float(np.median(v)) for v in (ort_ms, mini_ms, avx2_ms))
                ratios = [x / y for x, y in zip(ort_ms, mini_ms)]
                ratios2 = [x / y for x, y in zip(ort_ms, avx2_ms)]
                row = {"case": label, "threads": t, "onnxruntime_ms": round(o, 5), "onnxmini_ms": round(m, 5),
                       "onnxmini_avx2_ms": round(m2, 5), "ratio_ort_over_onnxmini": round(float(np.median(ratios)), 3),
                       "ratio_ort_over_onnxmini_avx2": round(float(np.median(ratios2)), 3), "rounds": a.rounds,
                       "repeat": repeat, "load1": round(os.getloadavg()[0], 1)}
                rows.append(row)
                print(f"{label:28s} T{t}  ort {o:9.4f} ms  mini {m:9.4f} ms (x{row['ratio_ort_over_onnxmini']:.2f})"
                      f"  mini-avx2 {m2:9.4f} ms (x{row['ratio_ort_over_onnxmini_avx2']:.2f})", flush=True)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    import onnxruntime
    print(f"\n{cpu_name()}; onnxruntime {onnxruntime.__version__}; {os.cpu_count()} cores; "
          f"load average {os.getloadavg()}")
    print("\n| case | threads | onnxruntime ms | onnxmini ms | ratio | onnxmini AVX2 ms | ratio (AVX2) |\n"
          "|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['threads']} | {r['onnxruntime_ms']} | {r['onnxmini_ms']} | "
              f"{r['ratio_ort_over_onnxmini']} | {r['onnxmini_avx2_ms']} | {r['ratio_ort_over_onnxmini_avx2']} |")


if __name__ == "__main__":
    sys.exit(main())
