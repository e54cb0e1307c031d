"""onnxmini's Python API against onnxruntime: every model in models/ and the shared
small.onnx through InferenceSession, metadata, errors, threading, options.

Run with the package installed (pip install .) or importable from a dev build
(see docs/python.md, "Developing").
"""
import pathlib
import threading
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as onh

import onnxmini
from conftest import REPO

MODELS = sorted((REPO / "models").glob("*.onnx"))
SMALL = REPO.parent / "shared" / "models" / "small.onnx"
ALL_MODELS = MODELS + ([SMALL] if SMALL.exists() else [])

# |onnxmini - onnxruntime| <= atol + rtol * |onnxruntime|: the project's float32 tolerance,
# with atol grown for models whose outputs come out of long reductions
# (error ~ sqrt(K) * eps * |typical term|, K = reduction length).
DEFAULT_TOL = (1e-5, 1e-4)
GROWN_TOL = {
    "cnn_small.onnx": (1e-4, 1e-4),  # 3x3 convs over 32 channels: K = 288
    "kmeans.onnx": (1e-4, 1e-4),  # squared distances of O(100) values, then sqrt
    "small.onnx": (2e-4, 1e-4),  # 3x3 convs over 64 channels: K = 576
}


def make_model(nodes, inputs, outputs, inits=(), opset=13):
    g = oh.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = 8  # readable by the installed onnxruntime
    return m


def feeds_for(path: pathlib.Path, model: onnx.ModelProto) -> dict:
    """Deterministic inputs: iris rows for the [N, 4] scikit-learn models, the KMeans batch, noise otherwise."""
    inits = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(7)
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        dtype = oh.tensor_dtype_to_np_dtype(tt.elem_type)
        if path.name.startswith("kmeans") and (REPO / "models" / "kmeans_batch.npy").exists():
            x = np.load(REPO / "models" / "kmeans_batch.npy").astype(dtype)
        elif dims == [None, 4] and dtype == np.float32:
            from sklearn.datasets import load_iris

            x = np.ascontiguousarray(load_iris().data[::7].astype(np.float32))
        else:
            shape = [d if d else 2 for d in dims]
            x = rng.uniform(-1, 1, size=shape).astype(dtype) if dtype.kind == "f" else rng.integers(0, 4, size=shape).astype(dtype)
        feeds[vi.name] = x
    return feeds


def assert_same(got, ref, name, tol):
    """Labels and strings equal, floats within tol, ZipMap outputs key by key."""
    atol, rtol = tol
    if isinstance(ref, list):
        assert isinstance(got, list) and len(got) == len(ref), name
        for g, r in zip(got, ref):
            if isinstance(r, dict):
                assert set(g) == set(r), f"{name}: keys {sorted(g)} vs {sorted(r)}"
                for k in r:
                    np.testing.assert_allclose(g[k], r[k], atol=atol, rtol=rtol, err_msg=f"{name}[{k!r}]")
            else:
                assert_same(g, r, name, tol)
        return
    assert isinstance(got, np.ndarray), f"{name}: {type(got)}"
    assert got.shape == ref.shape, f"{name}: shape {got.shape} vs {ref.shape}"
    assert got.dtype == ref.dtype, f"{name}: dtype {got.dtype} vs {ref.dtype}"
    if ref.dtype.kind == "f":
        np.testing.assert_allclose(got, ref, atol=atol, rtol=rtol, err_msg=name)
    else:
        np.testing.assert_array_equal(got, ref, err_msg=name)


def load_or_skip(path, options=None):
    """Skips (naming the missing op) only when a kernel is not implemented yet."""
    try:
        return onnxmini.InferenceSession(str(path), options)
    except onnxmini.NotImplemented as e:
        pytest.skip(f"op not implemented in onnxmini yet: {e}")


@pytest.mark.parametrize("path", ALL_MODELS, ids=[p.name for p in ALL_MODELS])
def test_model_agrees_with_onnxruntime(path):
    model = onnx.load(str(path))
    sess = load_or_skip(path)
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = feeds_for(path, model)
    names = [o.name for o in ref.get_outputs()]
    got = sess.run(names, feeds)
    want = ref.run(names, feeds)
    for n, g, r in zip(names, got, want):
        assert_same(g, r, f"{path.name}:{n}", GROWN_TOL.get(path.name, DEFAULT_TOL))
    # None = all outputs, in declaration order
    again = sess.run(None, feeds)
    assert len(again) == len(names)


@pytest.mark.parametrize("path", ALL_MODELS, ids=[p.name for p in ALL_MODELS])
def test_inputs_outputs_describe_like_onnxruntime(path):
    sess = load_or_skip(path)
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for mine, theirs in ((sess.get_inputs(), ref.get_inputs()), (sess.get_outputs(), ref.get_outputs())):
        assert [(a.name, a.type) for a in mine] == [(b.name, b.type) for b in theirs]
        for a, b in zip(mine, theirs):
            if b.type.startswith("tensor("):
                assert a.shape == b.shape, a.name


def test_symbolic_and_fixed_dims():
    m = make_model([oh.make_node("Relu", ["X"], ["Y"])], [oh.make_tensor_value_info("X", TP.FLOAT, ["batch", 3])],
                   [oh.make_tensor_value_info("Y", TP.FLOAT, None)])
    sess = onnxmini.InferenceSession(m.SerializeToString())
    (x,) = sess.get_inputs()
    assert (x.name, x.type, x.shape) == ("X", "tensor(float)", ["batch", 3])
    assert "shape=['batch', 3]" in repr(x)


def _add_model():
    return make_model(
        [oh.make_node("Add", ["X", "B"], ["A"], name="add"), oh.make_node("Relu", ["A"], ["Y"], name="relu"),
         oh.make_node("Identity", ["B"], ["Z"], name="id")],
        [oh.make_tensor_value_info("X", TP.FLOAT, ["N", 3])],
        [oh.make_tensor_value_info("Y", TP.FLOAT, ["N", 3]), oh.make_tensor_value_info("Z", TP.FLOAT, [3])],
        [onh.from_array(np.array([1, -2, 3], np.float32), "B")],
    )


def test_load_from_path_bytes_and_modelproto(tmp_path):
    m = _add_model()
    p = tmp_path / "add.onnx"
    onnx.save(m, str(p))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = np.maximum(x + np.array([1, -2, 3], np.float32), 0)
    for src in (str(p), p, m.SerializeToString(), m):
        y, _ = onnxmini.InferenceSession(src).run(None, {"X": x})
        np.testing.assert_array_equal(y, want)


def test_intermediate_outputs_by_name():
    sess = onnxmini.InferenceSession(_add_model())
    x = np.array([[-5, 0, 1]], np.float32)
    (a,) = sess.run(["A"], {"X": x})
    np.testing.assert_array_equal(a, x + np.array([1, -2, 3], np.float32))


def test_output_aliasing_a_weight_is_a_copy():
    """Writing into an output that aliases an initializer must not change the model."""
    sess = onnxmini.InferenceSession(_add_model())
    x = np.zeros((1, 3), np.float32)
    _, z = sess.run(None, {"X": x})
    z[:] = 100
    y, z2 = sess.run(None, {"X": x})
    np.testing.assert_array_equal(z2, [1, -2, 3])
    np.testing.assert_array_equal(y, [[1, 0, 3]])


def test_contiguous_input_is_not_copied_and_others_are():
    x = np.ones((4, 3), np.float32)
    assert onnxmini._onnxmini._feed_data_address(x) == x.ctypes.data
    xt = np.ones((3, 4), np.float32).T  # a non-contiguous view: copied (documented)
    assert onnxmini._onnxmini._feed_data_address(xt) != xt.ctypes.data


def test_non_contiguous_input_gives_the_same_result():
    sess = onnxmini.InferenceSession(_add_model())
    base = np.arange(12, dtype=np.float32).reshape(3, 4) - 6
    x = np.asfortranarray(base[:, :3])
    assert not x.flags.c_contiguous
    np.testing.assert_array_equal(sess.run(["Y"], {"X": x})[0], sess.run(["Y"], {"X": np.ascontiguousarray(x)})[0])


def test_wrong_dtype_is_an_invalid_argument_with_the_cpp_message():
    sess = onnxmini.InferenceSession(_add_model())
    with pytest.raises(onnxmini.InvalidArgument) as e:
        sess.run(None, {"X": np.zeros((1, 3), np.float64)})
    assert str(e.value) == "input 'X': expected dtype float, got double"
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, onnxmini.OnnxMiniError)


def test_bad_feeds_raise_clear_errors():
    sess = onnxmini.InferenceSession(_add_model())
    # A missing input is onnxruntime's ValueError (its Python layer checks feeds first).
    with pytest.raises(ValueError, match=r"Required inputs \(\['X'\]\) are missing from input feed \(\[\]\)"):
        sess.run(None, {})
    with pytest.raises(onnxmini.InvalidArgument, match="unknown input 'Q'"):
        sess.run(None, {"X": np.zeros((1, 3), np.float32), "Q": np.zeros(1, np.float32)})
    with pytest.raises(onnxmini.InvalidArgument, match="dimension 1 must be 3"):
        sess.run(None, {"X": np.zeros((1, 4), np.float32)})
    with pytest.raises(onnxmini.InvalidArgument, match="unknown output 'nope'"):
        sess.run(["nope"], {"X": np.zeros((1, 3), np.float32)})
    with pytest.raises(onnxmini.InvalidArgument, match="no ONNX equivalent"):
        sess.run(None, {"X": np.zeros((1, 3), np.complex64)})


def test_load_errors_map_to_exception_classes(tmp_path):
    with pytest.raises(onnxmini.NoSuchFile, match="nonexistent.onnx"):
        onnxmini.InferenceSession(str(tmp_path / "nonexistent.onnx"))
    with pytest.raises(onnxmini.InvalidGraph):
        onnxmini.InferenceSession(b"this is not a model")
    custom = make_model([oh.make_node("FooBar", ["X"], ["Y"], name="foo", domain="my.domain")],
                        [oh.make_tensor_value_info("X", TP.FLOAT, [1])], [oh.make_tensor_value_info("Y", TP.FLOAT, [1])])
    custom.opset_import.append(oh.make_opsetid("my.domain", 1))
    with pytest.raises(onnxmini.NotImplemented, match="node 'foo' op 'FooBar'"):
        onnxmini.InferenceSession(custom)
    with pytest.raises(TypeError):
        onnxmini.InferenceSession(12)


def test_providers():
    sess = onnxmini.InferenceSession(_add_model(), providers=["CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert onnxmini.get_available_providers() == ["CPUExecutionProvider"]
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        s2 = onnxmini.InferenceSession(_add_model(), providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert s2.get_providers() == ["CPUExecutionProvider"]


def test_session_options_roundtrip_and_validation():
    so = onnxmini.SessionOptions()
    # onnxruntime's defaults: one thread per hardware thread, every graph optimization.
    assert (so.intra_op_num_threads, so.enable_profiling, so.gemm, so.kernels) == (0, False, "builtin", "fast")
    assert so.graph_optimization_level == onnxmini.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.graph_optimization_level = onnxmini.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    so.gemm = "eigen"
    so.kernels = "reference"
    assert (so.graph_optimization_level, so.gemm, so.kernels) == (0, "eigen", "reference")
    with pytest.raises(onnxmini.InvalidArgument, match="unknown GEMM backend 'cuda'"):
        so.gemm = "cuda"
    with pytest.raises(onnxmini.InvalidArgument, match="profile_layout"):
        so.profile_layout = "chrome"


def test_spinning_option_as_onnxruntime_config_entry():
    so = onnxmini.SessionOptions()
    assert so.intra_op_allow_spinning is True
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert so.intra_op_allow_spinning is False
    so.add_session_config_entry("session.intra_op.allow_spinning", "1")
    assert so.intra_op_allow_spinning is True
    with pytest.raises(ValueError, match="must be '0' or '1'"):
        so.add_session_config_entry("session.intra_op.allow_spinning", "yes")
    # Other keys are kept (as onnxruntime), without effect here.
    so.add_session_config_entry("session.use_env_allocators", "1")
    assert so.get_session_config_entry("session.use_env_allocators") == "1"
    # Both settings give the same results on two threads.
    x = {"X": np.random.default_rng(3).standard_normal((300, 300)).astype(np.float32)}
    outs = []
    for spin in ("0", "1"):
        o = onnxmini.SessionOptions()
        o.intra_op_num_threads = 2
        o.add_session_config_entry("session.intra_op.allow_spinning", spin)
        outs.append(onnxmini.InferenceSession(_matmul_model(300), o).run(None, x)[0])
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("gemm,kernels", [("builtin", "reference"), ("openblas", "fast"), ("eigen", "fast")])
def test_gemm_and_kernel_options_agree(gemm, kernels):
    path = REPO / "models" / "mlp_gemm.onnx"
    if not path.exists():
        pytest.skip("models/mlp_gemm.onnx not generated")
    so = onnxmini.SessionOptions()
    so.gemm, so.kernels = gemm, kernels
    sess = load_or_skip(path, so)
    model = onnx.load(str(path))
    feeds = feeds_for(path, model)
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for n, g, r in zip([o.name for o in ref.get_outputs()], sess.run(None, feeds), ref.run(None, feeds)):
        assert_same(g, r, n, DEFAULT_TOL)


def _matmul_model(n):
    w = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    return make_model([oh.make_node("MatMul", ["X", "W"], ["Y"])], [oh.make_tensor_value_info("X", TP.FLOAT, [n, n])],
                      [oh.make_tensor_value_info("Y", TP.FLOAT, [n, n])], [onh.from_array(w, "W")])


def test_gil_is_released_during_run(tmp_path):
    """A Python thread stamps the time while long runs execute; the profile tells when each
    run's graph execution began and ended (system clock, as the stamps). With the GIL held
    during the run no stamp could fall strictly inside that interval. The MatMul grows until
    one run takes 10 ms on this machine (768 took 2.6 ms on an AMD EPYC Zen 5 at 2 threads,
    too short for the 1 ms margins below)."""
    for n in (768, 1024, 1536, 2048, 3072):
        probe = onnxmini.InferenceSession(_matmul_model(n))
        probe.run(None, {"X": np.ones((n, n), np.float32)})
        t0 = time.perf_counter()
        probe.run(None, {"X": np.ones((n, n), np.float32)})
        if time.perf_counter() - t0 >= 0.010:
            break
    so = onnxmini.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "gil")
    sess = onnxmini.InferenceSession(_matmul_model(n), so)
    x = np.ones((n, n), np.float32)
    stamps = []
    stop = threading.Event()

    def spin():
        while not stop.is_set() and len(stamps) < 5_000_000:
            stamps.append(time.time_ns())

    th = threading.Thread(target=spin)
    th.start()
    try:
        for _ in range(3):
            sess.run(None, {"X": x})
    finally:
        stop.set()
        th.join()
    from onnxmini import profiling

    start = sess.get_profiling_start_time_ns()
    ex = profiling.read(sess.end_profiling())
    ex = ex[ex["name"] == "SequentialExecutor::Execute"]
    assert len(ex) == 3
    s = np.array(stamps, dtype=np.int64)
    inside = 0
    for ts, dur in zip(ex["ts"], ex["dur"]):
        lo, hi = start + (ts + 1000) * 1000, start + (ts + dur - 1000) * 1000  # 1 ms margins
        inside += int(np.count_nonzero((s > lo) & (s < hi)))
    assert ex["dur"].max() > 3000, "runs too short to observe"
    assert inside > 0


def test_concurrent_runs_from_threads_agree():
    sess = onnxmini.InferenceSession(_add_model())
    xs = [np.full((64, 3), i, np.float32) for i in range(8)]
    results = [None] * len(xs)

    def work(i):
        for _ in range(50):
            results[i] = sess.run(["Y"], {"X": xs[i]})[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, r in enumerate(results):
        np.testing.assert_array_equal(r, np.maximum(xs[i] + np.array([1, -2, 3], np.float32), 0))


def test_modelmeta_and_describe():
    so = onnxmini.SessionOptions()
    so.graph_optimization_level = onnxmini.GraphOptimizationLevel.ORT_DISABLE_ALL  # the model's nodes one for one
    sess = onnxmini.InferenceSession(_add_model(), so)
    d = sess.describe()
    assert [n["op_type"] for n in d["nodes"]] and {n["name"] for n in d["nodes"]} == {"add", "relu", "id"}
    assert sess.get_modelmeta().graph_name == "g"
    # The default, ORT_ENABLE_ALL, folds the Identity of a constant.
    folded = onnxmini.InferenceSession(_add_model()).describe()
    assert {n["name"] for n in folded["nodes"]} == {"add", "relu"}


def test_non_native_byte_order_is_converted():
    sess = onnxmini.InferenceSession(_add_model())
    x = np.array([[1, -5, 2]], dtype=">f4")
    (y,) = sess.run(["Y"], {"X": x})
    np.testing.assert_array_equal(y, [[2, 0, 5]])
    b = sess.io_binding()
    with pytest.raises(onnxmini.InvalidArgument, match="native byte order"):
        b.bind_input("X", x)


def test_list_input_goes_through_numpy_asarray():
    sess = onnxmini.InferenceSession(_add_model())
    with pytest.raises(onnxmini.InvalidArgument, match="expected dtype float, got double"):
        sess.run(None, {"X": [[1.0, 2.0, 3.0]]})  # numpy's default float64: no silent cast
