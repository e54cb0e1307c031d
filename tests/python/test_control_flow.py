"""If models (the executor's subgraphs) run by onnxmini and by onnxruntime, compared.

Built with onnx.helper: bodies reading outer-scope values at one and two levels,
body initializers and Constant nodes, branches whose outputs differ in shape, an
If whose implicit input is produced after it in the node list, and the profiler's
events for body nodes. Outputs are exact (the same float32 operations in the same
order on both sides).
"""
import json

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as onh

import onnxmini


def _model(nodes, inputs, outputs, inits=(), opset=13):
    g = oh.make_graph(nodes, "main", inputs, outputs, list(inits))
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def _vi(name, elem=TP.FLOAT, shape=None):
    return oh.make_tensor_value_info(name, elem, shape)


def _both(model_bytes, feeds):
    ours = onnxmini.InferenceSession(model_bytes).run(None, feeds)
    theirs = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, feeds)
    return ours, theirs


def _outer_scope_if():
    then_b = oh.make_graph([oh.make_node("Add", ["Y", "X"], ["t"], name="then_add")], "then", [], [_vi("t")])
    c = onh.from_array(np.array([10, 20, 30], np.float32), "C")
    else_b = oh.make_graph([oh.make_node("Mul", ["Y", "C"], ["e"], name="else_mul")], "else", [], [_vi("e")], [c])
    nodes = [
        oh.make_node("If", ["cond"], ["Z"], name="if", then_branch=then_b, else_branch=else_b),
        oh.make_node("Relu", ["X"], ["Y"], name="relu"),  # listed after the If that reads it
    ]
    return _model(nodes, [_vi("X", shape=[3]), _vi("cond", TP.BOOL, [])], [_vi("Z", shape=[3])])


@pytest.mark.parametrize("cond", [True, False])
def test_if_reads_outer_values(cond):
    x = np.array([-1, 2, 3], np.float32)
    ours, theirs = _both(_outer_scope_if(), {"X": x, "cond": np.array(cond)})
    np.testing.assert_array_equal(ours[0], theirs[0])


@pytest.mark.parametrize("c1,c2", [(True, True), (True, False), (False, True)])
def test_nested_if_reads_two_levels_up(c1, c2):
    inner_then = oh.make_graph([oh.make_node("Sum", ["X", "Y", "M"], ["it"])], "inner_then", [], [_vi("it")])
    inner_else = oh.make_graph([oh.make_node("Identity", ["M"], ["ie"])], "inner_else", [], [_vi("ie")])
    outer_then = oh.make_graph(
        [
            oh.make_node("Abs", ["Y"], ["M"]),
            oh.make_node("If", ["c2"], ["ot"], then_branch=inner_then, else_branch=inner_else),
        ],
        "outer_then", [], [_vi("ot")])
    outer_else = oh.make_graph([oh.make_node("Identity", ["X"], ["oe"])], "outer_else", [], [_vi("oe")])
    nodes = [
        oh.make_node("Neg", ["X"], ["Y"]),
        oh.make_node("If", ["c1"], ["Z"], then_branch=outer_then, else_branch=outer_else),
    ]
    model = _model(nodes, [_vi("X", shape=[4]), _vi("c1", TP.BOOL, []), _vi("c2", TP.BOOL, [])], [_vi("Z")])
    x = np.array([1.5, -2, 0, 3], np.float32)
    ours, theirs = _both(model, {"X": x, "c1": np.array(c1), "c2": np.array(c2)})
    np.testing.assert_array_equal(ours[0], theirs[0])


@pytest.mark.parametrize("cond", [True, False])
def test_branch_outputs_differ_in_shape(cond):
    two = oh.make_node("Constant", [], ["two"], value=onh.from_array(np.array([7, 8], np.float32)))
    three = oh.make_node("Constant", [], ["three"], value=onh.from_array(np.array([1, 2, 3], np.float32)))
    then_b = oh.make_graph([two], "then", [], [_vi("two")])
    else_b = oh.make_graph([three], "else", [], [_vi("three")])
    model = _model([oh.make_node("If", ["cond"], ["Z"], then_branch=then_b, else_branch=else_b)],
                   [_vi("cond", TP.BOOL, [])], [_vi("Z")])
    ours, theirs = _both(model, {"cond": np.array(cond)})
    assert ours[0].shape == theirs[0].shape
    np.testing.assert_array_equal(ours[0], theirs[0])


def test_profile_lists_body_nodes(tmp_path):
    so = onnxmini.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "if_profile")
    sess = onnxmini.InferenceSession(_outer_scope_if(), so)
    x = np.array([1, 2, 3], np.float32)
    sess.run(None, {"X": x, "cond": np.array(True)})
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    kernels = [e["name"][: -len("_kernel_time")] for e in events if e["name"].endswith("_kernel_time")]
    assert kernels == ["relu", "then_add", "if"]


def test_mem_pattern_option_keeps_results(tmp_path):
    """Memory plans on (default) and off give the same results run after run, branches flipping."""
    on = onnxmini.InferenceSession(_outer_scope_if())
    so = onnxmini.SessionOptions()
    assert so.enable_mem_pattern is True
    so.enable_mem_pattern = False
    off = onnxmini.InferenceSession(_outer_scope_if(), so)
    x = np.array([-1, 2, 3], np.float32)
    for i in range(6):
        feeds = {"X": x * i, "cond": np.array(i % 3 == 0)}
        np.testing.assert_array_equal(on.run(None, feeds)[0], off.run(None, feeds)[0])
