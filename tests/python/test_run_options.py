"""RunOptions (terminate from another thread, the run's log line), OrtValue and the defaults of
SessionOptions, on onnxmini alone (tests/python/test_ort_parity.py compares with onnxruntime)."""
import os
import threading
import time

import numpy as np
import onnx.helper as oh
import pytest
from onnx import TensorProto as TP

import onnxmini


def _long_loop(in_scan_body=False):
    body = oh.make_graph(
        [oh.make_node("Add", ["x_in", "one"], ["x_out"]), oh.make_node("Identity", ["c_in"], ["c_out"])], "body",
        [oh.make_tensor_value_info("i", TP.INT64, []), oh.make_tensor_value_info("c_in", TP.BOOL, []),
         oh.make_tensor_value_info("x_in", TP.FLOAT, [4])],
        [oh.make_tensor_value_info("c_out", TP.BOOL, []), oh.make_tensor_value_info("x_out", TP.FLOAT, [4])],
        [oh.make_tensor("one", TP.FLOAT, [], [1.0])])
    g = oh.make_graph([oh.make_node("Loop", ["M", "", "X"], ["Y"], body=body)], "long_loop",
                      [oh.make_tensor_value_info("M", TP.INT64, []), oh.make_tensor_value_info("X", TP.FLOAT, [4])],
                      [oh.make_tensor_value_info("Y", TP.FLOAT, [4])])
    return onnxmini.InferenceSession(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]))


def _feed(m):
    return {"M": np.array(m, dtype=np.int64), "X": np.zeros(4, np.float32)}


def test_terminate_from_another_thread_stops_a_long_loop():
    sess = _long_loop()
    ro = onnxmini.RunOptions()
    timer = threading.Timer(0.2, lambda: setattr(ro, "terminate", True))
    started = time.monotonic()
    timer.start()
    with pytest.raises(onnxmini.Fail, match="^Exiting due to terminate flag being set to true.$"):
        sess.run(None, _feed(10**12), ro)  # hours of iterations without the flag
    elapsed = time.monotonic() - started
    assert 0.2 <= elapsed < 5, elapsed
    assert ro.terminate
    # Cleared, the options and the session work again.
    ro.terminate = False
    (y,) = sess.run(None, _feed(7), ro)
    assert np.array_equal(y, np.full(4, 7, np.float32))


def test_terminate_is_per_run_options():
    sess = _long_loop()
    stopped = onnxmini.RunOptions()
    stopped.terminate = True
    with pytest.raises(onnxmini.Fail):
        sess.run(None, _feed(3), stopped)
    (y,) = sess.run(None, _feed(3), onnxmini.RunOptions())
    assert np.array_equal(y, np.full(4, 3, np.float32))


def test_terminate_with_iobinding_is_read_at_start():
    sess = _long_loop()
    ro = onnxmini.RunOptions()
    ro.terminate = True
    b = sess.io_binding()
    for name, v in _feed(3).items():
        b.bind_input(name, v)
    b.bind_output("Y")
    with pytest.raises(onnxmini.Fail):
        sess.run_with_iobinding(b, ro)
    ro.terminate = False
    sess.run_with_iobinding(b, ro)
    assert np.array_equal(b.get_outputs()[0], np.full(4, 3, np.float32))


def test_run_log_line_carries_the_tag(capfd):
    sess = _long_loop()
    ro = onnxmini.RunOptions()
    ro.logid = "tagged-run"
    sess.run(None, _feed(2), ro)
    assert "tagged-run" not in capfd.readouterr().err  # -1: the session's level (warning)
    ro.log_severity_level = 1
    sess.run(None, _feed(2), ro)
    err = capfd.readouterr().err
    assert err.count("run 'tagged-run'") == 1, err
    with pytest.raises(onnxmini.InvalidArgument):
        ro.log_severity_level = 9


def test_run_config_entries():
    ro = onnxmini.RunOptions()
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    assert ro.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    with pytest.raises(RuntimeError, match="does not have configuration with key: absent"):
        ro.get_run_config_entry("absent")


def test_defaults_are_onnxruntimes():
    so = onnxmini.SessionOptions()
    assert so.intra_op_num_threads == 0
    assert so.graph_optimization_level is onnxmini.GraphOptimizationLevel.ORT_ENABLE_ALL
    # 0 threads = one per hardware thread; ENABLE_ALL folds and fuses (fewer nodes than the model).
    from conftest import REPO

    model = str(REPO / "models" / "cnn_small.onnx")
    optimized = onnxmini.InferenceSession(model)
    so0 = onnxmini.SessionOptions()
    so0.graph_optimization_level = onnxmini.GraphOptimizationLevel.ORT_DISABLE_ALL
    plain = onnxmini.InferenceSession(model, so0)
    assert len(optimized.describe()["nodes"]) < len(plain.describe()["nodes"])
    assert os.cpu_count() >= 1


def test_ortvalue_roundtrip_and_errors():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = onnxmini.OrtValue.ortvalue_from_numpy(x)
    assert v.numpy() is x and v.data_ptr() == x.ctypes.data  # by reference, as onnxruntime on the CPU
    assert (v.shape(), v.data_type(), v.element_type(), v.tensor_size_in_bytes()) == ([2, 3], "tensor(float)", 1, 24)
    v.update_inplace(np.ones((2, 3), np.float32))
    assert np.array_equal(x, np.ones((2, 3)))
    with pytest.raises(onnxmini.InvalidArgument):
        v.update_inplace(np.ones((3, 2), np.float32))
    assert onnxmini.OrtValue.ortvalue_from_numpy(np.array(3.0, np.float32)).shape() == []  # a scalar stays 0-d
    strided = onnxmini.OrtValue.ortvalue_from_numpy(np.arange(10, dtype=np.int64)[::2])
    assert strided.numpy().flags.c_contiguous and strided.data_type() == "tensor(int64)"
    typed = onnxmini.OrtValue.ortvalue_from_numpy_with_onnx_type(np.zeros(3, np.uint16), TP.FLOAT16)
    assert typed.numpy().dtype == np.float16
    with pytest.raises(RuntimeError):
        onnxmini.OrtValue.ortvalue_from_numpy(x, "cuda")


def test_ortvalues_in_io_binding():
    sess = _long_loop()
    b = sess.io_binding()
    for name, v in _feed(4).items():
        b.bind_ortvalue_input(name, onnxmini.OrtValue.ortvalue_from_numpy(v))
    y = onnxmini.OrtValue.ortvalue_from_numpy(np.zeros(4, np.float32))
    b.bind_ortvalue_output("Y", y)
    sess.run_with_iobinding(b)
    (out,) = b.get_outputs_as_ortvaluevector()
    assert isinstance(out, onnxmini.OrtValue) and out.numpy() is y.numpy()
    assert np.array_equal(y.numpy(), np.full(4, 4, np.float32))
