"""Attention (opset 23, one node), onnxmini vs onnxruntime, at BERT / LLM shapes.

Cases (batch 1, 12 query heads, head size 64, float32, 4-D inputs):
  - encoder self-attention, no mask, sequence 128 / 512 / 2048;
  - causal prefill, sequence 512;
  - GQA decode step: 1 query, 12 query heads over 4 key/value heads, a past cache
    of 1024 positions, is_causal, present_key / present_value produced.
Per case and thread count the rounds alternate onnxruntime and onnxmini (the CLI,
fast kernels, ONNXMINI_ISA = --isa); each time is a median over --repeat runs;
reported are the medians over rounds of the times and of the per-round ratios
(ratio > 1: onnxmini faster), for wall-clock latency and for CPU time per run (process
CPU time over the timed loop / runs, all threads: on a shared machine the CPU time is
the steadier figure, the wall clock includes waiting for a core).

    .venv/bin/python benchmarks/bench_attention.py [--rounds 5] [--threads 1 2] [--isa avx512]
        [--out benchmarks/results/attention_<machine>.csv]
"""
import argparse
import csv
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_models  # noqa: E402  (shared timing helpers)
from bench_resize import cpu_name  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (label, q_heads, kv_heads, q_len, kv_len, past_len, causal, repeat)
CASES = [
    ("self-attn seq 128", 12, 12, 128, 128, 0, False, 40),
    ("self-attn seq 512", 12, 12, 512, 512, 0, False, 10),
    ("self-attn seq 2048", 12, 12, 2048, 2048, 0, False, 3),
    ("causal prefill seq 512", 12, 12, 512, 512, 0, True, 10),
    ("GQA 12/4 decode, cache 1024", 12, 4, 1, 1, 1024, True, 200),
]
HEAD = 64


def attention_model(hq, hkv, lq, lkv, past, causal):
    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("Q", f, [1, hq, lq, HEAD]),
              helper.make_tensor_value_info("K", f, [1, hkv, lkv, HEAD]),
              helper.make_tensor_value_info("V", f, [1, hkv, lkv, HEAD])]
    names, outs = ["Q", "K", "V"], ["Y"]
    if past:
        inputs += [helper.make_tensor_value_info("past_key", f, [1, hkv, past, HEAD]),
                   helper.make_tensor_value_info("past_value", f, [1, hkv, past, HEAD])]
        names += ["", "past_key", "past_value"]
        outs += ["present_key", "present_value"]
    node = helper.make_node("Attention", names, outs, is_causal=int(causal))
    g = helper.make_graph([node], "attention", inputs, [helper.make_tensor_value_info(o, f, None) for o in outs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 10
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--isa", default="avx512")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "attention.csv"))
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    machine = f"{cpu_name()}, {os.cpu_count()} cores"
    os.environ["ONNXMINI_ISA"] = a.isa
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, hq, hkv, lq, lkv, past, causal, repeat in CASES:
            if a.only and a.only not in label:
                continue
            path = os.path.join(tmp, f"attention_{len(rows)}.onnx")
            onnx.save(attention_model(hq, hkv, lq, lkv, past, causal), path)
            feeds = {"Q": rng.standard_normal((1, hq, lq, HEAD)).astype(np.float32),
                     "K": rng.standard_normal((1, hkv, lkv, HEAD)).astype(np.float32),
                     "V": rng.standard_normal((1, hkv, lkv, HEAD)).astype(np.float32)}
            if past:
                feeds["past_key"] = rng.standard_normal((1, hkv, past, HEAD)).astype(np.float32)
                feeds["past_value"] = rng.standard_normal((1, hkv, past, HEAD)).astype(np.float32)
            for t in a.threads:
                ort_ms, mini_ms, ort_cpu, mini_cpu = [], [], [], []
                for _ in range(a.rounds):
                    o = bench_models.time_ort(path, feeds, t, repeat, a.warmup)
                    r, err = bench_models.time_onnxmini(path, feeds, t, repeat, a.warmup, tmp, 0)
                    if r is None:
                        raise RuntimeError(err)
                    ort_ms.append(o["median"]), ort_cpu.append(o["cpu"])
                    mini_ms.append(r["median"]), mini_cpu.append(r["cpu"])
                o, m = float(np.median(ort_ms)), float(np.median(mini_ms))
                oc, mc = float(np.median(ort_cpu)), float(np.median(mini_cpu))
                ratio = float(np.median([x / y for x, y in zip(ort_ms, mini_ms)]))
                cpu_ratio = float(np.median([x / y for x, y in zip(ort_cpu, mini_cpu)]))
                rows.append({"case": label, "threads": t, "isa": a.isa, "onnxruntime_ms": round(o, 4),
                             "onnxmini_ms": round(m, 4), "ratio_ort_over_onnxmini": round(ratio, 3),
                             "onnxruntime_cpu_ms": round(oc, 4), "onnxmini_cpu_ms": round(mc, 4),
                             "cpu_ratio_ort_over_onnxmini": round(cpu_ratio, 3),
                             "rounds": a.rounds, "repeat": repeat, "machine": machine,
                             "load1": round(os.getloadavg()[0], 1)})
                print(f"{label:30s} T{t} ort {o:9.3f} ms  mini {m:9.3f} ms  ort/mini {ratio:5.2f}   "
                      f"cpu ort {oc:9.3f} mini {mc:9.3f} ratio {cpu_ratio:5.2f}", flush=True)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    import onnxruntime
    print(f"\n{machine}; ISA {a.isa}; onnxruntime {onnxruntime.__version__}; load average {os.getloadavg()}")
    print("\n| case | threads | onnxruntime ms | onnxmini ms | ort / onnxmini | CPU ms ort | CPU ms onnxmini | "
          "CPU ort / onnxmini |\n|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['threads']} | {r['onnxruntime_ms']} | {r['onnxmini_ms']} | "
              f"{r['ratio_ort_over_onnxmini']} | {r['onnxruntime_cpu_ms']} | {r['onnxmini_cpu_ms']} | "
              f"{r['cpu_ratio_ort_over_onnxmini']} |")


if __name__ == "__main__":
    sys.exit(main())
