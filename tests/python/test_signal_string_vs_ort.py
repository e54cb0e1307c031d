"""Signal and string ops run by onnxmini and by onnxruntime on the same one-node models, compared.

DFT / STFT: both sides return float32; onnxmini transforms in double (an FFT for every
length), onnxruntime in float32 (a naive DFT for lengths that are not powers of two, whose
error grows with n: 4e-3 at n = 1000). So each is compared with numpy's double-precision
FFT: onnxmini must be within float32 output rounding of it (atol = 8 * 2^-24 * max|X|),
and no farther from it than onnxruntime is (plus the same atol). The window functions, MelWeightMatrix and
TfIdfVectorizer compute exact or nearly exact values: compared to 1e-6 (float32 rounding
of the same formula) or exactly (counts). String ops are compared exactly.
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

import onnxmini


def _model(op, inputs, outputs, opset, **attrs):
    node = oh.make_node(op, [i[0] for i in inputs], [o[0] for o in outputs], **attrs)
    graph = oh.make_graph([node], "g", [oh.make_tensor_value_info(n, t, None) for n, t in inputs if n],
                          [oh.make_tensor_value_info(n, t, None) for n, t in outputs])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)]).SerializeToString()


def _both(model, feeds):
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = onnxmini.InferenceSession(model).run(None, feeds)
    return got, want


def _check_against_exact(got, want, exact):
    """got (onnxmini) within float32 rounding of exact, and no farther than want (onnxruntime)."""
    assert got.shape == want.shape == exact.shape and got.dtype == want.dtype
    atol = 8 * 2.0**-24 * max(1.0, float(np.abs(exact).max()))
    np.testing.assert_allclose(got, exact, rtol=0, atol=atol)
    assert np.abs(got - exact).max() <= np.abs(want - exact).max() + atol


def _exact_dft(x, axis, length, inverse, onesided):
    """numpy's double-precision DFT in the ONNX layout ([..., 2] re/im; the inverse real FFT gives [..., 1])."""
    xd = x.astype(np.float64)
    c = xd[..., 0] + (1j * xd[..., 1] if xd.shape[-1] == 2 else 0)
    n = length or (2 * (x.shape[axis] - 1) if inverse and onesided else x.shape[axis])
    if inverse and onesided:
        return np.fft.irfft(c, n=n, axis=axis)[..., None]
    y = np.fft.ifft(c, n=n, axis=axis) if inverse else np.fft.fft(c, n=n, axis=axis)
    if onesided:
        y = np.take(y, range(n // 2 + 1), axis=axis)
    return np.stack([y.real, y.imag], -1)


DFT_CASES = [  # (shape, opset, attrs, dft_length)
    ((2, 16, 1), 17, {}, None), ((2, 12, 2), 17, {}, None), ((3, 13, 1), 17, {"onesided": 1}, None),
    ((2, 10, 2), 17, {"inverse": 1}, None), ((2, 9, 2), 17, {}, 16), ((2, 20, 2), 17, {}, 13),
    ((1, 1000, 1), 17, {"onesided": 1}, None), ((2, 1024, 2), 17, {}, None), ((2, 3, 11, 2), 17, {"axis": 2}, None),
    ((2, 24, 2), 20, {}, None), ((2, 97, 2), 20, {"inverse": 1}, None), ((4, 6, 5, 1), 20, {"onesided": 1}, None),
]


@pytest.mark.parametrize("case", range(len(DFT_CASES)))
def test_dft_matches_onnxruntime(case):
    shape, opset, attrs, length = DFT_CASES[case]
    rng = np.random.default_rng(case)
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    inputs = [("x", TP.FLOAT), ("len" if length else "", TP.INT64)]
    feeds = {"x": x}
    if length:
        feeds["len"] = np.array(length, dtype=np.int64)
    if opset >= 20:
        inputs.append(("axis", TP.INT64))
        feeds["axis"] = np.array(len(shape) - 2 if attrs.get("onesided") else -2, dtype=np.int64)
    got, want = _both(_model("DFT", inputs, [("y", TP.FLOAT)], opset, **attrs), feeds)
    axis = int(feeds["axis"]) % len(shape) if opset >= 20 else attrs.get("axis", 1)
    exact = _exact_dft(x, axis, length, attrs.get("inverse", 0), attrs.get("onesided", 0))
    _check_against_exact(got[0], want[0], exact)


@pytest.mark.parametrize("frame_length,step,onesided,window", [(16, 4, 1, True), (13, 5, 0, True), (32, 8, 1, False)])
def test_stft_matches_onnxruntime(frame_length, step, onesided, window):
    rng = np.random.default_rng(frame_length)
    x = rng.uniform(-1, 1, (2, 200, 1)).astype(np.float32)
    feeds = {"x": x, "step": np.array(step, dtype=np.int64)}
    inputs = [("x", TP.FLOAT), ("step", TP.INT64)]
    if window:
        feeds["w"] = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(frame_length) / frame_length)).astype(np.float32)
        inputs.append(("w", TP.FLOAT))
    else:
        inputs.append(("", TP.FLOAT))
        feeds["fl"] = np.array(frame_length, dtype=np.int64)
        inputs.append(("fl", TP.INT64))
    got, want = _both(_model("STFT", inputs, [("y", TP.FLOAT)], 17, onesided=onesided), feeds)
    frames = (200 - frame_length) // step + 1
    w = feeds["w"].astype(np.float64) if window else np.ones(frame_length)
    segs = np.stack([x[:, f * step:f * step + frame_length, 0] * w for f in range(frames)], axis=1)
    spec = np.fft.fft(segs, axis=-1)[..., :frame_length // 2 + 1 if onesided else frame_length]
    _check_against_exact(got[0], want[0], np.stack([spec.real, spec.imag], -1))


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_windows_match_onnxruntime(op, periodic):
    for size in (1, 2, 5, 10, 64):
        got, want = _both(_model(op, [("n", TP.INT64)], [("y", TP.FLOAT)], 17, periodic=periodic),
                          {"n": np.array(size, dtype=np.int64)})
        assert got[0].shape == want[0].shape
        if size == 1 and not periodic:
            continue  # N = 0: onnxruntime divides by zero (NaN); onnxmini returns numpy's [1]
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("params", [(8, 64, 8000, 100.0, 3500.0), (20, 512, 16000, 0.0, 8000.0),
                                    (40, 400, 22050, 60.0, 7600.0), (3, 16, 100, 5.0, 40.0)])
def test_mel_weight_matrix_matches_onnxruntime(params):
    mel, dft, rate, lo, hi = params
    feeds = {"m": np.array(mel, np.int64), "d": np.array(dft, np.int64), "r": np.array(rate, np.int64),
             "lo": np.array(lo, np.float32), "hi": np.array(hi, np.float32)}
    inputs = [("m", TP.INT64), ("d", TP.INT64), ("r", TP.INT64), ("lo", TP.FLOAT), ("hi", TP.FLOAT)]
    got, want = _both(_model("MelWeightMatrix", inputs, [("y", TP.FLOAT)], 17), feeds)
    assert got[0].shape == want[0].shape
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("seed", range(12))
def test_tfidf_vectorizer_matches_onnxruntime(seed):
    rng = np.random.default_rng(seed)
    mode = ["TF", "IDF", "TFIDF"][seed % 3]
    strings = seed % 4 == 3
    vocab = 6
    # Distinct n-grams: onnxruntime (and onnxmini) refuse a pool that repeats one.
    unigrams = rng.choice(vocab, 4, replace=False)
    bi = rng.choice(vocab**2, 5, replace=False)
    bigrams = np.stack([bi // vocab, bi % vocab], 1)
    tri = rng.choice(vocab**3, 2, replace=False)
    trigrams = np.stack([tri // vocab**2, tri // vocab % vocab, tri % vocab], 1)
    pool = np.concatenate([unigrams, bigrams.ravel(), trigrams.ravel()])
    counts = [0, 4, 14]
    n_ngrams = 4 + 5 + 2
    indexes = rng.permutation(n_ngrams)
    min_gram, max_gram = sorted(rng.integers(1, 4, 2))
    attrs = dict(mode=mode, min_gram_length=int(min_gram), max_gram_length=int(max_gram),
                 max_skip_count=int(rng.integers(0, 3)), ngram_counts=counts, ngram_indexes=[int(i) for i in indexes])
    if mode != "TF" or seed % 2:
        attrs["weights"] = [float(w) for w in rng.uniform(0.5, 2, n_ngrams)]
    x = rng.integers(0, vocab, (3, 12))
    if strings:
        attrs["pool_strings"] = [f"w{v}" for v in pool]
        feeds = {"x": np.array([[f"w{v}" for v in row] for row in x], dtype=object)}
        in_type = TP.STRING
    else:
        attrs["pool_int64s"] = [int(v) for v in pool]
        feeds = {"x": x.astype(np.int64 if seed % 2 else np.int32)}
        in_type = TP.INT64 if seed % 2 else TP.INT32
    got, want = _both(_model("TfIdfVectorizer", [("x", in_type)], [("y", TP.FLOAT)], 9, **attrs), feeds)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=0)


def _split_model(attrs):
    return oh.make_model(oh.make_graph(
        [oh.make_node("StringSplit", ["x"], ["y", "z"], **attrs)], "g",
        [oh.make_tensor_value_info("x", TP.STRING, None)],
        [oh.make_tensor_value_info("y", TP.STRING, None), oh.make_tensor_value_info("z", TP.INT64, None)]),
        opset_imports=[oh.make_opsetid("", 20)]).SerializeToString()


def test_string_ops_match_onnxruntime():
    words = np.array(["Monday", "the", "THE", "Straße", "naïve", "x"], dtype=object)
    for action in ("LOWER", "UPPER", "NONE"):
        for sensitive in (0, 1):
            model = _model("StringNormalizer", [("x", TP.STRING)], [("y", TP.STRING)], 10, case_change_action=action,
                           is_case_sensitive=sensitive, stopwords=["the", "monday"], locale="C.UTF-8")
            got, want = _both(model, {"x": words})
            assert got[0].tolist() == want[0].tolist(), (action, sensitive)
    # StringSplit: onnxmini follows Python's str.split, as onnx's reference does; onnxruntime
    # differs on two points, checked separately below: "".split(",") is [""] (1 piece, onnxruntime
    # counts 0), and a whitespace split cut by maxsplit keeps the remainder's trailing spaces.
    text = np.array([["a,b,,c", "x"], ["  x y  z", "no-delim"]], dtype=object)
    for attrs in ({"delimiter": ","}, {}, {"maxsplit": 1}, {"delimiter": ",", "maxsplit": 2}):
        model = _split_model(attrs)
        got, want = _both(model, {"x": text})
        assert got[0].tolist() == want[0].tolist(), attrs
        assert got[1].tolist() == want[1].tolist(), attrs
    got = onnxmini.InferenceSession(_split_model({"delimiter": ","})).run(None, {"x": np.array([""], dtype=object)})
    assert got[0].tolist() == [[""]] and got[1].tolist() == [1] and "".split(",") == [""]
    got = onnxmini.InferenceSession(_split_model({"maxsplit": 1})).run(None, {"x": np.array([" a b c "], dtype=object)})
    assert got[0].tolist() == [" a b c ".split(None, 1)] == [["a", "b c "]]
    got, want = _both(_model("StringConcat", [("a", TP.STRING), ("b", TP.STRING)], [("y", TP.STRING)], 20),
                      {"a": np.array([["a"], ["bc"]], dtype=object), "b": np.array(["x", "", "yz"], dtype=object)})
    assert got[0].tolist() == want[0].tolist()
    urls = np.array(["www.google.com", "www.facebook.com", "www.bbc.co.uk", "google.com", ""], dtype=object)
    for pattern in (r"www\.[\w.-]+\.\bcom", r"(www\.)?google\.com", r"[a-z]+(\.[a-z]+)*", r"x*"):
        got, want = _both(_model("RegexFullMatch", [("x", TP.STRING)], [("y", TP.BOOL)], 20, pattern=pattern),
                          {"x": urls})
        assert got[0].tolist() == want[0].tolist(), pattern


NORM_CASES = [  # (op, opset, input shape, attrs, extra inputs as shapes)
    ("LpNormalization", 22, (3, 4, 5), {"p": 1, "axis": 1}, []),
    ("LpNormalization", 22, (3, 4, 5), {"p": 2}, []),
    ("MeanVarianceNormalization", 13, (2, 3, 4, 5), {}, []),
    ("MeanVarianceNormalization", 13, (2, 3, 4, 5), {"axes": [1, 3]}, []),
    ("GroupNormalization", 21, (2, 6, 4, 3), {"num_groups": 3, "epsilon": 1e-3}, [(6,), (6,)]),
    ("GroupNormalization", 18, (2, 6, 7), {"num_groups": 2}, [(2,), (2,)]),
    ("LpPool", 18, (2, 3, 9, 8), {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 1, 1], "p": 3}, []),
    ("LpPool", 18, (1, 2, 10, 10), {"kernel_shape": [2, 3], "dilations": [2, 2], "ceil_mode": 1, "strides": [2, 2]}, []),
    ("LpPool", 11, (1, 2, 7, 7), {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]}, []),
    ("GlobalLpPool", 2, (2, 3, 5, 4), {"p": 2}, []),
]


@pytest.mark.parametrize("case", range(len(NORM_CASES)))
def test_normalization_and_lp_ops_match_onnxruntime(case):
    op, opset, shape, attrs, extras = NORM_CASES[case]
    rng = np.random.default_rng(case)
    feeds = {"x": rng.uniform(-2, 2, shape).astype(np.float32)}
    inputs = [("x", TP.FLOAT)]
    for k, s in enumerate(extras):
        feeds[f"p{k}"] = rng.uniform(0.5, 1.5, s).astype(np.float32)
        inputs.append((f"p{k}", TP.FLOAT))
    try:
        want = ort.InferenceSession(_model(op, inputs, [("y", TP.FLOAT)], opset, **attrs),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
    except Exception as e:  # noqa: BLE001 - an op / opset onnxruntime lacks
        pytest.skip(f"onnxruntime cannot run {op}-{opset}: {str(e)[:120]}")
    got = onnxmini.InferenceSession(_model(op, inputs, [("y", TP.FLOAT)], opset, **attrs)).run(None, feeds)
    assert got[0].shape == want[0].shape
    # float32 results of the same formula; onnxmini accumulates in double: a few float32 ulps of the
    # largest terms (normalized values are O(1); pooled p-norms O(window size)).
    np.testing.assert_allclose(got[0], want[0], rtol=2e-5, atol=2e-5)
