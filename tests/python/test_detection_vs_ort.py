"""NonMaxSuppression, RoiAlign, GridSample and AffineGrid models run by onnxmini and by onnxruntime, compared.

Random single-node models built with onnx.helper. NonMaxSuppression must match
exactly (same rows in the same order), including many equal scores, where the
order of equal-score boxes decides which box survives. The float ops compare
within a tolerance that allows for a different summation order of a few
float32 products (|x| <= 3 inputs, <= 64 weights summing to 1: a few ulps of
the largest value). Where onnxruntime has no implementation (volumetric cubic
GridSample, RoiAlign-22) the ONNX reference implementation is the oracle.
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx.reference import ReferenceEvaluator

import onnxmini

ATOL, RTOL = 2e-6, 1e-5


def _model(op, inputs, out_elem, attrs, opset):
    """inputs: (name, elem type) pairs; an empty name is an absent optional input."""
    node = oh.make_node(op, [n for n, _ in inputs], ["y"], **attrs)
    g = oh.make_graph([node], "g", [oh.make_tensor_value_info(n, t, None) for n, t in inputs if n],
                      [oh.make_tensor_value_info("y", out_elem, None)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = 9
    return m


def _ours(m, feeds):
    return onnxmini.InferenceSession(m.SerializeToString()).run(None, feeds)[0]


def _ort(m, feeds):
    return ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


# ---------------------------------------------------------------- NonMaxSuppression

def _nms_case(rng, batches, classes, boxes, center, score_levels):
    if center:
        xy = rng.uniform(0, 10, (batches, boxes, 2))
        wh = rng.uniform(0.5, 4, (batches, boxes, 2))
        b = np.concatenate([xy, wh], axis=2)
    else:  # corners in either diagonal order
        b = rng.uniform(0, 10, (batches, boxes, 4))
    # Few distinct score values: many ties, whose order decides which box survives.
    s = rng.integers(0, score_levels, (batches, classes, boxes)) / score_levels
    return b.astype(np.float32), s.astype(np.float32)


@pytest.mark.parametrize("seed", range(12))
def test_nms_random_matches_onnxruntime(seed):
    rng = np.random.default_rng(seed)
    center = seed % 2
    boxes, scores = _nms_case(rng, 1 + seed % 3, 1 + seed % 4, 5 + 7 * seed, center, 3 + seed % 5)
    feeds = {"boxes": boxes, "scores": scores,
             "max_out": np.array([1 + seed % 6], np.int64),
             "iou": np.array([0.1 * (seed % 8)], np.float32),
             "score_th": np.array([0.2], np.float32)}
    variants = [
        ["boxes", "scores", "max_out", "iou", "score_th"],
        ["boxes", "scores", "max_out", "iou", ""],  # no score threshold
        ["boxes", "scores", "max_out", "", ""],     # iou_threshold 0
        ["boxes", "scores"],                        # max_output_boxes_per_class 0: nothing
    ]
    for opset in (10, 11):
        for names in variants:
            types = {"boxes": TP.FLOAT, "scores": TP.FLOAT, "max_out": TP.INT64, "iou": TP.FLOAT,
                     "score_th": TP.FLOAT, "": TP.FLOAT}
            m = _model("NonMaxSuppression", [(n, types[n]) for n in names], TP.INT64,
                       {"center_point_box": center}, opset)
            f = {n: feeds[n] for n in names if n}
            ours, theirs = _ours(m, f), _ort(m, f)
            assert ours.dtype == np.int64 and ours.shape[1:] == (3,)
            np.testing.assert_array_equal(ours, theirs, err_msg=f"opset {opset} inputs {names}")
    # The cases above must exercise ties and suppression, or they prove little.
    assert len(np.unique(scores)) < scores.size


def test_nms_equal_scores_order_like_onnxruntime():
    # Five disjoint boxes, all with the same score: every box is kept, in ascending index order;
    # with max 2 per class, the two lowest indices win.
    boxes = np.array([[[i * 10, 0, i * 10 + 1, 1] for i in range(5)]], np.float32)
    scores = np.full((1, 1, 5), 0.5, np.float32)
    for max_out, want in ((10, [0, 1, 2, 3, 4]), (2, [0, 1])):
        m = _model("NonMaxSuppression", [("b", TP.FLOAT), ("s", TP.FLOAT), ("m", TP.INT64)], TP.INT64, {}, 11)
        f = {"b": boxes, "s": scores, "m": np.array([max_out], np.int64)}
        ours = _ours(m, f)
        np.testing.assert_array_equal(ours, _ort(m, f))
        assert ours[:, 2].tolist() == want
    # Two identical boxes with equal scores: the lower index survives.
    boxes = np.array([[[0, 0, 1, 1], [5, 5, 6, 6], [0, 0, 1, 1]]], np.float32)
    scores = np.array([[[0.9, 0.1, 0.9]]], np.float32)
    m = _model("NonMaxSuppression", [("b", TP.FLOAT), ("s", TP.FLOAT), ("m", TP.INT64), ("i", TP.FLOAT)],
               TP.INT64, {}, 11)
    f = {"b": boxes, "s": scores, "m": np.array([3], np.int64), "i": np.array([0.5], np.float32)}
    ours = _ours(m, f)
    np.testing.assert_array_equal(ours, _ort(m, f))
    assert ours[:, 2].tolist() == [0, 1]


# ---------------------------------------------------------------- RoiAlign

def _rois(rng, count, height, width, scale):
    x1 = rng.uniform(-2, width / scale, count)
    y1 = rng.uniform(-2, height / scale, count)
    w = rng.uniform(0.2, width / scale, count)
    h = rng.uniform(0.2, height / scale, count)
    return np.stack([x1, y1, x1 + w, y1 + h], axis=1).astype(np.float32)


@pytest.mark.parametrize("seed", range(8))
def test_roialign_random_matches_onnxruntime(seed):
    rng = np.random.default_rng(100 + seed)
    n, c, h, w = 1 + seed % 3, 1 + seed % 4, 5 + seed, 7 + 2 * seed
    scale = [1.0, 0.5, 0.25, 2.0][seed % 4]
    x = rng.uniform(-3, 3, (n, c, h, w)).astype(np.float32)
    rois = _rois(rng, 2 + seed, h, w, scale)
    idx = rng.integers(0, n, len(rois)).astype(np.int64)
    types = [("x", TP.FLOAT), ("rois", TP.FLOAT), ("idx", TP.INT64)]
    for opset, ctms in ((10, [None]), (16, [None, "half_pixel", "output_half_pixel"])):
        for ctm in ctms:
            for mode in ("avg", "max"):
                for ratio in (0, 1, 2):
                    attrs = {"mode": mode, "output_height": 1 + seed % 3, "output_width": 2 + seed % 2,
                             "sampling_ratio": ratio, "spatial_scale": scale}
                    if ctm:
                        attrs["coordinate_transformation_mode"] = ctm
                    m = _model("RoiAlign", types, TP.FLOAT, attrs, opset)
                    f = {"x": x, "rois": rois, "idx": idx}
                    np.testing.assert_allclose(_ours(m, f), _ort(m, f), atol=ATOL, rtol=RTOL,
                                               err_msg=f"opset {opset} {ctm} {mode} ratio {ratio}")


def test_roialign_double_and_opset22_match_reference():
    rng = np.random.default_rng(7)
    x = rng.uniform(-3, 3, (2, 3, 9, 11))
    rois = _rois(rng, 4, 9, 11, 1.0).astype(np.float64)
    idx = np.array([0, 1, 1, 0], np.int64)
    for opset in (16, 22):
        for mode in ("avg", "max"):
            m = _model("RoiAlign", [("x", TP.DOUBLE), ("rois", TP.DOUBLE), ("idx", TP.INT64)], TP.DOUBLE,
                       {"mode": mode, "output_height": 3, "output_width": 2}, opset)
            f = {"x": x, "rois": rois, "idx": idx}
            ours = _ours(m, f)
            assert ours.dtype == np.float64
            np.testing.assert_allclose(ours, ReferenceEvaluator(m).run(None, f)[0], atol=1e-12, rtol=1e-12)


def test_roialign_reversed_rois_match_reference():
    # x2 < x1 and / or y2 < y1 in half_pixel mode: a negative extent, whose adaptive grid has no
    # samples (bins 0). onnxruntime fails on some of these ("Integer overflow"), so the reference is the oracle.
    rng = np.random.default_rng(11)
    x = rng.uniform(-3, 3, (1, 2, 8, 9)).astype(np.float32)
    rois = np.array([[5, 5, 1, 1], [2, 6, 7, 1], [3, 3, 3, 3], [1, 1, 6, 7]], np.float32)
    for mode in ("avg", "max"):
        for ratio in (0, 2):
            m = _model("RoiAlign", [("x", TP.FLOAT), ("r", TP.FLOAT), ("b", TP.INT64)], TP.FLOAT,
                       {"mode": mode, "sampling_ratio": ratio, "output_height": 2, "output_width": 2}, 16)
            f = {"x": x, "r": rois, "b": np.zeros(4, np.int64)}
            np.testing.assert_allclose(_ours(m, f), ReferenceEvaluator(m).run(None, f)[0], atol=ATOL, rtol=RTOL,
                                       err_msg=f"{mode} ratio {ratio}")


# ---------------------------------------------------------------- GridSample

def _oracle_2d(m, feeds, mode, pad):
    """onnxruntime, except cubic + border: there onnxruntime (like PyTorch) clamps each of the 4x4
    tap indices of the unclamped point, while the ONNX reference (the spec's node tests) first clamps
    the point to [0, size-1] and then reads taps; onnxmini follows the reference
    (test_gridsample_cubic_border_follows_reference shows the two differ)."""
    if mode in ("cubic", "bicubic") and pad == "border":
        return ReferenceEvaluator(_as_opset20(m)).run(None, feeds)[0]
    return _ort(m, feeds)


def _as_opset20(m):
    """The ONNX reference knows only the opset-20 mode names."""
    m2 = type(m)()
    m2.CopyFrom(m)
    for a in m2.graph.node[0].attribute:
        if a.name == "mode":
            a.s = {b"bilinear": b"linear", b"bicubic": b"cubic"}.get(a.s, a.s)
    m2.opset_import[0].version = max(m2.opset_import[0].version, 20)
    return m2


@pytest.mark.parametrize("seed", range(6))
def test_gridsample_2d_random_matches_onnxruntime(seed):
    rng = np.random.default_rng(200 + seed)
    n, c, h, w = 1 + seed % 2, 1 + seed % 3, 3 + seed, 4 + seed
    x = rng.uniform(-3, 3, (n, c, h, w)).astype(np.float32)
    # Points well beyond [-1, 1] exercise every padding mode (reflection folds several times).
    grid = rng.uniform(-2.5, 2.5, (n, 5, 6, 2)).astype(np.float32)
    for opset, modes in ((16, ("bilinear", "nearest", "bicubic")), (20, ("linear", "nearest", "cubic"))):
        for mode in modes:
            for pad in ("zeros", "border", "reflection"):
                for align in (0, 1):
                    m = _model("GridSample", [("x", TP.FLOAT), ("g", TP.FLOAT)], TP.FLOAT,
                               {"mode": mode, "padding_mode": pad, "align_corners": align}, opset)
                    f = {"x": x, "g": grid}
                    np.testing.assert_allclose(_ours(m, f), _oracle_2d(m, f, mode, pad), atol=ATOL * 4, rtol=RTOL,
                                               err_msg=f"opset {opset} {mode} {pad} align {align}")


@pytest.mark.parametrize("seed", range(3))
def test_gridsample_volumetric_matches_onnxruntime_and_reference(seed):
    rng = np.random.default_rng(300 + seed)
    x = rng.uniform(-3, 3, (1 + seed % 2, 2, 3, 4, 5)).astype(np.float32)
    grid = rng.uniform(-1.8, 1.8, (x.shape[0], 2, 3, 2, 3)).astype(np.float32)
    for mode in ("linear", "nearest", "cubic"):
        for pad in ("zeros", "border", "reflection"):
            for align in (0, 1):
                m = _model("GridSample", [("x", TP.FLOAT), ("g", TP.FLOAT)], TP.FLOAT,
                           {"mode": mode, "padding_mode": pad, "align_corners": align}, 20)
                f = {"x": x, "g": grid}
                # onnxruntime has no volumetric cubic; the ONNX reference has every mode.
                want = ReferenceEvaluator(m).run(None, f)[0] if mode == "cubic" else _ort(m, f)
                np.testing.assert_allclose(_ours(m, f), want, atol=ATOL * 16, rtol=RTOL,
                                           err_msg=f"{mode} {pad} align {align}")


def test_gridsample_one_pixel_axis_and_nearest_ties():
    rng = np.random.default_rng(12)
    x = rng.uniform(-3, 3, (1, 2, 1, 5)).astype(np.float32)  # one row: every y reflects / clamps to it
    grid = rng.uniform(-2, 2, (1, 3, 4, 2)).astype(np.float32)
    for mode in ("linear", "nearest", "cubic"):
        for pad in ("zeros", "border", "reflection"):
            for align in (0, 1):
                m = _model("GridSample", [("x", TP.FLOAT), ("g", TP.FLOAT)], TP.FLOAT,
                           {"mode": mode, "padding_mode": pad, "align_corners": align}, 20)
                f = {"x": x, "g": grid}
                # The reference divides by zero reflecting on a one-pixel axis with align_corners;
                # onnxruntime and onnxmini read that pixel.
                np.testing.assert_allclose(_ours(m, f), _oracle_2d(m, f, mode, pad), atol=ATOL * 4, rtol=RTOL,
                                           err_msg=f"{mode} {pad} align {align}")
    # Nearest at exactly half-way between pixels rounds half to even, as onnxruntime does.
    x = np.arange(8, dtype=np.float32).reshape(1, 1, 2, 4)
    for align in (0, 1):
        pixels = np.array([0.5, 1.5, 2.5], np.float32)
        gx = pixels / 3 * 2 - 1 if align else (2 * pixels + 1) / 4 - 1
        grid = np.stack([gx, np.full(3, -1 if align else -0.5, np.float32)], -1).reshape(1, 1, 3, 2)
        m = _model("GridSample", [("x", TP.FLOAT), ("g", TP.FLOAT)], TP.FLOAT,
                   {"mode": "nearest", "align_corners": align}, 20)
        f = {"x": x, "g": grid.astype(np.float32)}
        np.testing.assert_array_equal(_ours(m, f), _ort(m, f))


def test_gridsample_double_x_and_float16_grid():
    rng = np.random.default_rng(5)
    x = rng.uniform(-3, 3, (2, 3, 4, 5))
    grid = rng.uniform(-1.3, 1.3, (2, 3, 4, 2)).astype(np.float16)
    m = _model("GridSample", [("x", TP.DOUBLE), ("g", TP.FLOAT16)], TP.DOUBLE, {"mode": "cubic"}, 20)
    ours = _ours(m, {"x": x, "g": grid})
    assert ours.dtype == np.float64
    # The reference would denormalise in float16 arithmetic; given the same points as doubles (exact)
    # it still rounds the pixel coordinates (< 6) to float32: <= 3e-7 off, times a slope of the cubic
    # through values in [-3, 3] of at most ~10 -> 3e-6.
    m64 = _model("GridSample", [("x", TP.DOUBLE), ("g", TP.DOUBLE)], TP.DOUBLE, {"mode": "cubic"}, 20)
    want = ReferenceEvaluator(m64).run(None, {"x": x, "g": grid.astype(np.float64)})[0]
    np.testing.assert_allclose(ours, want, atol=1e-5, rtol=0)


# ---------------------------------------------------------------- AffineGrid

def test_gridsample_cubic_border_follows_reference():
    # g = -1.1 on a 6-pixel axis is x = ((g + 1) * 6 - 1) / 2 = -0.8, left of the image. The reference
    # clamps it to x = 0 first (taps -1..2, weights 0, 1, 0, 0); onnxruntime keeps x = -0.8 and clamps
    # the taps -2..1 to pixels 0, 0, 0, 1, of which pixel 1 has weight -0.024. A ramp tells them apart.
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 1, 6) * 10
    grid = np.array([[[[-1.1, 0.0]]]], np.float32)
    m = _model("GridSample", [("x", TP.FLOAT), ("g", TP.FLOAT)], TP.FLOAT,
               {"mode": "cubic", "padding_mode": "border", "align_corners": 0}, 20)
    f = {"x": x, "g": grid}
    ours = _ours(m, f)
    np.testing.assert_allclose(ours, ReferenceEvaluator(m).run(None, f)[0], atol=1e-5)
    # Clamped point: x = 0 exactly, weights (0, 1, 0, 0) -> pixel 0 = 0.
    np.testing.assert_allclose(ours.ravel(), [0.0], atol=1e-5)
    np.testing.assert_allclose(_ort(m, f).ravel(), [-0.24], atol=1e-4)


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [1, 1, 7, 2], [2, 1, 3, 4, 5], [1, 2, 2, 1, 6]])
def test_affine_grid_matches_onnxruntime(size):
    rng = np.random.default_rng(len(size) * 10 + size[-1])
    spatial = len(size) - 2
    theta = rng.uniform(-2, 2, (size[0], spatial, spatial + 1)).astype(np.float32)
    for align in (0, 1):
        m = _model("AffineGrid", [("t", TP.FLOAT), ("s", TP.INT64)], TP.FLOAT, {"align_corners": align}, 20)
        f = {"t": theta, "s": np.array(size, np.int64)}
        ours = _ours(m, f)
        assert ours.shape == (size[0], *size[2:], spatial)
        if align and 1 in size[2:]:
            continue  # a one-pixel axis with align_corners: see test_affine_grid_one_pixel_axis
        np.testing.assert_allclose(ours, _ort(m, f), atol=ATOL * 4, rtol=RTOL, err_msg=f"align {align}")


def test_affine_grid_one_pixel_axis():
    # With align_corners, pixel i of an L-pixel axis sits at -1 + 2 i / (L - 1): undefined for L = 1.
    # onnxmini uses 0 there, as PyTorch's affine_grid (where these models come from) does; the ONNX
    # reference gives -1 and onnxruntime +1. Without align_corners the one pixel is at 0 everywhere.
    theta = np.array([[[1, 0, 0], [0, 1, 0]]], np.float32)  # identity: the grid is the base coordinates
    for align in (0, 1):
        m = _model("AffineGrid", [("t", TP.FLOAT), ("s", TP.INT64)], TP.FLOAT, {"align_corners": align}, 20)
        ours = _ours(m, {"t": theta, "s": np.array([1, 1, 1, 3], np.int64)})
        xs = [-1, 0, 1] if align else [-2 / 3, 0, 2 / 3]
        np.testing.assert_allclose(ours.reshape(3, 2), [[x, 0] for x in xs], atol=1e-7)


def test_affine_grid_feeds_grid_sample_like_onnxruntime():
    # The usual pairing (spatial transformer): AffineGrid's output sampled by GridSample.
    rng = np.random.default_rng(9)
    theta = rng.uniform(-1, 1, (2, 2, 3)).astype(np.float32)
    x = rng.uniform(-3, 3, (2, 3, 6, 7)).astype(np.float32)
    nodes = [oh.make_node("AffineGrid", ["t", "s"], ["grid"], align_corners=0),
             oh.make_node("GridSample", ["x", "grid"], ["y"], mode="linear", padding_mode="border")]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("t", TP.FLOAT, None),
                                   oh.make_tensor_value_info("s", TP.INT64, None),
                                   oh.make_tensor_value_info("x", TP.FLOAT, None)],
                      [oh.make_tensor_value_info("y", TP.FLOAT, None)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 20)])
    m.ir_version = 9
    f = {"t": theta, "s": np.array([2, 3, 5, 4], np.int64), "x": x}
    np.testing.assert_allclose(_ours(m, f), _ort(m, f), atol=ATOL * 4, rtol=RTOL)
