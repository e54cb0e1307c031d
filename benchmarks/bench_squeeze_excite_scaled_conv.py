"""Upper bound of the squeeze-and-excitation form that scales the following 1x1 Conv's filter per
input channel instead of X (docs/optimizer.md, "Not done yet"): Mul(X, gate) -> Conv 1x1 against the
Conv 1x1 alone with its filter already scaled (a constant, prepacked at session creation: the per-run
scaling and repacking that form would need are not counted). One thread, ORT_ENABLE_ALL, interleaved
rounds, median of per-round medians.

    .venv/bin/python benchmarks/bench_squeeze_excite_scaled_conv.py C H M    # X 1xCxHxH, M output channels
"""
import sys, time, statistics, os
import numpy as np
from onnx import helper, TensorProto, numpy_helper
import onnxmini
C, H, M = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
W = rng.standard_normal((M, C, 1, 1)).astype(np.float32)
g = rng.random((1, C, 1, 1)).astype(np.float32)
def model(mul):
    inits = [numpy_helper.from_array(W if mul else W * g.reshape(1, C, 1, 1), "W"), numpy_helper.from_array(g, "G")]
    nodes = ([helper.make_node("Mul", ["X", "G"], ["S"]), helper.make_node("Conv", ["S", "W"], ["Y"])] if mul
             else [helper.make_node("Conv", ["X", "W"], ["Y"])])
    gr = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, C, H, H])],
                           [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(gr, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString()
def sess(b):
    so = onnxmini.SessionOptions(); so.intra_op_num_threads = 1; so.graph_optimization_level = 99
    return onnxmini.InferenceSession(b, so)
x = {"X": rng.standard_normal((1, C, H, H)).astype(np.float32)}
v = {"mul+conv": model(True), "scaled conv": model(False)}
med = {k: [] for k in v}
for r in range(7):
    for k in (list(v) if r % 2 == 0 else list(v)[::-1]):
        s = sess(v[k])
        for _ in range(5): s.run(None, x)
        t = []; end = time.perf_counter() + 0.3
        while time.perf_counter() < end or len(t) < 5:
            t0 = time.perf_counter(); s.run(None, x); t.append(time.perf_counter() - t0)
        med[k].append(statistics.median(t))
print(f"1x{C}x{H}x{H} -> {M}: mul+conv {statistics.median(med['mul+conv'])*1e6:.1f} us, scaled conv {statistics.median(med['scaled conv'])*1e6:.1f} us (load {os.getloadavg()[0]:.1f})")
