"""python -m onnxmini.compare: metrics, verdicts, and --per-node on a divergence planted
on purpose (onnxmini runs a model whose Mul scale is 1.001 times onnxruntime's), whose
--repro folder the CLI replays."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as onh

from conftest import REPO, build_dir
from onnxmini import compare
from test_api import make_model


def _chain(scale):
    nodes = [oh.make_node("Add", ["X", "B"], ["a1"], name="add1"), oh.make_node("Mul", ["a1", "S"], ["m1"], name="mul1"),
             oh.make_node("Relu", ["m1"], ["r1"], name="relu1"), oh.make_node("Sub", ["r1", "B"], ["Y"], name="sub1")]
    return make_model(nodes, [oh.make_tensor_value_info("X", TP.FLOAT, ["N", 4])],
                      [oh.make_tensor_value_info("Y", TP.FLOAT, ["N", 4])],
                      [onh.from_array(np.array([1, 2, 3, 4], np.float32), "B"), onh.from_array(np.array([scale], np.float32), "S")])


@pytest.fixture
def models(tmp_path):
    good, planted = tmp_path / "good.onnx", tmp_path / "planted.onnx"
    onnx.save(_chain(2.0), str(good))
    onnx.save(_chain(2.0 * 1.001), str(planted))  # node mul1 replaced by a slightly different Mul
    return good, planted


def cli_path():
    """The CLI: installed with the package, or the build tree's (ONNXMINI_BUILD_DIR, default build/)."""
    from onnxmini._cli import cli_path as installed

    for p in (pathlib.Path(installed()), build_dir() / "tools" / "onnxmini"):
        if p.exists():
            return p
    pytest.fail("onnxmini CLI not found: pip install the package or build the onnxmini_cli target")


def test_ulp_distance():
    one = np.float32(1)
    assert compare.ulp_distance(np.array([one]), np.array([np.nextafter(one, np.float32(2))]))[0] == 1
    assert compare.ulp_distance(np.array([-0.0], np.float32), np.array([0.0], np.float32))[0] == 0
    tiny = np.nextafter(np.float32(0), np.float32(1))
    assert compare.ulp_distance(np.array([-tiny]), np.array([tiny]))[0] == 2
    assert compare.ulp_distance(np.array([1.0]), np.array([np.nextafter(1.0, 2.0)]))[0] == 1


def test_diff_tolerance_and_exact_types():
    ref = np.array([1.0, 100.0], np.float32)
    assert compare.diff_arrays("y", ref + np.float32(5e-6), ref).ok  # within 1e-5 + 1e-4 * 1
    bad = compare.diff_arrays("y", ref * np.float32(1.001), ref)
    assert not bad.ok and bad.mismatches == 2 and bad.max_rel == pytest.approx(1e-3, rel=1e-3)
    assert not compare.diff_arrays("l", np.array([1, 2]), np.array([1, 3])).ok
    assert compare.diff_arrays("l", np.array(["a"]), np.array(["a"])).ok
    assert not compare.diff_arrays("s", np.zeros(3, np.float32), np.zeros(4, np.float32)).ok
    zm = [{0: 0.5, 1: 0.5}]
    assert compare.diff_arrays("z", zm, [{0: 0.5, 1: 0.5}]).ok
    assert not compare.diff_arrays("z", zm, [{0: 0.5, 2: 0.5}]).ok


def test_same_model_passes(models, capsys):
    good, _ = models
    assert compare.main([str(good), "--per-node", "--dim", "N=3"]) == 0
    out = capsys.readouterr().out
    assert "verdict: PASS" in out and "first diverging node" not in out


def test_per_node_finds_the_planted_divergence(models, tmp_path):
    good, planted = models
    r = compare.compare_model(str(planted), ["X=random:6x4"], per_node=True, reference=str(good), repro_dir=str(tmp_path / "repro"))
    assert not r.ok and not r.outputs[0].ok
    dv = r.divergence
    assert (dv.name, dv.op_type, dv.index) == ("mul1", "Mul", 1)
    assert [d.name for d in dv.inputs] == ["a1"] and dv.inputs[0].ok and dv.inputs[0].max_abs == 0
    assert dv.outputs[0].max_rel == pytest.approx(1e-3, rel=1e-2)
    text = compare.format_result(r)
    assert "first diverging node: #1 'mul1' (Mul)" in text and "divergence starts in this node" in text


def test_repro_folder_replays_with_the_cli(models, tmp_path):
    good, planted = models
    repro = tmp_path / "repro"
    rc = compare.main([str(planted), "--reference", str(good), "--repro", str(repro), "--input", "X=random:3x4"])
    assert rc == 1
    data = repro / "test_data_set_0"
    assert sorted(os.listdir(data)) == ["input_0.pb", "output_0.pb"]
    m = onnx.load(str(repro / "model.onnx"))
    assert [n.op_type for n in m.graph.node] == ["Mul"] and [i.name for i in m.graph.initializer] == ["S"]
    a1 = onh.to_array(onnx.load_tensor(str(data / "input_0.pb")))
    expected = onh.to_array(onnx.load_tensor(str(data / "output_0.pb")))  # onnxruntime on the good model
    np.testing.assert_allclose(expected, a1 * np.float32(2.0), rtol=1e-6)
    out = tmp_path / "replayed"
    subprocess.run([str(cli_path()), "run", str(repro / "model.onnx"), "--inputs", str(data), "--save-outputs", str(out)],
                   check=True, capture_output=True)
    replayed = onh.to_array(onnx.load_tensor(str(out / "output_0.pb")))
    # The replay reproduces onnxmini's diverging value, not onnxruntime's.
    np.testing.assert_allclose(replayed, a1 * np.float32(2.002), rtol=1e-6)
    assert not compare.diff_arrays("m1", replayed, expected).ok


def test_command_line_entry_point_and_profile(models):
    good, _ = models
    p = subprocess.run([sys.executable, "-m", "onnxmini.compare", str(good), "--profile", "--repeat", "3"],
                       capture_output=True, text=True, env=os.environ.copy())
    assert p.returncode == 0, p.stderr
    assert "kernel time per run by op" in p.stdout and "Mul" in p.stdout and "onnxmini/ort" in p.stdout


def test_errors_are_one_line(tmp_path, capsys):
    assert compare.main([str(tmp_path / "missing.onnx")]) == 2
    assert "onnxmini.compare: error" in capsys.readouterr().err
    good = tmp_path / "g.onnx"
    onnx.save(_chain(2.0), str(good))
    assert compare.main([str(good), "--input", "Q=zeros:1x4"]) == 2
    assert "unknown inputs: ['Q']" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["mlp_classifier.onnx", "logistic_regression.onnx", "cnn_small.onnx"])
def test_compare_real_models(name, capsys):
    path = REPO / "models" / name
    if not path.exists():
        pytest.skip(f"models/{name} not generated")
    rc = compare.main([str(path), "--per-node"])
    out = capsys.readouterr().out
    assert rc == 0, out
