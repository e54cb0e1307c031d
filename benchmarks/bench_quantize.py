"""QuantizeLinear (per tensor, per channel) and DynamicQuantizeLinear: onnxruntime vs onnxmini,
one thread, per-run CPU time of the calling thread (time.thread_time: the kernels run on it with
one thread, and it is less disturbed than wall time on a shared machine), median of 15 runs.

Usage: python benchmarks/bench_quantize.py ort|mini   (mini: set ONNXMINI_ISA=avx512|avx2|portable;
run the four configurations interleaved, several rounds; docs/kernels/quantization.md has figures).
"""
import sys, time, numpy as np, onnx
from onnx import helper as oh, TensorProto as TP, numpy_helper
import onnxruntime as ort, onnxmini
which = sys.argv[1]  # ort | mini
rounds = 15
def model(op):
    if op == "Q":
        n = oh.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
        inits = [numpy_helper.from_array(np.array(0.02, np.float32), "s"), numpy_helper.from_array(np.array(128, np.uint8), "z")]
        g = oh.make_graph([n], "g", [oh.make_tensor_value_info("x", TP.FLOAT, [4096, 1024])], [oh.make_tensor_value_info("y", TP.UINT8, None)], inits)
    elif op == "QC":  # per-channel int8, axis 1 of NCHW
        n = oh.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)
        inits = [numpy_helper.from_array(np.linspace(0.01, 0.05, 64).astype(np.float32), "s"), numpy_helper.from_array(np.zeros(64, np.int8), "z")]
        g = oh.make_graph([n], "g", [oh.make_tensor_value_info("x", TP.FLOAT, [16, 64, 64, 64])], [oh.make_tensor_value_info("y", TP.INT8, None)], inits)
    else:
        n = oh.make_node("DynamicQuantizeLinear", ["x"], ["y", "ys", "yz"])
        g = oh.make_graph([n], "g", [oh.make_tensor_value_info("x", TP.FLOAT, [4096, 1024])], [oh.make_tensor_value_info(o, t, None) for o, t in (("y", TP.UINT8), ("ys", TP.FLOAT), ("yz", TP.UINT8))])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)]); m.ir_version = 8
    return m.SerializeToString()
for op in ["Q", "QC", "D"]:
    x = np.random.default_rng(0).standard_normal((4096, 1024) if op != "QC" else (16, 64, 64, 64)).astype(np.float32)
    if which == "ort":
        so = ort.SessionOptions(); so.intra_op_num_threads = 1
        s = ort.InferenceSession(model(op), so, providers=["CPUExecutionProvider"])
    else:
        so = onnxmini.SessionOptions(); so.intra_op_num_threads = 1
        s = onnxmini.InferenceSession(model(op), so)
    s.run(None, {"x": x})
    ts = []
    for r in range(rounds):
        t = time.thread_time(); s.run(None, {"x": x}); ts.append(time.thread_time() - t)
    print(op, f"{np.median(ts)*1e3:.3f}")
