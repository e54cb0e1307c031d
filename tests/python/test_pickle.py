"""InferenceSession and SessionOptions pickle (docs/python.md, Pickling): the model bytes, every
option and config entry, and the providers travel; the session rebuilt from them gives the same
outputs as the original, in this process and in a fresh one."""
import os
import pickle
import subprocess
import sys

import numpy as np
import onnx
import onnx.helper as oh
import onnx.numpy_helper  # noqa: F401  (onnx.numpy_helper.from_array)
import pytest
from onnx import TensorProto as TP

import onnxmini
from onnxmini import _onnxmini as _C
from onnxmini._options import _ACCEPTED_DEFAULTS, _NATIVE_FIELDS

from conftest import REPO

MODELS = REPO / "models"
RNG = np.random.default_rng(7)


def _feed(sess, rows=16):
    (inp,) = sess.get_inputs()
    width = inp.shape[1]
    return {inp.name: RNG.standard_normal((rows, width)).astype(np.float32)}


def _assert_same_outputs(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y)  # same runtime, same options: bit for bit
        else:
            assert x == y


@pytest.mark.parametrize("model", ["kmeans.onnx", "mlp_classifier.onnx", "logistic_regression.onnx"])
@pytest.mark.parametrize("source", ["path", "bytes", "proto"])
def test_session_roundtrip_gives_the_same_outputs(model, source):
    path = MODELS / model
    arg = {"path": str(path), "bytes": path.read_bytes(), "proto": onnx.load(str(path))}[source]
    sess = onnxmini.InferenceSession(arg)
    clone = pickle.loads(pickle.dumps(sess))
    assert clone is not sess and clone._sess is not sess._sess
    feed = _feed(sess)
    _assert_same_outputs(sess.run(None, feed), clone.run(None, feed))
    assert [(i.name, i.type, i.shape) for i in clone.get_inputs()] == [(i.name, i.type, i.shape) for i in sess.get_inputs()]
    assert clone.get_modelmeta().graph_name == sess.get_modelmeta().graph_name


def _options_off_the_defaults():
    so = onnxmini.SessionOptions()
    so.intra_op_num_threads = 2
    so.intra_op_allow_spinning = False
    so.enable_mem_pattern = False
    so.graph_optimization_level = onnxmini.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    so.log_verbosity_level = 1
    so.logid = "pickled"
    so.optimized_model_filepath = os.devnull  # off the default (""), and the sessions made leave no file
    so.kernels = "reference"
    so.profile_file_prefix = "pickled_profile"
    so.profile_layout = "kernel"
    so.profile_skip_runs = 2
    so.profile_max_runs = 5
    so.profile_max_events = 1234
    so.profile_memory_counters = True
    so.allow_unknown_opsets = True
    so.max_tensor_bytes = 1 << 40
    so.max_intermediate_bytes = 1 << 41
    so.inter_op_num_threads = 3
    so.enable_cpu_mem_arena = False
    so.use_deterministic_compute = True
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.add_session_config_entry("custom.key", "value")
    return so


def test_every_native_option_is_in_the_pickled_state():
    settable = {n for n, a in vars(_C.SessionOptions).items() if isinstance(a, property) and a.fset is not None}
    assert settable == set(_NATIVE_FIELDS), "a SessionOptions field is missing from _NATIVE_FIELDS (or is stale)"


def test_session_options_roundtrip_every_field():
    so = _options_off_the_defaults()
    clone = pickle.loads(pickle.dumps(so))
    assert type(clone) is onnxmini.SessionOptions
    for name in _NATIVE_FIELDS + tuple(_ACCEPTED_DEFAULTS):
        assert getattr(clone, name) == getattr(so, name), name
    assert clone.get_session_config_entry("custom.key") == "value"
    assert clone.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert clone == so
    # and differs from a default one in each of those fields
    default = onnxmini.SessionOptions()
    changed = [n for n in _NATIVE_FIELDS if getattr(default, n) != getattr(so, n)]
    assert set(changed) == set(_NATIVE_FIELDS) - {"enable_profiling", "gemm"}


def test_session_keeps_its_options_and_providers_when_pickled():
    so = _options_off_the_defaults()
    so.profile_file_prefix = "never_written"
    sess = onnxmini.InferenceSession(str(MODELS / "kmeans.onnx"), so, providers=["CPUExecutionProvider"])
    clone = pickle.loads(pickle.dumps(sess))
    assert clone.get_session_options() == so
    assert clone.get_providers() == ["CPUExecutionProvider"]
    feed = _feed(sess)
    _assert_same_outputs(sess.run(None, feed), clone.run(None, feed))


def test_a_session_from_a_changed_file_refuses_to_pickle(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes((MODELS / "kmeans.onnx").read_bytes())
    sess = onnxmini.InferenceSession(str(path))
    pickle.dumps(sess)  # unchanged: fine
    path.write_bytes((MODELS / "mlp_classifier.onnx").read_bytes())
    with pytest.raises(RuntimeError, match="changed since the session was created"):
        pickle.dumps(sess)


def test_unpickled_in_a_fresh_process(tmp_path):
    sess = onnxmini.InferenceSession(str(MODELS / "mlp_classifier.onnx"), _options_off_the_defaults())
    feed = _feed(sess, rows=33)
    (tmp_path / "session.pkl").write_bytes(pickle.dumps(sess))
    np.save(tmp_path / "x.npy", feed["input"])
    script = (
        "import pickle, sys, numpy as np\n"
        "d = sys.argv[1]\n"
        "sess = pickle.load(open(d + '/session.pkl', 'rb'))\n"
        "label, proba = sess.run(None, {'input': np.load(d + '/x.npy')})\n"
        "np.save(d + '/label.npy', label); np.save(d + '/proba.npy', proba)\n"
        "print(sess.get_session_options().logid, sess.get_session_options().get_session_config_entry('custom.key'))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["pickled", "value"]
    label, proba = sess.run(None, feed)
    assert np.array_equal(np.load(tmp_path / "label.npy"), label)
    assert np.array_equal(np.load(tmp_path / "proba.npy"), proba)


def test_per_run_objects_do_not_pickle():
    with pytest.raises(TypeError):
        pickle.dumps(onnxmini.RunOptions())


def test_external_data_is_found_next_to_the_original_file(tmp_path):
    """The pickle holds the model proto; weights stored as external data are read again, next to
    where the model file was, when the session is rebuilt."""
    w = RNG.standard_normal((4, 3)).astype(np.float32)
    g = oh.make_graph([oh.make_node("MatMul", ["x", "w"], ["y"])], "ext",
                      [oh.make_tensor_value_info("x", TP.FLOAT, ["N", 4])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, ["N", 3])],
                      [onnx.numpy_helper.from_array(w, "w")])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)])
    path = tmp_path / "ext.onnx"
    onnx.save_model(m, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin",
                    size_threshold=0)
    assert (tmp_path / "w.bin").exists()
    sess = onnxmini.InferenceSession(str(path))
    clone = pickle.loads(pickle.dumps(sess))
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    (y,) = clone.run(None, {"x": x})
    assert np.array_equal(y, sess.run(None, {"x": x})[0])
    np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-6)
