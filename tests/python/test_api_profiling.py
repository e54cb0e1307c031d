"""Profiling through the package and onnxmini.profiling: the DataFrame the seeds use,
summary/compare numbers checked by hand, plots written."""
import json

import numpy as np
import pytest

import onnxmini
from conftest import REPO
from onnxmini import profiling
from test_api import _add_model

SEED_COLUMNS = ["cat", "pid", "tid", "dur", "ts", "ph", "name", "args_op_name", "args_node_index", "args_provider",
                "args_activation_size", "args_parameter_size", "args_output_size", "args_input_type_shape",
                "args_output_type_shape", "args_thread_scheduling_stats", "op_name", "iteration"]


@pytest.fixture
def trace(tmp_path):
    so = onnxmini.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    so.graph_optimization_level = onnxmini.GraphOptimizationLevel.ORT_DISABLE_ALL  # every node profiled, 'id' too
    sess = onnxmini.InferenceSession(_add_model(), so)
    assert sess.get_profiling_start_time_ns() > 0
    for _ in range(3):
        sess.run(None, {"X": np.ones((2, 3), np.float32)})
    path = sess.end_profiling()
    assert path.startswith(str(tmp_path / "prof")) and path.endswith(".json")
    assert sess.end_profiling() == ""
    return path


def test_profile_dataframe_has_the_seed_columns(trace):
    df = profiling.read(trace)
    for c in SEED_COLUMNS:
        assert c in df.columns, c
    k = df[df["name"].str.endswith("_kernel_time")]
    assert sorted(k["op_name"].unique()) == ["add", "id", "relu"]
    assert sorted(k["iteration"].unique()) == [0, 1, 2]
    assert set(k["args_provider"]) == {"CPUExecutionProvider"}
    # The seeds' aggregation works unchanged.
    agg = df[["dur", "args_op_name"]].groupby("args_op_name").sum()
    assert set(agg.index) == {"Add", "Relu", "Identity"}
    assert {int(i) for i in k["args_node_index"]} == {0, 1, 2}
    assert (df.loc[df["name"].isin(["model_loading_array", "session_initialization"]), "iteration"] == -1).all()


def _events():
    """Two runs of a two-node model, durations chosen for a hand computation."""
    ev = [{"cat": "Session", "pid": 1, "tid": 1, "dur": 100, "ts": 0, "ph": "X", "name": "model_loading_uri", "args": {}}]
    ts = 200
    for run, (dc, dr) in enumerate([(30, 10), (50, 10)]):
        for name, op, d, idx in (("c", "Conv", dc, "0"), ("r", "Relu", dr, "1")):
            args = {"op_name": op, "provider": "CPUExecutionProvider", "node_index": idx,
                    "input_type_shape": [{"float": [1, 2]}], "output_type_shape": [{"float": [1, 2]}]}
            ev.append({"cat": "Node", "pid": 1, "tid": 1, "dur": d, "ts": ts, "ph": "X", "name": f"{name}_kernel_time",
                       "args": args})
            ts += d
        ev.append({"cat": "Session", "pid": 1, "tid": 1, "dur": 5, "ts": ts, "ph": "X", "name": "SequentialExecutor::Execute", "args": {}})
        ev.append({"cat": "Session", "pid": 1, "tid": 1, "dur": 6, "ts": ts, "ph": "X", "name": "model_run", "args": {}})
    return ev


def test_summary_by_hand():
    s = profiling.summary(_events()).set_index("op")
    assert s.loc["Conv", "total_us"] == 80 and s.loc["Conv", "count"] == 2 and s.loc["Conv", "mean_us"] == 40
    assert s.loc["Relu", "total_us"] == 20 and s.loc["Relu", "per_run_us"] == 10
    assert s.loc["Conv", "share_pct"] == pytest.approx(80.0)
    s1 = profiling.summary(_events(), skip_runs=1).set_index("op")
    assert s1.loc["Conv", "total_us"] == 50
    assert list(profiling.summary(_events(), by="node")["node"]) == ["c", "r"]


def test_compare_by_hand():
    base = _events()
    other = json.loads(json.dumps(base))
    for e in other:
        if e["name"] == "c_kernel_time":
            e["dur"] *= 2
        if e["name"] == "r_kernel_time":
            e["args"]["op_name"] = "Sigmoid"
    c = profiling.compare(base, other, by="op").set_index("op")
    assert c.loc["Conv", "base_us"] == 40 and c.loc["Conv", "other_us"] == 80 and c.loc["Conv", "ratio"] == 2
    assert c.loc["Conv", "base_count"] == 2 and c.loc["Sigmoid", "base_count"] == 0
    assert c.loc["Conv", "side"] == "=" and c.loc["Relu", "side"] == "-" and c.loc["Sigmoid", "side"] == "+"
    assert np.isnan(c.loc["Sigmoid", "base_us"]) and np.isnan(c.loc["Relu", "ratio"])
    cs = profiling.compare(base, base, by="shape")
    assert list(cs["side"]) == ["=", "="] and list(cs["ratio"]) == [1.0, 1.0] and list(cs["idx"]) == [0, 0]


def test_reference_onnxruntime_trace_reads():
    f = REPO.parent / "shared" / "reference" / "ort-traces" / "small_ort-1.20_no-opt_1-thread.json"
    if not f.exists():
        pytest.skip("shared reference traces not present")
    df = profiling.read(str(f))
    k = profiling.kernel_events(df)
    assert k["iteration"].nunique() == 6 and len(k) == 6 * 14
    s = profiling.summary(str(f))
    assert s["count"].sum() == 6 * 14
    assert s["total_us"].sum() == k["dur"].sum()


def test_plots_are_written(trace, tmp_path):
    a = profiling.plot_by_op(trace, tmp_path / "by_op.png")
    b = profiling.plot_compare(trace, _events(), tmp_path / "cmp.png", labels=("onnxmini", "synthetic"))
    for p in (a, b):
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
