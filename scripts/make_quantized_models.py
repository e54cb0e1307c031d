#!/usr/bin/env python3
"""Builds the five onnxruntime-quantized test models (issue #13) into a cache folder outside the repo.

A small float CNN (Conv/Relu/MaxPool, a residual Add, Sigmoid, LeakyRelu, Concat, GlobalAveragePool,
Gemm) and an MLP (MatMul/Add/Relu) are written with onnx.helper and numpy weights from a fixed seed;
onnxruntime.quantization then writes
  mlp_dynamic.onnx (quantize_dynamic),
  cnn_qdq.onnx, mlp_qdq.onnx (quantize_static, QuantFormat.QDQ),
  cnn_qop.onnx, mlp_qop.onnx (quantize_static, QuantFormat.QOperator),
calibrated (MinMax) on seeded random batches, so every run writes the same models.

Cache: <dir>/quantized/, where <dir> is ${ONNXMINI_ZOO_DIR:-~/.cache/onnxmini/zoo} (the zoo's cache,
tests/zoo/zoo_lib.py). Existing models are kept unless --force. --list prints each model's op types.
"""
import argparse
import os
import pathlib
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MODELS = ("mlp_dynamic", "cnn_qdq", "mlp_qdq", "cnn_qop", "mlp_qop")
CNN_INPUT = ("input", (1, 3, 16, 16))
MLP_INPUT = ("input", (4, 32))


def cache_dir() -> pathlib.Path:
    env = os.environ.get("ONNXMINI_ZOO_DIR")
    base = pathlib.Path(env).expanduser() if env else pathlib.Path.home() / ".cache" / "onnxmini" / "zoo"
    return base / "quantized"


def model_path(name: str) -> pathlib.Path:
    return cache_dir() / f"{name}.onnx"


def _init(rng, name, shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def float_cnn() -> onnx.ModelProto:
    rng = np.random.default_rng(1234)
    inits = [
        _init(rng, "w1", (8, 3, 3, 3)), _init(rng, "b1", (8,), 0.1),
        _init(rng, "w2", (8, 8, 3, 3), 0.2), _init(rng, "b2", (8,), 0.1),
        _init(rng, "w3", (8, 8, 1, 1), 0.3), _init(rng, "b3", (8,), 0.1),
        _init(rng, "wf", (10, 16), 0.3), _init(rng, "bf", (10,), 0.1),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Add", ["r2", "p1"], ["res"]),  # residual
        helper.make_node("Conv", ["res", "w3", "b3"], ["c3"]),
        helper.make_node("Sigmoid", ["c3"], ["s3"]),
        helper.make_node("LeakyRelu", ["res"], ["lr"], alpha=0.1),
        helper.make_node("Mul", ["s3", "lr"], ["gated"]),
        helper.make_node("Concat", ["gated", "res"], ["cat"], axis=1),
        helper.make_node("AveragePool", ["cat"], ["ap"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["ap"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", "wf", "bf"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["output"], axis=1),
    ]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, CNN_INPUT[1])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, (1, 10))], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def float_mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(4321)
    inits = [
        _init(rng, "w1", (32, 64), 0.2), _init(rng, "b1", (64,), 0.1),
        _init(rng, "w2", (64, 64), 0.15), _init(rng, "b2", (64,), 0.1),
        _init(rng, "w3", (64, 10), 0.2), _init(rng, "b3", (10,), 0.1),
    ]
    nodes = [
        helper.make_node("MatMul", ["input", "w1"], ["m1"]), helper.make_node("Add", ["m1", "b1"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["r1"]),
        helper.make_node("MatMul", ["r1", "w2"], ["m2"]), helper.make_node("Add", ["m2", "b2"], ["a2"]),
        helper.make_node("Relu", ["a2"], ["r2"]),
        helper.make_node("MatMul", ["r2", "w3"], ["m3"]), helper.make_node("Add", ["m3", "b3"], ["output"]),
    ]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("input", TensorProto.FLOAT, MLP_INPUT[1])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, (4, 10))], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def sample_input(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape).astype(np.float32)


class SeededReader:
    """Calibration batches: 8 seeded uniform draws (the seeds 100..107, disjoint from the tests' seeds)."""

    def __init__(self, name, shape):
        self._batches = iter([{name: sample_input(shape, 100 + i)} for i in range(8)])

    def get_next(self):
        return next(self._batches, None)


def build(force: bool = False) -> list:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static

    out = cache_dir()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        floats = {"cnn": (float_cnn(), CNN_INPUT), "mlp": (float_mlp(), MLP_INPUT)}
        paths = {}
        for kind, (m, _) in floats.items():
            onnx.checker.check_model(m)
            paths[kind] = os.path.join(tmp, f"{kind}_float.onnx")
            onnx.save(m, paths[kind])
        for name in MODELS:
            target = model_path(name)
            if target.exists() and not force:
                continue
            kind, how = name.split("_")
            if how == "dynamic":
                quantize_dynamic(paths[kind], str(target), weight_type=QuantType.QInt8)
            else:
                fmt = QuantFormat.QDQ if how == "qdq" else QuantFormat.QOperator
                quantize_static(paths[kind], str(target), SeededReader(*floats[kind][1]), quant_format=fmt,
                                activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
            written.append(name)
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--force", action="store_true", help="rewrite models already in the cache")
    ap.add_argument("--list", action="store_true", help="print each model's (domain, op type) set")
    args = ap.parse_args()
    written = build(args.force)
    print(f"make_quantized_models: wrote {len(written)} ({', '.join(written) or 'none'}); cache {cache_dir()}")
    if args.list:
        for name in MODELS:
            m = onnx.load(str(model_path(name)))
            ops = sorted({(n.domain or "ai.onnx") + ":" + n.op_type for n in m.graph.node})
            print(f"{name:12s} {' '.join(ops)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
