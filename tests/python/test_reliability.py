"""onnxmini's reliability options from Python (docs/reliability.md): models newer than this build
are refused unless allow_unknown_opsets (attribute or the 'onnxmini.allow_unknown_opsets' config
entry); max_tensor_bytes / max_intermediate_bytes cap allocations before they happen, the error
naming the node, the shape and the size; the options survive pickling."""
import pickle

import numpy as np
import onnx.helper as oh
import pytest
from onnx import TensorProto as TP

import onnxmini


def _relu_model(opset=13, ir=8):
    g = oh.make_graph([oh.make_node("Relu", ["X"], ["Y"], name="r")], "g",
                      [oh.make_tensor_value_info("X", TP.FLOAT, [64, 4])],
                      [oh.make_tensor_value_info("Y", TP.FLOAT, [64, 4])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = ir
    return m.SerializeToString()


X = np.linspace(-1, 1, 256, dtype=np.float32).reshape(64, 4)


def test_future_opsets_and_ir_versions_are_refused_by_default():
    with pytest.raises(onnxmini.InvalidGraph, match=r"opset 99 of domain 'ai.onnx', newer than the newest"):
        onnxmini.InferenceSession(_relu_model(opset=99))
    with pytest.raises(onnxmini.InvalidGraph, match=r"IR version 99"):
        onnxmini.InferenceSession(_relu_model(ir=99))


@pytest.mark.parametrize("how", ["attribute", "config"])
def test_allow_unknown_opsets_tries_anyway(how):
    so = onnxmini.SessionOptions()
    assert so.allow_unknown_opsets is False
    if how == "attribute":
        so.allow_unknown_opsets = True
    else:
        so.add_session_config_entry("onnxmini.allow_unknown_opsets", "1")
    sess = onnxmini.InferenceSession(_relu_model(opset=99, ir=99), so)
    np.testing.assert_array_equal(sess.run(None, {"X": X})[0], np.maximum(X, 0))
    with pytest.raises(ValueError, match="must be '0' or '1'"):
        so.add_session_config_entry("onnxmini.allow_unknown_opsets", "yes")


def test_memory_caps_name_the_node_shape_and_size():
    so = onnxmini.SessionOptions()
    assert so.max_tensor_bytes == 0 and so.max_intermediate_bytes == 0  # 0: the machine's memory
    so.max_tensor_bytes = 1000
    sess = onnxmini.InferenceSession(_relu_model(), so)
    with pytest.raises(onnxmini.RuntimeException,
                       match=r"Relu 'r': output of shape 64x4 \(float\) needs 1024 bytes, more than max_tensor_bytes 1000"):
        sess.run(None, {"X": X})
    so.max_tensor_bytes = 1024
    np.testing.assert_array_equal(onnxmini.InferenceSession(_relu_model(), so).run(None, {"X": X})[0],
                                  np.maximum(X, 0))


def test_bombs_fail_fast_with_the_default_caps():
    shape = oh.make_tensor("S", TP.INT64, [1], [1 << 45])
    g = oh.make_graph([oh.make_node("ConstantOfShape", ["S"], ["Y"], name="bomb")], "g", [],
                      [oh.make_tensor_value_info("Y", TP.FLOAT, None)], [shape])
    sess = onnxmini.InferenceSession(oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)]).SerializeToString())
    with pytest.raises(onnxmini.RuntimeException, match=r"ConstantOfShape 'bomb': output of shape 35184372088832"):
        sess.run(None, {})


def test_reliability_options_survive_pickling():
    so = onnxmini.SessionOptions()
    so.allow_unknown_opsets = True
    so.max_tensor_bytes = 12345
    so.max_intermediate_bytes = 67890
    back = pickle.loads(pickle.dumps(so))
    assert (back.allow_unknown_opsets, back.max_tensor_bytes, back.max_intermediate_bytes) == (True, 12345, 67890)
