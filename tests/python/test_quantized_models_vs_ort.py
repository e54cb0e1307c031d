"""Models quantized by onnxruntime's own tools, run by onnxmini and onnxruntime: a small CNN
with quantize_static (QDQ and QOperator formats, per-channel int8 weights, uint8
activations) and an MLP with quantize_dynamic.

These need QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear and the element-wise
QLinear* ops (the quantization branch): without them the model does not load and the test
skips, naming the missing op. The integer matmuls / convolutions run on the int8 engine
(QDQ units through the optimizer's qdq_to_qlinear rule).

Tolerance: both runtimes compute the same integer sums; a requantized activation may
differ by one quantization step where the float32 multiplier lands on a rounding boundary
(and onnxruntime's QDQ path may keep an op in float where we fuse it), and such a step
propagates through the next layers. The outputs are compared to 5 % of their range plus
3 output steps: a wrong kernel (a wrong zero point, scale or layout) is off by far more.
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

import onnxmini

quant = pytest.importorskip("onnxruntime.quantization")


def _cnn(rng):
    w1 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32)
    w2 = rng.normal(0, 0.2, (16, 8, 3, 3)).astype(np.float32)
    wf = rng.normal(0, 0.2, (16, 10)).astype(np.float32)
    inits = [nh.from_array(w1, "w1"), nh.from_array(rng.normal(0, 0.1, 8).astype(np.float32), "b1"),
             nh.from_array(w2, "w2"), nh.from_array(rng.normal(0, 0.1, 16).astype(np.float32), "b2"),
             nh.from_array(wf, "wf"), nh.from_array(rng.normal(0, 0.1, 10).astype(np.float32), "bf")]
    nodes = [oh.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), oh.make_node("Relu", ["c1"], ["r1"]),
             oh.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
             oh.make_node("Relu", ["c2"], ["r2"]), oh.make_node("GlobalAveragePool", ["r2"], ["p"]),
             oh.make_node("Flatten", ["p"], ["f"]), oh.make_node("Gemm", ["f", "wf", "bf"], ["y"])]
    g = oh.make_graph(nodes, "cnn", [oh.make_tensor_value_info("x", TP.FLOAT, [1, 3, 16, 16])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, [1, 10])], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _mlp(rng):
    inits = [nh.from_array(rng.normal(0, 0.2, (32, 64)).astype(np.float32), "w1"),
             nh.from_array(rng.normal(0, 0.1, 64).astype(np.float32), "b1"),
             nh.from_array(rng.normal(0, 0.2, (64, 10)).astype(np.float32), "w2")]
    nodes = [oh.make_node("MatMul", ["x", "w1"], ["h"]), oh.make_node("Add", ["h", "b1"], ["hb"]),
             oh.make_node("Relu", ["hb"], ["r"]), oh.make_node("MatMul", ["r", "w2"], ["y"])]
    g = oh.make_graph(nodes, "mlp", [oh.make_tensor_value_info("x", TP.FLOAT, [4, 32])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, [4, 10])], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)])
    m.ir_version = 8
    return m


class _Reader(quant.CalibrationDataReader):
    def __init__(self, rng, shape, n=8):
        self.data = iter([{"x": rng.uniform(-1, 1, shape).astype(np.float32)} for _ in range(n)])

    def get_next(self):
        return next(self.data, None)


def _compare(path, x):
    try:
        mini = onnxmini.InferenceSession(path).run(None, {"x": x})[0]
    except onnxmini.NotImplemented as e:  # noqa: F841 - an op of the quantization branch is missing
        pytest.skip(f"needs the quantization ops: {e}")
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    span = float(ref.max() - ref.min()) or 1.0
    np.testing.assert_allclose(mini, ref, atol=0.05 * span, rtol=0)


@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
def test_static_quantized_cnn(tmp_path, fmt):
    rng = np.random.default_rng(0)
    src, dst = tmp_path / "cnn.onnx", tmp_path / f"cnn_{fmt}.onnx"
    import onnx
    onnx.save(_cnn(rng), src)
    quant.quantize_static(str(src), str(dst), _Reader(rng, (1, 3, 16, 16)),
                          quant_format=getattr(quant.QuantFormat, fmt), per_channel=True,
                          activation_type=quant.QuantType.QUInt8, weight_type=quant.QuantType.QInt8)
    _compare(str(dst), rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32))


def test_dynamic_quantized_mlp(tmp_path):
    rng = np.random.default_rng(1)
    src, dst = tmp_path / "mlp.onnx", tmp_path / "mlp_dyn.onnx"
    import onnx
    onnx.save(_mlp(rng), src)
    quant.quantize_dynamic(str(src), str(dst), weight_type=quant.QuantType.QInt8)
    _compare(str(dst), rng.uniform(-1, 1, (4, 32)).astype(np.float32))
