#!/usr/bin/env python3
"""Writes tests/kernels/vision/reference_cases/: Col2Im and CenterCropPad node tests
(ONNX node-test layout: model.onnx + test_data_set_0/*.pb) whose expected outputs come
from onnx.reference. The installed ONNX test data predates opset 18 and has none of
these; test_vision_reference_cases.cc runs them with both kernel modes.

    .venv/bin/python tests/kernels/vision/make_reference_cases.py
"""
import os
import pathlib
import shutil

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
