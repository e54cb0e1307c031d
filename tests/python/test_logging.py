"""Logging from Python (docs/logging.md): SessionOptions.log_severity_level / log_verbosity_level /
logid and onnxmini.set_default_logger_severity, as in onnxruntime. Messages go to fd 2, so the
tests read them with capfd."""
import re

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as onh

import onnxmini

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} \[([VIWEF]):([^\]]+)\] (.*)$")


def model_bytes() -> bytes:
    """Y = Relu(X + B), nodes 'add' and 'relu'."""
    graph = oh.make_graph(
        [oh.make_node("Add", ["X", "B"], ["A"], name="add"), oh.make_node("Relu", ["A"], ["Y"], name="relu")],
        "g",
        [oh.make_tensor_value_info("X", TP.FLOAT, [2, 4])],
        [oh.make_tensor_value_info("Y", TP.FLOAT, [2, 4])],
        [onh.from_array(np.array([1, -1, 0.5, 0], dtype=np.float32), "B")],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def lines(text: str):
    """(letter, tag, message) of each log line; fails on any other stderr output."""
    out = []
    for line in text.splitlines():
        m = LINE.match(line)
        assert m, f"not a log line: {line!r}"
        out.append(m.groups())
    return out


@pytest.fixture(autouse=True)
def default_levels():
    yield
    onnxmini.set_default_logger_severity(2)
    onnxmini.set_default_logger_verbosity(0)


def test_options_default_like_onnxruntime():
    so = onnxmini.SessionOptions()
    assert (so.log_severity_level, so.log_verbosity_level, so.logid) == (-1, 0, "")


def test_verbose_session_names_each_kernel(capfd):
    so = onnxmini.SessionOptions()
    so.log_severity_level = 0
    so.logid = "py-verbose"
    sess = onnxmini.InferenceSession(model_bytes(), so)
    got = lines(capfd.readouterr().err)
    assert {tag for _, tag, _ in got} == {"py-verbose"}
    kernels = [m for letter, _, m in got if letter == "V" and "-> kernel" in m]
    expected = [f"node '{n['name']}' {n['op_type']} (opset 13) -> kernel {n['kernel']}" for n in sess.describe()["nodes"]]
    assert kernels == expected
    assert any(letter == "I" and m.startswith("model loaded in") for letter, _, m in got)


def test_default_warning_level_is_silent(capfd):
    sess = onnxmini.InferenceSession(model_bytes())
    sess.run(None, {"X": np.ones((2, 4), dtype=np.float32)})
    assert capfd.readouterr().err == ""


def test_default_logger_severity_reaches_new_sessions_only(capfd):
    before = onnxmini.InferenceSession(model_bytes())
    onnxmini.set_default_logger_severity(1)
    so = onnxmini.SessionOptions()
    so.logid = "py-info"
    onnxmini.InferenceSession(model_bytes(), so)
    got = lines(capfd.readouterr().err)
    assert got and {(letter, tag) for letter, tag, _ in got} == {("I", "py-info")}
    before.run(None, {"X": np.ones((2, 4), dtype=np.float32)})
    assert capfd.readouterr().err == ""


def test_session_level_overrides_default(capfd):
    onnxmini.set_default_logger_severity(0)
    so = onnxmini.SessionOptions()
    so.log_severity_level = 3
    onnxmini.InferenceSession(model_bytes(), so)
    assert capfd.readouterr().err == ""


def test_bad_levels_raise():
    with pytest.raises(onnxmini.InvalidArgument, match="log severity level 7"):
        onnxmini.set_default_logger_severity(7)
    so = onnxmini.SessionOptions()
    so.log_severity_level = 9
    with pytest.raises(onnxmini.InvalidArgument, match="log_severity_level 9"):
        onnxmini.InferenceSession(model_bytes(), so)
