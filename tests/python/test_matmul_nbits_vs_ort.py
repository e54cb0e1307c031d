"""com.microsoft MatMulNBits against onnxruntime: one-node models built with onnx.helper,
random codes, scales and zero points, run by onnxmini and by onnxruntime.

Cases: 4 / 2 / 8 bits, block sizes 16 / 32 / 128, K a multiple of the block or not,
no zero points (default 2^(bits-1)), packed uint8 zero points, float zero points, bias,
weights as initializers (prepacked) or as graph inputs (dequantized per run), float16 A.

Tolerance: both dequantize exactly ((code - zp) * scale in float32) and sum K products in
float32 with different orders (onnxruntime may quantize A to int8 at accuracy_level 4,
which the models here do not ask for): |sum| <= K * max|a| * max|w|, so
atol = 4 * K * 2^-23 * max|a| * max|w| (plus one float16 rounding of the output, 2^-10
relative, for float16 A).
"""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

import onnxmini


def _pack(codes, bits):
    """Packs a [..., n] array of `bits`-bit codes low bits first into bytes."""
    per = 8 // bits
    n = codes.shape[-1]
    pad = (-n) % per
    c = np.concatenate([codes, np.zeros(codes.shape[:-1] + (pad,), codes.dtype)], axis=-1).astype(np.uint8)
    c = c.reshape(codes.shape[:-1] + (-1, per))
    out = np.zeros(c.shape[:-1], np.uint8)
    for i in range(per):
        out |= (c[..., i] << (i * bits)).astype(np.uint8)
    return out


def _case(rng, M, K, N, bits, block, zp_kind, bias, a_type, weights_as_inputs):
    kb = (K + block - 1) // block
    codes = rng.integers(0, 2 ** bits, size=(N, kb * block))
    codes[:, K:] = 0
    b = _pack(codes.reshape(N, kb, block), bits)  # [N, kb, blob]
    scales = (rng.random(N * kb) * 0.1 + 0.01).astype(a_type)
    a = rng.uniform(-1, 1, size=(M, K)).astype(a_type)
    inputs = {"A": a, "B": b, "scales": scales}
    names = ["A", "B", "scales", "", "", ""]  # zero_points, g_idx, bias
    if zp_kind == "packed":
        inputs["zp"] = _pack(rng.integers(0, 2 ** bits, size=(N, kb)), bits).reshape(-1)
        names[3] = "zp"
    elif zp_kind == "float":
        inputs["zp"] = rng.integers(0, 2 ** bits, size=N * kb).astype(a_type)
        names[3] = "zp"
    if bias:
        inputs["bias"] = rng.uniform(-1, 1, N).astype(a_type)
        names[5] = "bias"
    while names and names[-1] == "":
        names.pop()
    tp = TP.FLOAT if a_type == np.float32 else TP.FLOAT16
    node = oh.make_node("MatMulNBits", names, ["Y"], domain="com.microsoft", K=K, N=N, bits=bits, block_size=block)
    graph_inputs = [oh.make_tensor_value_info("A", tp, [M, K])]
    inits = []
    for name, arr in inputs.items():
        if name == "A":
            continue
        if weights_as_inputs:
            graph_inputs.append(oh.make_tensor_value_info(name, nh.from_array(arr).data_type, list(arr.shape)))
        else:
            inits.append(nh.from_array(arr, name))
    g = oh.make_graph([node], "g", graph_inputs, [oh.make_tensor_value_info("Y", tp, None)], initializer=inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 21), oh.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    feeds = inputs if weights_as_inputs else {"A": a}
    return m.SerializeToString(), feeds, a, scales


CASES = [
    (3, 64, 8, 4, 32, "none", False, np.float32, False),
    (5, 100, 12, 4, 32, "packed", True, np.float32, False),
    (2, 257, 7, 4, 128, "packed", True, np.float32, True),
    (4, 48, 9, 4, 16, "float", False, np.float32, False),
    (3, 64, 10, 8, 32, "packed", True, np.float32, False),
    (3, 96, 6, 2, 32, "packed", False, np.float32, False),
    (6, 128, 16, 4, 32, "packed", True, np.float16, False),
]


@pytest.mark.parametrize("M,K,N,bits,block,zp_kind,bias,a_type,weights_as_inputs", CASES)
def test_matmul_nbits_matches_onnxruntime(M, K, N, bits, block, zp_kind, bias, a_type, weights_as_inputs):
    rng = np.random.default_rng(M * 1000 + K + bits)
    model, feeds, a, scales = _case(rng, M, K, N, bits, block, zp_kind, bias, a_type, weights_as_inputs)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    try:
        ref = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    except Exception as e:  # an onnxruntime build without this bit width
        pytest.skip(f"onnxruntime refuses this case: {e}")
    got = onnxmini.InferenceSession(model).run(None, feeds)[0]
    assert got.dtype == ref.dtype and got.shape == ref.shape
    max_w = float(np.max(np.abs(scales.astype(np.float32)))) * (2 ** bits)
    atol = 4 * K * 2.0 ** -23 * max_w
    rtol = 2.0 ** -10 if a_type == np.float16 else 0
    np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), atol=atol + (1e-3 if rtol else 0), rtol=rtol)


def test_matmul_nbits_errors_name_the_node():
    rng = np.random.default_rng(1)
    model, feeds, _, _ = _case(rng, 2, 64, 4, 4, 32, "none", False, np.float32, False)
    m = onnx.load_from_string(model)
    b = nh.to_array(m.graph.initializer[0])
    m.graph.initializer[0].CopyFrom(nh.from_array(b[:, :1, :], "B"))  # one block short
    with pytest.raises(Exception, match=r"MatMulNBits .*B is uint8 4x1x16, expected uint8 \(4, 2, 16\)"):
        onnxmini.InferenceSession(m.SerializeToString()).run(None, feeds)
