"""int8 vs float32: onnxmini's int8 GEMM engine against its float32 engine and against
onnxruntime's int8 kernels, one-node models, weights as initializers (prepacked by both).

Cases:
  - MatMul 1024 x 1024 x 1024: float MatMul, MatMulInteger (u8 x s8 -> int32),
    QLinearMatMul (u8 x s8 -> u8);
  - a 3x3 convolution 64 -> 64 channels on 56 x 56 (pads 1): float Conv, QLinearConv
    (u8 activations, s8 weights per channel).
Each round runs every (engine, model) pair once, in turn (interleaved), each a median of
--repeat runs after a warm-up; reported per row: the median over rounds of the time and of
the per-round ratio to onnxmini's float32 on the same case (> 1: faster than our float).

    .venv/bin/python benchmarks/bench_int8.py [--rounds 7] [--threads 1 2]
        [--out benchmarks/results/int8_<machine>.csv]
"""
import argparse
import csv
import os
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

import onnxmini

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _model(nodes, inputs, output, inits):
    g = oh.make_graph(nodes, "g", inputs, [oh.make_tensor_value_info(output[0], output[1], None)], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 21)])
    m.ir_version = 10
    return m.SerializeToString()


def matmul_models(n, rng):
    a_f = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b_f = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    a_q = rng.integers(0, 256, (n, n)).astype(np.uint8)
    b_q = rng.integers(-128, 128, (n, n)).astype(np.int8)
    f32 = _model([oh.make_node("MatMul", ["a", "b"], ["y"])], [oh.make_tensor_value_info("a", TP.FLOAT, a_f.shape)],
                 ("y", TP.FLOAT), [nh.from_array(b_f, "b")])
    scal = [nh.from_array(np.array(v, dtype=t), nm) for nm, v, t in
            [("as", 0.02, np.float32), ("az", 128, np.uint8), ("bs", 0.01, np.float32), ("bz", 0, np.int8),
             ("ys", 2.0, np.float32), ("yz", 128, np.uint8)]]
    mmi = _model([oh.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
                 [oh.make_tensor_value_info("a", TP.UINT8, a_q.shape)], ("y", TP.INT32), [nh.from_array(b_q, "b")] + scal)
    qlm = _model([oh.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])],
                 [oh.make_tensor_value_info("a", TP.UINT8, a_q.shape)], ("y", TP.UINT8), [nh.from_array(b_q, "b")] + scal)
    return [("float32 MatMul", f32, {"a": a_f}), ("int8 MatMulInteger", mmi, {"a": a_q}),
            ("int8 QLinearMatMul", qlm, {"a": a_q})]


def conv_models(c, hw, rng):
    x_f = rng.uniform(-1, 1, (1, c, hw, hw)).astype(np.float32)
    w_f = rng.uniform(-1, 1, (c, c, 3, 3)).astype(np.float32)
    x_q = rng.integers(0, 256, (1, c, hw, hw)).astype(np.uint8)
    w_q = rng.integers(-128, 128, (c, c, 3, 3)).astype(np.int8)
    attrs = dict(pads=[1, 1, 1, 1])
    f32 = _model([oh.make_node("Conv", ["x", "w"], ["y"], **attrs)], [oh.make_tensor_value_info("x", TP.FLOAT, x_f.shape)],
                 ("y", TP.FLOAT), [nh.from_array(w_f, "w")])
    inits = [nh.from_array(w_q, "w"), nh.from_array(np.array(0.02, np.float32), "xs"),
             nh.from_array(np.array(128, np.uint8), "xz"),
             nh.from_array(rng.uniform(0.001, 0.01, c).astype(np.float32), "ws"), nh.from_array(np.zeros(c, np.int8), "wz"),
             nh.from_array(np.array(0.5, np.float32), "ys"), nh.from_array(np.array(128, np.uint8), "yz")]
    qc = _model([oh.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], **attrs)],
                [oh.make_tensor_value_info("x", TP.UINT8, x_q.shape)], ("y", TP.UINT8), inits)
    return [("float32 Conv", f32, {"x": x_f}), ("int8 QLinearConv", qc, {"x": x_q})]


def sessions(model, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    mo = onnxmini.SessionOptions()
    mo.intra_op_num_threads = threads
    return {"onnxmini": onnxmini.InferenceSession(model, mo),
            "onnxruntime": ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])}


def time_once(sess, feeds, repeat):
    sess.run(None, feeds)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        ts.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "int8.csv"))
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    groups = [(f"MatMul {a.n}^3", matmul_models(a.n, rng)), ("Conv 3x3 64->64 56x56", conv_models(64, 56, rng))]
    rows = []
    for threads in a.threads:
        for case, models in groups:
            sess = [(label, sessions(m, threads), feeds) for label, m, feeds in models]
            times = {}  # (label, engine) -> per-round times
            for _ in range(a.rounds):
                for label, ss, feeds in sess:
                    for engine, s in ss.items():
                        times.setdefault((label, engine), []).append(time_once(s, feeds, a.repeat))
            base = times[(models[0][0], "onnxmini")]  # our float32
            for (label, engine), ts in times.items():
                ratio = float(np.median(np.array(base) / np.array(ts)))
                rows.append({"case": case, "threads": threads, "kernel": label, "engine": engine,
                             "median_ms": round(float(np.median(ts)), 3),
                             "speedup_vs_onnxmini_float32": round(ratio, 2)})
                print(f"{case:24s} t={threads} {label:20s} {engine:11s} {np.median(ts):9.3f} ms  x{ratio:.2f}", flush=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
