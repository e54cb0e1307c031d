"""If, Loop and Scan models (the executor's subgraphs) run by onnxmini and by onnxruntime, compared.

Built with onnx.helper: bodies reading outer-scope values at one and two levels,
body initializers and Constant nodes, branches whose outputs differ in shape, an
If whose implicit input is produced after it in the node list, and the profiler's
events for body nodes; Loop with a trip count, a condition, both or neither,
scan outputs, zero iterations and carried values that grow; Scan 9+ with axes
and directions, Scan 8 with a batch axis and sequence_lens. Outputs are exact
(the same float32 operations in the same order on both sides).
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


# ---- Loop ----------------------------------------------------------------------------------------------------


def _loop_model(m, cond, opset=13):
    """Loop(M?, cond?, X): x_out = x + step (outer scope), scan = x_out, cond_out = iter < stop_at (outer scope)."""
    body = oh.make_graph(
        [
            oh.make_node("Add", ["x", "step"], ["x_out"]),
            oh.make_node("Less", ["iter", "stop_at"], ["cond_out"]),
            oh.make_node("Identity", ["x_out"], ["scan"]),
        ],
        "body",
        [_vi("iter", TP.INT64, []), _vi("cond_in", TP.BOOL, []), _vi("x", shape=[2])],
        [_vi("cond_out", TP.BOOL, []), _vi("x_out", shape=[2]), _vi("scan", shape=[2])])
    inputs = [_vi("X", shape=[2]), _vi("stop_at", TP.INT64, [])]
    if m:
        inputs.append(_vi("M", TP.INT64, []))
    if cond:
        inputs.append(_vi("cond", TP.BOOL, []))
    step = onh.from_array(np.array([1, 10], np.float32), "step")
    node = oh.make_node("Loop", ["M" if m else "", "cond" if cond else "", "X"], ["X_final", "scans"], body=body)
    return _model([node], inputs, [_vi("X_final"), _vi("scans")], [step], opset)


@pytest.mark.parametrize("m,cond,stop_at", [
    (4, None, 9),       # M only
    (None, True, 2),    # cond only: the body ends it
    (None, None, 5),    # neither: the body ends it
    (3, True, 7),       # both, M first
    (30, True, 7),      # both, cond first
    (0, None, 9),       # no iteration: empty scan output
    (None, False, 9),   # no iteration
])
@pytest.mark.parametrize("opset", [11, 13, 16])
def test_loop_trip_count_and_condition(m, cond, stop_at, opset):
    feeds = {"X": np.array([0.5, -1], np.float32), "stop_at": np.array(stop_at, np.int64)}
    if m is not None:
        feeds["M"] = np.array(m, np.int64)
    if cond is not None:
        feeds["cond"] = np.array(cond)
    ours, theirs = _both(_loop_model(m is not None, cond is not None, opset), feeds)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_loop_carried_shape_grows():
    one = onh.from_array(np.array([1], np.int64), "one")
    body = oh.make_graph(
        [
            oh.make_node("Reshape", ["iter", "one"], ["iter1"]),
            oh.make_node("Cast", ["iter1"], ["iterf"], to=TP.FLOAT),
            oh.make_node("Concat", ["x", "iterf"], ["x_out"], axis=0),
            oh.make_node("Identity", ["cond_in"], ["cond_out"]),
            oh.make_node("ReduceSum", ["x_out"], ["total"], keepdims=1),
        ],
        "body",
        [_vi("iter", TP.INT64, []), _vi("cond_in", TP.BOOL, []), _vi("x", shape=None)],
        [_vi("cond_out", TP.BOOL, []), _vi("x_out", shape=None), _vi("total", shape=[1])], [one])
    node = oh.make_node("Loop", ["M", "", "X"], ["Y", "totals"], body=body)
    model = _model([node], [_vi("M", TP.INT64, []), _vi("X", shape=[1])], [_vi("Y"), _vi("totals")])
    ours, theirs = _both(model, {"M": np.array(5, np.int64), "X": np.array([-2], np.float32)})
    assert ours[0].shape == (6,)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


# ---- Scan ----------------------------------------------------------------------------------------------------


def _sum_body(shape):
    return oh.make_graph(
        [oh.make_node("Add", ["s", "x"], ["s_out"]), oh.make_node("Identity", ["s_out"], ["y"])], "body",
        [_vi("s", shape=shape), _vi("x", shape=shape)], [_vi("s_out", shape=shape), _vi("y", shape=shape)])


@pytest.mark.parametrize("in_axis,in_dir,out_axis,out_dir", [
    (0, 0, 0, 0), (1, 1, 0, 0), (-1, 0, 1, 1), (1, 1, -1, 1), (0, 1, 1, 0)])
def test_scan9_axes_and_directions(in_axis, in_dir, out_axis, out_dir):
    # X [3, 4]: sliced along in_axis, the state has the other dim.
    x = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.25 - 1
    state = [x.shape[1 - (in_axis % 2)]]
    node = oh.make_node("Scan", ["S0", "X"], ["S", "Y"], num_scan_inputs=1, body=_sum_body(state),
                        scan_input_axes=[in_axis], scan_input_directions=[in_dir],
                        scan_output_axes=[out_axis], scan_output_directions=[out_dir])
    model = _model([node], [_vi("S0", shape=state), _vi("X", shape=[3, 4])], [_vi("S"), _vi("Y")], opset=11)
    ours, theirs = _both(model, {"S0": np.ones(state, np.float32), "X": x})
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("lens", [None, [3, 1, 2]])
@pytest.mark.parametrize("direction", [0, 1])
def test_scan8_batch_and_sequence_lens(lens, direction):
    batch, seq = 3, 3
    node = oh.make_node("Scan", ["lens" if lens else "", "S0", "X"], ["S", "Y"], num_scan_inputs=1,
                        directions=[direction], body=_sum_body([2]))
    inputs = [_vi("S0", shape=[batch, 2]), _vi("X", shape=[batch, seq, 2])]
    feeds = {"S0": np.linspace(-1, 1, batch * 2, dtype=np.float32).reshape(batch, 2),
             "X": np.arange(batch * seq * 2, dtype=np.float32).reshape(batch, seq, 2)}
    if lens:
        inputs.insert(0, _vi("lens", TP.INT64, [batch]))
        feeds["lens"] = np.array(lens, np.int64)
    model = _model([node], inputs, [_vi("S"), _vi("Y")], opset=8)
    ours, theirs = _both(model, feeds)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)
