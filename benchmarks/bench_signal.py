"""DFT and STFT: onnxmini against onnxruntime on one-node models, one thread each.

Interleaved rounds (each session runs for ~0.2 s per round), median time per run and the
median of the per-round ratios. Usage: .venv/bin/python benchmarks/bench_signal.py
(docs/kernels/signal.md has the table and the machine it was measured on).
"""
import time, numpy as np, onnxruntime as ort, onnxmini
from onnx import TensorProto as TP, helper as oh
def model(op, inputs, opset, **attrs):
    node = oh.make_node(op, [i[0] for i in inputs], ["y"], **attrs)
    g = oh.make_graph([node], "g", [oh.make_tensor_value_info(n, t, None) for n, t in inputs if n], [oh.make_tensor_value_info("y", TP.FLOAT, None)])
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)]).SerializeToString()
so = ort.SessionOptions(); so.intra_op_num_threads = 1
mo = onnxmini.SessionOptions(); mo.intra_op_num_threads = 1
cases = []
rng = np.random.default_rng(0)
for n in (1000, 1024, 4096, 4093):
    cases.append((f"DFT complex, 64 x {n}", model("DFT", [("x", TP.FLOAT)], 17), {"x": rng.uniform(-1, 1, (64, n, 2)).astype(np.float32)}))
for n in (1000, 1024):
    cases.append((f"DFT real onesided, 64 x {n}", model("DFT", [("x", TP.FLOAT)], 17, onesided=1), {"x": rng.uniform(-1, 1, (64, n, 1)).astype(np.float32)}))
w = (0.5 - 0.5*np.cos(2*np.pi*np.arange(400)/400)).astype(np.float32)
cases.append(("STFT 1 x 16000, frame 400 (Bluestein), step 160, onesided", model("STFT", [("x", TP.FLOAT), ("s", TP.INT64), ("w", TP.FLOAT)], 17),
              {"x": rng.uniform(-1,1,(1,16000,1)).astype(np.float32), "s": np.array(160, np.int64), "w": w}))
w512 = (0.5 - 0.5*np.cos(2*np.pi*np.arange(512)/512)).astype(np.float32)
cases.append(("STFT 1 x 16000, frame 512, step 160, onesided", model("STFT", [("x", TP.FLOAT), ("s", TP.INT64), ("w", TP.FLOAT)], 17),
              {"x": rng.uniform(-1,1,(1,16000,1)).astype(np.float32), "s": np.array(160, np.int64), "w": w512}))
for name, m, feeds in cases:
    a = ort.InferenceSession(m, so, providers=["CPUExecutionProvider"]); b = onnxmini.InferenceSession(m, mo)
    a.run(None, feeds); b.run(None, feeds)
    ta, tb = [], []
    for r in range(9):  # interleaved rounds
        for sess, acc in ((a, ta), (b, tb)):
            reps = 0; t0 = time.perf_counter()
            while True:
                sess.run(None, feeds); reps += 1
                if time.perf_counter() - t0 > 0.2: break
            acc.append((time.perf_counter() - t0) / reps)
    ratios = sorted(x / y for x, y in zip(ta, tb))
    print(f"{name}: onnxruntime {np.median(ta)*1e3:.3f} ms, onnxmini {np.median(tb)*1e3:.3f} ms, median ratio ort/onnxmini {ratios[len(ratios)//2]:.2f}")
