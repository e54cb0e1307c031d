"""io binding: bound arrays are used in place (outputs written into the caller's array)."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as onh

import onnxmini
from conftest import REPO
from test_api import feeds_for, load_or_skip, make_model

import onnx


def _model():
    return make_model(
        [oh.make_node("Mul", ["X", "S"], ["M"], name="mul"), oh.make_node("Relu", ["M"], ["Y"], name="relu"),
         oh.make_node("Reshape", ["Y", "shape"], ["R"], name="reshape")],
        [oh.make_tensor_value_info("X", TP.FLOAT, ["N", 4])],
        [oh.make_tensor_value_info("Y", TP.FLOAT, ["N", 4]), oh.make_tensor_value_info("R", TP.FLOAT, None)],
        [onh.from_array(np.array([1, -2, 3, -4], np.float32), "S"), onh.from_array(np.array([-1], np.int64), "shape")],
    )


def _expected(x):
    y = np.maximum(x * np.array([1, -2, 3, -4], np.float32), 0)
    return y, y.reshape(-1)


def test_bound_output_is_written_in_place():
    sess = onnxmini.InferenceSession(_model())
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    out = np.full((5, 4), np.nan, np.float32)
    b = sess.io_binding()
    b.bind_input("X", x)
    b.bind_output("Y", out)
    sess.run_with_iobinding(b)
    np.testing.assert_array_equal(out, _expected(x)[0])
    (got,) = b.get_outputs()
    assert got is out and np.shares_memory(got, out)
    # The next run with new input data writes the same array again.
    x[:] = -x
    sess.run_with_iobinding(b)
    np.testing.assert_array_equal(out, _expected(x)[0])


def test_bound_view_output_is_filled():
    """R is a Reshape view of Y: the runtime copies it into the bound array."""
    sess = onnxmini.InferenceSession(_model())
    x = np.ones((2, 4), np.float32)
    out = np.zeros(8, np.float32)
    b = sess.io_binding()
    b.bind_input("X", x)
    b.bind_output("R", out)
    sess.run_with_iobinding(b)
    np.testing.assert_array_equal(out, _expected(x)[1])


def test_unbound_outputs_are_allocated_and_match_run():
    sess = onnxmini.InferenceSession(_model())
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    b = sess.io_binding()
    b.bind_cpu_input("X", x)
    b.bind_output("Y", "cpu")
    b.bind_output("M")
    sess.run_with_iobinding(b)
    y, m = b.copy_outputs_to_cpu()
    ry, rm = sess.run(["Y", "M"], {"X": x})
    np.testing.assert_array_equal(y, ry)
    np.testing.assert_array_equal(m, rm)


def test_no_bound_outputs_means_all_graph_outputs():
    sess = onnxmini.InferenceSession(_model())
    x = np.ones((1, 4), np.float32)
    b = sess.io_binding()
    b.bind_input("X", x)
    sess.run_with_iobinding(b)
    y, r = b.get_outputs()
    np.testing.assert_array_equal(y, _expected(x)[0])
    np.testing.assert_array_equal(r, _expected(x)[1])


def test_binding_errors():
    sess = onnxmini.InferenceSession(_model())
    b = sess.io_binding()
    with pytest.raises(onnxmini.InvalidArgument, match="C-contiguous"):
        b.bind_input("X", np.ones((4, 3), np.float32).T)
    b.bind_input("X", np.ones((2, 4), np.float32))
    ro = np.zeros((2, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(onnxmini.InvalidArgument, match="read-only"):
        b.bind_output("Y", ro)
    b.bind_output("Y", np.zeros((3, 4), np.float32))
    with pytest.raises(onnxmini.InvalidArgument, match=r"bound output 'Y' is float 3x4, the model produces float 2x4"):
        sess.run_with_iobinding(b)
    b.clear_binding_outputs()
    b.bind_output("Y", np.zeros((2, 4), np.float64))
    with pytest.raises(onnxmini.InvalidArgument, match="bound output 'Y'"):
        sess.run_with_iobinding(b)
    with pytest.raises(onnxmini.InvalidArgument, match="only the 'cpu' device"):
        b.bind_output("Y", "cuda")


def test_iobinding_matches_onnxruntime_on_linear_regression():
    path = REPO / "models" / "linear_regression.onnx"
    if not path.exists():
        pytest.skip("models/linear_regression.onnx not generated")
    sess = load_or_skip(path)
    model = onnx.load(str(path))
    feeds = feeds_for(path, model)
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (name,) = feeds
    out_info = sess.get_outputs()[0]
    (want,) = ref.run([out_info.name], feeds)
    out = np.empty_like(want)
    b = sess.io_binding()
    b.bind_input(name, feeds[name])
    b.bind_output(out_info.name, out)
    sess.run_with_iobinding(b)
    np.testing.assert_allclose(out, want, atol=1e-5, rtol=1e-4)
    assert np.shares_memory(b.get_outputs()[0], out)
