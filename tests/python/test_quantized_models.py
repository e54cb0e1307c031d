"""The five onnxruntime-quantized models of issue #13 (scripts/make_quantized_models.py: a CNN and
an MLP, quantize_dynamic / quantize_static QDQ / quantize_static QOperator), each run by onnxmini
and onnxruntime on the same seeded inputs.

The models are written by the script into ${ONNXMINI_ZOO_DIR:-~/.cache/onnxmini/zoo}/quantized
(outside the repository); the test writes them when missing (onnxruntime.quantization is local,
nothing is downloaded).

Tolerances:
  - QDQ and QOperator models end in DequantizeLinear of a quantized tensor, so both outputs lie on
    the grid k * output_scale. onnxruntime runs a QDQ graph as fused integer kernels
    (requantizing with its own float expressions) where onnxmini runs DequantizeLinear -> float op
    -> QuantizeLinear; at a rounding tie an intermediate activation may land one step apart. The
    CNN's last ops average (GlobalAveragePool) and normalise (Softmax), which shrinks such a step
    before the final rounding, and the final QuantizeLinear adds at most one step: we allow
    2 * output_scale per element and a mean difference below half a step.
  - The dynamic MLP has a float output: the integer products are exact on both sides, so the two
    differ only where float rounding of a scale product flips the dynamic quantization of a hidden
    activation by one step s_l = range_l / 255. One step on every input of layer 3 moves an output
    by at most s_3 * max_j sum_k |W3[k, j]|; one step on every input of layer 2 by at most
    s_2 * |W2|_1 * |W3|_1 (ReLU is 1-Lipschitz). The bound is their sum (with the ranges taken
    from the float model, widened by 25% for the quantization of the weights).
"""
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

import onnxmini
from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import make_quantized_models as mq  # noqa: E402

# Models that need an op of the int8 GEMM branch (MatMulInteger, QLinearConv, QLinearMatMul, QGemm):
# they fail on this branch until that branch is merged. Not xfailed on purpose: the failure names
# the missing op, and the merge must make them pass.
NEEDS_INT8_BRANCH = {"mlp_dynamic": "MatMulInteger", "cnn_qop": "QLinearConv, QGemm", "mlp_qop": "QLinearMatMul"}
SEEDS = (0, 1, 2, 3)


@pytest.fixture(scope="module")
def models():
    mq.build(force=False)
    return {name: mq.model_path(name) for name in mq.MODELS}


def _input(name, seed):
    return mq.sample_input(mq.CNN_INPUT[1] if name.startswith("cnn") else mq.MLP_INPUT[1], seed)


def _output_scale(model):
    final = [n for n in model.graph.node if "output" in n.output][0]
    assert final.op_type == "DequantizeLinear", final.op_type
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    return float(inits[final.input[1]])


def _dynamic_mlp_bound(x):
    inits = {i.name: numpy_helper.to_array(i) for i in mq.float_mlp().graph.initializer}
    r1 = np.maximum(x @ inits["w1"] + inits["b1"], 0)
    r2 = np.maximum(r1 @ inits["w2"] + inits["b2"], 0)
    step = lambda a: 1.25 * (max(a.max(), 0) - min(a.min(), 0)) / 255  # noqa: E731
    col_norm = lambda w: np.abs(w).sum(axis=0).max()  # noqa: E731
    w3, w2 = col_norm(inits["w3"]), col_norm(inits["w2"])
    return step(r2) * w3 + step(r1) * w2 * w3


@pytest.mark.parametrize("name", mq.MODELS)
def test_quantized_model_matches_onnxruntime(models, name):
    path = str(models[name])
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref_sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    mini_sess = onnxmini.InferenceSession(path)  # fails here, naming the op, for NEEDS_INT8_BRANCH models
    model = onnx.load(path)
    for seed in SEEDS:
        x = _input(name, seed)
        ref = ref_sess.run(None, {"input": x})[0]
        got = mini_sess.run(None, {"input": x})[0]
        assert got.shape == ref.shape and got.dtype == ref.dtype
        diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        if name == "mlp_dynamic":
            bound = _dynamic_mlp_bound(x)
            assert diff.max() <= bound, f"seed {seed}: max diff {diff.max()} > bound {bound}"
        else:
            step = _output_scale(model)
            assert diff.max() <= 2 * step * (1 + 1e-6), f"seed {seed}: max diff {diff.max()} ({diff.max() / step} steps)"
            assert diff.mean() <= 0.5 * step, f"seed {seed}: mean diff {diff.mean() / step} steps"


def test_quantized_model_op_types(models):
    """The op types the quantizer wrote are the ones this runtime's docs list (docs/kernels/quantization.md)."""
    found = set()
    for name in mq.MODELS:
        found |= {(n.domain or "ai.onnx", n.op_type) for n in onnx.load(str(models[name])).graph.node}
    ms_ops = {op for dom, op in found if dom == "com.microsoft"}
    doc = (REPO / "docs" / "kernels" / "quantization.md").read_text()
    missing = sorted(op for op in ms_ops if op not in doc)
    assert not missing, f"quantizer wrote com.microsoft ops the docs do not mention: {missing}"
