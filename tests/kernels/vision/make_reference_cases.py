#!/usr/bin/env python3
"""Writes tests/kernels/vision/reference_cases/: Col2Im and CenterCropPad node tests
(ONNX node-test layout: model.onnx + test_data_set_0/*.pb) whose expected outputs come
from onnx.reference. The installed ONNX test data predates opset 18 and has none of
these; test_vision_reference_cases.cc runs them with both kernel modes. Also the
non-float32 dtypes of LRN and Col2Im, which no node test covers: float64 and the
integers straight from onnx.reference; float16 / bfloat16 as the float32 reference
result on the widened input, rounded once (the exact answer to within float32
rounding, so the runner's rtol 1e-3 holds with a half ULP, 2^-11, to spare).

    .venv/bin/python tests/kernels/vision/make_reference_cases.py
"""
import os
import pathlib
import shutil

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto as P
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

root = pathlib.Path(__file__).resolve().parent / "reference_cases"
rng = np.random.default_rng(0)


def case(name, op, inputs, attrs, const_names=()):
    ins = [h.make_tensor_value_info(f"x{i}", nh.from_array(v).data_type, v.shape) for i, v in enumerate(inputs)]
    node = h.make_node(op, [f"x{i}" for i in range(len(inputs))], ["y"], **attrs)
    g = h.make_graph([node], name, ins, [h.make_tensor_value_info("y", P.UNDEFINED, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    half = inputs[0].dtype in (np.float16, ml_dtypes.bfloat16)
    if half:  # the float32 model on the widened input, rounded once
        wide = [inputs[0].astype(np.float32)] + list(inputs[1:])
        g32 = h.make_graph([node], name, [h.make_tensor_value_info("x0", P.FLOAT, None)] + ins[1:],
                           [h.make_tensor_value_info("y", P.UNDEFINED, None)])
        m32 = h.make_model(g32, opset_imports=[h.make_opsetid("", 18)])
        y = ReferenceEvaluator(m32).run(None, {f"x{i}": v for i, v in enumerate(wide)})[0].astype(inputs[0].dtype)
    else:
        y = ReferenceEvaluator(m).run(None, {f"x{i}": v for i, v in enumerate(inputs)})[0]
    g.output[0].CopyFrom(h.make_tensor_value_info("y", nh.from_array(y).data_type, y.shape))
    d = os.path.join(root, "test_" + name)
    os.makedirs(d + "/test_data_set_0", exist_ok=True)
    onnx.save(m, d + "/model.onnx")
    for i, v in enumerate(inputs):
        open(f"{d}/test_data_set_0/input_{i}.pb", "wb").write(nh.from_array(v, f"x{i}").SerializeToString())
    open(f"{d}/test_data_set_0/output_0.pb", "wb").write(nh.from_array(y, "y").SerializeToString())


def i64(*v):
    return np.array(v, dtype=np.int64)


def f(*shape):
    return rng.standard_normal(shape).astype(np.float32)


shutil.rmtree(root, ignore_errors=True)
case("col2im", "Col2Im", [np.arange(1, 26, dtype=np.float32).reshape(1, 5, 5), i64(5, 5), i64(1, 5)], {})
case("col2im_strides", "Col2Im", [f(1, 9, 4), i64(5, 5), i64(3, 3)], dict(strides=[2, 2]))
case("col2im_pads", "Col2Im", [f(1, 5, 15), i64(5, 5), i64(1, 5)], dict(pads=[0, 1, 0, 1]))
case("col2im_dilations", "Col2Im", [f(1, 4, 5), i64(6, 6), i64(2, 2)], dict(dilations=[1, 5]))
case("col2im_5d", "Col2Im", [f(1, 10, 12), i64(3, 4, 5), i64(1, 1, 5)], {})
case("col2im_mix", "Col2Im", [f(2, 12, 15), i64(7, 6), i64(2, 3)], dict(strides=[2, 1], pads=[1, 0, 0, 1], dilations=[2, 1]))
case("center_crop_pad_crop", "CenterCropPad", [f(20, 10, 3), i64(10, 7, 3)], {})
case("center_crop_pad_pad", "CenterCropPad", [f(10, 7, 3), i64(20, 10, 3)], {})
case("center_crop_pad_crop_and_pad", "CenterCropPad", [f(20, 8, 3), i64(10, 10, 3)], {})
case("center_crop_pad_axes_chw", "CenterCropPad", [f(3, 20, 8), i64(10, 9)], dict(axes=[1, 2]))
case("center_crop_pad_axes_hwc", "CenterCropPad", [f(20, 8, 3), i64(11, 9)], dict(axes=[0, -2]))
case("center_crop_pad_int32", "CenterCropPad", [np.arange(35, dtype=np.int32).reshape(5, 7), i64(2, 10)], {})
# LRN inputs have N == C: onnx.reference's LRN (1.23) loops `for c in range(x.shape[0])`,
# the batch size, over the channels, so it leaves channels >= N unnormalized.
case("lrn_float64", "LRN", [f(5, 5, 3, 4).astype(np.float64)], dict(size=3, alpha=0.1, beta=0.6, bias=1.5))
case("lrn_float16", "LRN", [f(5, 5, 3, 4).astype(np.float16)], dict(size=4, alpha=0.2))
case("lrn_bfloat16", "LRN", [f(5, 5, 3, 4).astype(ml_dtypes.bfloat16)], dict(size=3, alpha=0.1, beta=0.6, bias=1.5))
case("col2im_float64", "Col2Im", [f(2, 12, 15).astype(np.float64), i64(7, 6), i64(2, 3)], dict(strides=[2, 1], pads=[1, 0, 0, 1], dilations=[2, 1]))
case("col2im_float16", "Col2Im", [f(2, 12, 15).astype(np.float16), i64(7, 6), i64(2, 3)], dict(strides=[2, 1], pads=[1, 0, 0, 1], dilations=[2, 1]))
case("col2im_bfloat16", "Col2Im", [f(1, 9, 4).astype(ml_dtypes.bfloat16), i64(5, 5), i64(3, 3)], dict(strides=[2, 2]))
case("col2im_int64", "Col2Im", [rng.integers(-1000, 1000, (2, 12, 15)), i64(7, 6), i64(2, 3)], dict(strides=[2, 1], pads=[1, 0, 0, 1], dilations=[2, 1]))
case("col2im_int32", "Col2Im", [rng.integers(-1000, 1000, (1, 9, 4)).astype(np.int32), i64(5, 5), i64(3, 3)], dict(strides=[2, 2]))
