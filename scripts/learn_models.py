#!/usr/bin/env python3
"""Small one-op models for docs/learn.md, each sized so its fast kernel matters
(fixed shapes: `onnxmini run MODEL` generates random inputs, no --input needed).
Seeded, so every run writes the same files.

Usage: .venv/bin/python scripts/learn_models.py [OUT_DIR]   (default build/learn)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _model(name, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="onnxmini/learn")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def _vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def matmul(n=512):
    """C = A B with a constant B (n x n x n): the GEMM engine on its own."""
    rng = np.random.default_rng(2)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    node = helper.make_node("MatMul", ["a", "b"], ["c"], name="matmul")
    return _model("matmul", [node], [_vi("a", [n, n])], [_vi("c", [n, n])], [numpy_helper.from_array(b, "b")])


def conv(cin=64, cout=64, image=56, k=3, stride=1, name="conv3x3_64"):
    """One Conv with a constant filter: the layer of the conv ladder."""
    rng = np.random.default_rng(1)
    w = (rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))).astype(np.float32)
    b = rng.uniform(-0.1, 0.1, cout).astype(np.float32)
    out = (image + 2 * (k // 2) - k) // stride + 1
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", kernel_shape=[k, k],
                            pads=[k // 2] * 4, strides=[stride, stride])
    return _model(name, [node], [_vi("x", [1, cin, image, image])], [_vi("y", [1, cout, out, out])],
                  [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])


def transpose():
    """NCHW -> NHWC, the layout change between a CNN and its head."""
    node = helper.make_node("Transpose", ["x"], ["y"], name="to_nhwc", perm=[0, 2, 3, 1])
    return _model("transpose", [node], [_vi("x", [1, 64, 112, 112])], [_vi("y", [1, 112, 112, 64])])


def reduce_argmin():
    """A row sum and an arg-min over the same rows (KMeans' nearest centre)."""
    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["s"], name="row_sum", keepdims=0),
             helper.make_node("ArgMin", ["x"], ["i"], name="row_argmin", axis=1, keepdims=0)]
    axes = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")
    return _model("reduce_argmin", nodes, [_vi("x", [4096, 256])],
                  [_vi("s", [4096]), helper.make_tensor_value_info("i", TensorProto.INT64, [4096])], [axes])


def softmax():
    """Softmax over the last axis of a batch of logits."""
    node = helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=-1)
    return _model("softmax", [node], [_vi("x", [512, 1000])], [_vi("y", [512, 1000])])


def einsum():
    """A batched matrix product written as an einsum (planned onto the GEMM engine)."""
    node = helper.make_node("Einsum", ["a", "b"], ["c"], name="bmm", equation="bij,bjk->bik")
    return _model("einsum", [node], [_vi("a", [16, 128, 64]), _vi("b", [16, 64, 128])], [_vi("c", [16, 128, 128])])


MODELS = {"matmul": matmul, "conv3x3_64": conv, "transpose": transpose, "reduce_argmin": reduce_argmin, "softmax": softmax,
          "einsum": einsum}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("build", "learn")
    os.makedirs(out, exist_ok=True)
    for name, make in MODELS.items():
        path = os.path.join(out, name + ".onnx")
        onnx.save(make(), path)
        print(path)


if __name__ == "__main__":
    main()
