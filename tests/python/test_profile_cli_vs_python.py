"""One trace analysis: `onnxmini profile summary|compare --format csv` and
onnxmini.profiling.summary/compare on the same traces give the same columns and
the same values (both are include/onnxmini/profile.h). Traces: onnxruntime's
reference traces and one onnxmini writes here."""
import io
import json
import os
import subprocess

import numpy as np
import pandas as pd
import pytest

import onnxmini
from conftest import REPO, build_dir
from onnxmini import profiling
from test_api import _add_model

REF = REPO.parent / "shared" / "reference" / "ort-traces"
CLI = build_dir() / "tools" / "onnxmini"

pytestmark = pytest.mark.skipif(not CLI.exists(), reason=f"CLI not built at {CLI}")


def cli_csv(*args):
    r = subprocess.run([str(CLI), "profile", *map(str, args), "--format", "csv"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # keep_default_na=False: an op named "NaN" stays text; only empty numeric cells become NaN.
    df = pd.read_csv(io.StringIO(r.stdout), keep_default_na=False, na_values=[""])
    return r.stdout, df


def same_frame(cli_df, py_df):
    """Same column names in the same order, same cells (numbers compared as numbers)."""
    assert list(cli_df.columns) == list(py_df.columns)
    assert len(cli_df) == len(py_df) > 0
    for name in cli_df.columns:
        a, b = cli_df[name], py_df[name]
        if pd.api.types.is_numeric_dtype(b):
            assert pd.api.types.is_numeric_dtype(a), name
            np.testing.assert_array_equal(a.to_numpy(float), b.to_numpy(float), err_msg=name)  # NaN == NaN here
        else:
            assert [str(v) for v in a] == [str(v) for v in b], name


@pytest.fixture(scope="module")
def onnxmini_trace(tmp_path_factory):
    so = onnxmini.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path_factory.mktemp("prof") / "mini")
    sess = onnxmini.InferenceSession(_add_model(), so)
    for _ in range(4):
        sess.run(None, {"X": np.ones((2, 3), np.float32)})
    return sess.end_profiling()


def traces(onnxmini_trace):
    out = [onnxmini_trace]
    for name in ("small_ort-1.20_no-opt_1-thread.json", "small_ort-1.20_opt-all_2-threads.json"):
        if (REF / name).exists():
            out.append(str(REF / name))
    return out


@pytest.mark.parametrize("by", ["op", "node", "shape"])
@pytest.mark.parametrize("skip,top", [(0, None), (1, 2)])
def test_summary_cli_and_python_agree(onnxmini_trace, by, skip, top):
    for path in traces(onnxmini_trace):
        args = ["summary", path, "--by", by, "--skip-runs", skip] + (["--top", top] if top else [])
        text, cli = cli_csv(*args)
        py = profiling.summary(path, by=by, skip_runs=skip, top=top)
        same_frame(cli, py)
        expected = {"op": ["op"], "node": ["node", "op"], "shape": ["op", "input_type_shape", "output_type_shape"]}[by]
        assert list(py.columns) == expected + ["count", "total_us", "mean_us", "per_run_us", "share_pct"]
        assert text.splitlines()[0] == ",".join(py.columns)
        # The same numbers from the events list and from read()'s frame.
        with open(path) as f:
            events = json.load(f)
        same_frame(py, profiling.summary(events, by=by, skip_runs=skip, top=top))
        same_frame(py, profiling.summary(profiling.read(path), by=by, skip_runs=skip, top=top))


@pytest.mark.parametrize("by", ["shape", "node", "op"])
def test_compare_cli_and_python_agree(onnxmini_trace, by):
    paths = traces(onnxmini_trace)
    pairs = [(onnxmini_trace, onnxmini_trace)] + ([(paths[1], paths[2])] if len(paths) == 3 else [])
    for base, other in pairs:
        _, cli = cli_csv("compare", base, other, "--by", by, "--skip-runs", 1)
        py = profiling.compare(base, other, by=by, skip_runs=1)
        same_frame(cli, py)
        assert list(py.columns[:1]) == ["side"]
        assert list(py.columns[-5:]) == ["base_us", "other_us", "ratio", "base_count", "other_count"]
        if by == "shape":
            assert py["idx"].dtype.kind == "i"
    if len(paths) == 3:  # the optimized graph has ops the other lacks: empty cells are NaN on both sides
        _, cli = cli_csv("compare", paths[1], paths[2], "--by", "op")
        py = profiling.compare(paths[1], paths[2], by="op")
        assert set(py["side"]) == {"=", "-", "+"}
        assert py.loc[py["side"] == "+", "base_us"].isna().all()
        same_frame(cli, py)


def test_title_lines_are_the_clis(onnxmini_trace):
    r = subprocess.run([str(CLI), "profile", "summary", onnxmini_trace], capture_output=True, text=True, check=True)
    title = profiling.summary(onnxmini_trace).attrs["title"]
    assert r.stdout.splitlines()[: len(title)] == title and title[0] == f"profile: {onnxmini_trace}"


def test_errors_come_from_the_cpp_reader(tmp_path):
    with pytest.raises(onnxmini.InvalidArgument, match="expected op, node, shape or variant"):
        profiling.summary([], by="nothing")
    with pytest.raises(onnxmini.NoSuchFile, match="cannot read profile"):
        profiling.summary(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    with pytest.raises(onnxmini.InvalidArgument, match="is not valid JSON"):
        profiling.compare(str(bad), str(bad))
    with pytest.raises(TypeError):
        profiling.summary(42)
