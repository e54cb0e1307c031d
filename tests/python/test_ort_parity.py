"""onnxruntime parity: one script run against onnxruntime and onnxmini by swapping the import, with
the results compared; and the parity table of docs/python.md, checked against what both installed
packages have (scripts/python_parity.py)."""
import importlib
import importlib.util
import pathlib
import threading

import numpy as np
import onnx
import onnx.helper as oh
import onnx.numpy_helper
import pytest
from onnx import TensorProto as TP

from conftest import REPO

MLP = REPO / "models" / "mlp_classifier.onnx"


def _with_metadata(path: pathlib.Path) -> pathlib.Path:
    """A softmax model carrying every field get_modelmeta reports."""
    g = oh.make_graph([oh.make_node("Softmax", ["x"], ["y"], axis=1)], "meta_graph",
                      [oh.make_tensor_value_info("x", TP.FLOAT, ["N", 3])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, ["N", 3])], doc_string="graph doc")
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], producer_name="parity-test", doc_string="model doc",
                      domain="org.example", model_version=42)
    oh.set_model_props(m, {"author": "onnxmini", "purpose": "parity"})
    onnx.save(m, str(path))
    return path


def _with_overridable(path: pathlib.Path) -> pathlib.Path:
    """y = x + b, with the initializer b also listed as a graph input (overridable)."""
    b = onnx.numpy_helper.from_array(np.array([1, 2, 3], np.float32), "b")
    g = oh.make_graph([oh.make_node("Add", ["x", "b"], ["y"])], "over",
                      [oh.make_tensor_value_info("x", TP.FLOAT, ["N", 3]), oh.make_tensor_value_info("b", TP.FLOAT, [3])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, ["N", 3])], [b])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)])
    m.ir_version = 8  # readable by the installed onnxruntime
    onnx.save(m, str(path))
    return path


def _error_name(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001  (the class is what we compare)
        return type(e).__name__
    return None


def scenario(rt, tmp_path):
    """The script: written once against `rt`, onnxruntime's API."""
    state = importlib.import_module(rt.__name__ + ".capi.onnxruntime_pybind11_state")
    out = {}
    default = rt.SessionOptions()
    out["defaults"] = (int(default.graph_optimization_level), default.intra_op_num_threads,
                       default.log_severity_level, default.enable_mem_pattern, default.enable_profiling)
    out["default_level_name"] = default.graph_optimization_level.name
    so = rt.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.add_session_config_entry("my.key", "v")
    out["config"] = (so.get_session_config_entry("session.intra_op.allow_spinning"), so.get_session_config_entry("my.key"))
    out["missing_config"] = _error_name(lambda: so.get_session_config_entry("absent"))

    from_path = rt.InferenceSession(str(MLP), so, providers=["CPUExecutionProvider"])
    from_bytes = rt.InferenceSession(MLP.read_bytes(), providers=["CPUExecutionProvider"])
    out["inputs"] = [(i.name, i.type, i.shape) for i in from_path.get_inputs()]
    out["outputs"] = [(o.name, o.type, o.shape) for o in from_bytes.get_outputs()]
    out["providers"] = (from_path.get_providers(), rt.get_available_providers()[-1])
    meta = rt.InferenceSession(str(_with_metadata(tmp_path / "meta.onnx"))).get_modelmeta()
    out["meta"] = (meta.producer_name, meta.graph_name, meta.graph_description, meta.description, meta.domain,
                   meta.version, meta.custom_metadata_map)

    over = rt.InferenceSession(str(_with_overridable(tmp_path / "over.onnx")))
    bias = np.array([5, 6, 7], np.float32)
    out["overridable"] = ([(i.name, i.type, i.shape) for i in over.get_inputs()],
                          [(i.name, i.type, i.shape) for i in over.get_overridable_initializers()],
                          over.run(None, {"x": np.zeros((2, 3), np.float32)}),
                          over.run(None, {"x": np.zeros((2, 3), np.float32), "b": bias}))

    x = np.random.default_rng(3).standard_normal((50, 4)).astype(np.float32)
    ro = rt.RunOptions()
    ro.logid = "parity"
    ro.log_severity_level = 3
    out["run_options"] = (ro.logid, ro.log_severity_level, ro.log_verbosity_level, ro.terminate)
    out["proba"] = from_path.run(["probabilities"], {"input": x}, ro)[0]
    out["all"] = from_bytes.run(None, {"input": x})

    v = rt.OrtValue.ortvalue_from_numpy(x)
    out["ortvalue"] = (v.shape(), v.data_type(), v.element_type(), v.device_name(), v.is_tensor(), v.has_value(),
                       v.is_tensor_sequence(), v.tensor_size_in_bytes(), v.data_ptr() == x.ctypes.data)
    (res,) = from_path.run_with_ort_values(["probabilities"], {"input": v})
    out["ortvalue_run"] = (type(res).__name__, res.shape(), res.numpy())
    done, got = threading.Event(), []

    def callback(results, user_data, err):
        got.append((results, user_data, err))
        done.set()

    two_threads = rt.SessionOptions()
    two_threads.intra_op_num_threads = 2  # onnxruntime's run_async needs pool threads (onnxmini does not)
    async_sess = rt.InferenceSession(str(MLP), two_threads)
    async_sess.run_async(["probabilities"], {"input": x}, callback, "data")
    assert done.wait(30)
    done.clear()
    async_sess.run_async(["nope"], {"input": x}, callback, "bad")
    assert done.wait(30)
    (ok_results, ok_data, ok_err), (bad_results, bad_data, bad_err) = got
    out["run_async"] = (ok_results, ok_data, ok_err, bad_results, bad_data, bool(bad_err))

    binding = from_path.io_binding()
    binding.bind_ortvalue_input("input", v)
    bound = rt.OrtValue.ortvalue_from_numpy(np.zeros((50, 3), np.float32))
    binding.bind_ortvalue_output("probabilities", bound)
    from_path.run_with_iobinding(binding)
    out["iobinding_ortvalue"] = bound.numpy()
    empty = rt.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32)
    out["from_shape"] = (empty.shape(), empty.numpy().dtype.name)

    out["errors"] = {
        "missing input": _error_name(lambda: from_path.run(None, {"nope": x})),
        "extra input": _error_name(lambda: from_path.run(None, {"input": x, "nope": x})),
        "unknown output": _error_name(lambda: from_path.run(["nope"], {"input": x})),
        "wrong dtype": _error_name(lambda: from_path.run(None, {"input": x.astype(np.float64)})),
        "missing file": _error_name(lambda: rt.InferenceSession(str(tmp_path / "absent.onnx"))),
        "not protobuf": _error_name(lambda: rt.InferenceSession(b"certainly not a model")),
        "cuda ortvalue": _error_name(lambda: rt.OrtValue.ortvalue_from_numpy(x, "cuda")),
    }
    try:
        from_path.run(None, {"input": x.astype(np.float64)})
    except state.InvalidArgument:
        out["caught_by_state_class"] = True
    stop = rt.RunOptions()
    stop.terminate = True
    try:
        from_path.run(None, {"input": x}, stop)
    except state.Fail as e:
        out["terminate"] = str(e).endswith("Exiting due to terminate flag being set to true.")
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    got = {}
    for name in ("onnxruntime", "onnxmini"):
        rt = importlib.import_module(name)  # the swap: the scenario only sees `rt`
        got[name] = scenario(rt, tmp_path_factory.mktemp(name))
    return got


def _compare(a, b, where=""):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype.kind == "f":  # float32 MLP: a few ulps of the largest logit apart
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6, err_msg=where)
        else:
            np.testing.assert_array_equal(b, a, err_msg=where)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _compare(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _compare(a[k], b[k], f"{where}.{k}")
    else:
        assert a == b, f"{where}: onnxruntime {a!r}, onnxmini {b!r}"


@pytest.mark.parametrize(
    "key",
    ["defaults", "default_level_name", "config", "missing_config", "inputs", "outputs", "providers", "meta", "overridable",
     "run_options", "proba", "all", "run_async", "ortvalue", "ortvalue_run", "iobinding_ortvalue", "from_shape", "errors", "caught_by_state_class",
     "terminate"],
)
def test_swapped_import_gives_the_same_results(results, key):
    ort, mini = results["onnxruntime"], results["onnxmini"]
    assert key in ort, f"onnxruntime's run of the scenario lacks {key}"
    assert key in mini, f"onnxmini's run of the scenario lacks {key}"
    _compare(ort[key], mini[key], key)


# ---- the parity table
def _parity_module():
    spec = importlib.util.spec_from_file_location("python_parity", REPO / "scripts" / "python_parity.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_parity_table_in_docs_is_current():
    import onnxmini
    import onnxruntime

    parity = _parity_module()
    expected = parity.table(onnxruntime, onnxmini)
    assert parity.doc_table((REPO / "docs" / "python.md").read_text()) == expected, (
        "docs/python.md's parity table is stale: run .venv/bin/python scripts/python_parity.py --write"
    )


def test_parity_notes_name_real_things():
    import onnxmini
    import onnxruntime

    parity = _parity_module()
    ort_names = set(parity.ort_names(onnxruntime)) | set(parity.EXCEPTIONS)
    for name in list(parity.PARTLY) + list(parity.NOTES):
        assert name in ort_names, f"{name} is not a public name of onnxruntime"
    for name in parity.PARTLY:
        assert parity._lookup(onnxmini, name), f"PARTLY lists {name}, which onnxmini lacks"
    rows = parity.rows(onnxruntime, onnxmini)
    status = {n: s for n, s, _ in rows}
    # The names this issue promised are there.
    for name in ["InferenceSession.get_modelmeta", "InferenceSession.get_providers", "InferenceSession.set_providers",
                 "InferenceSession.run_with_ort_values", "RunOptions.terminate", "RunOptions.logid",
                 "SessionOptions.log_severity_level", "SessionOptions.enable_mem_pattern", "OrtValue.numpy"]:
        assert status[name] in ("yes", "partly"), name
