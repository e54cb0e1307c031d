"""Profiler traces read by the tools that read onnxruntime's: the seeds' pandas
code, onnx-array-api's profile helpers; `onnxmini profile summary|compare` checked
against a hand computation on real onnxruntime traces; structural equality with
onnxruntime on the same model. Uses the CLI at $ONNXMINI_BUILD_DIR/tools/onnxmini."""
import glob
import json
import os
import re
import subprocess
from collections import defaultdict

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ONNXMINI_BUILD_DIR", os.path.join(ROOT, "build"))
CLI = os.path.join(BUILD, "tools", "onnxmini")
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
REF = os.path.join(SHARED, "reference", "ort-traces")

pytestmark = pytest.mark.skipif(not os.path.exists(CLI), reason=f"CLI not built at {CLI}")


def cli(*args, check=True):
    r = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"onnxmini {' '.join(map(str, args))} failed: {r.stderr}")
    return r


def chain_model(path, weird=False):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.random((1, 8), dtype=np.float32), "W")
    b = numpy_helper.from_array(rng.random(8, dtype=np.float32), "B")
    nodes = [
        helper.make_node("Mul", ["X", "W"], ["m"], name="mul0"),
        helper.make_node("Add", ["m", "B"], ["a"], name='we"ird\\na\nme' if weird else "add0"),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("Concat", ["r", "X"], ["c"], axis=1, name="cat"),
        helper.make_node("Transpose", ["c"], ["Y"], name="tr"),
    ]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 8])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def profile(tmp_path, model, *extra, inputs=("X=random:64x8",), repeat=3):
    prefix = tmp_path / "trace"
    # --optimize 0: one event per node of the model, as the no-optimization reference traces.
    args = ["run", model, "--repeat", repeat, "--profile", prefix, "--json", "--optimize", 0, *extra]
    for i in inputs:
        args += ["--input", i]
    out = json.loads(cli(*args).stdout)
    path = out["profile_file"]
    assert re.fullmatch(r"trace_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d(_\d{3}(_\d+)?)?\.json", os.path.basename(path)), path
    return path


def flatten(events):
    """The seeds' json -> rows with args_* columns (as onnx-array-api's ort_profile)."""
    rows = []
    for e in events:
        row = {k: v for k, v in e.items() if k != "args"}
        for k, v in e["args"].items():
            row[f"args_{k}"] = v
        for suffix in ("_kernel_time", "_fence_before", "_fence_after"):
            if e["name"].endswith(suffix):
                row["op_name"] = e["name"][: -len(suffix)]
                break
        rows.append(row)
    return rows


@pytest.mark.parametrize("layout", ["fences", "kernel"])
@pytest.mark.parametrize("threads", [1, 2])
def test_layout_and_checklist(tmp_path, layout, threads):
    path = profile(tmp_path, chain_model(str(tmp_path / "m.onnx"), weird=True), "--profile-layout", layout,
                   "--threads", threads)
    text = open(path, encoding="utf-8").read()
    events = json.loads(text)
    lines = text.split("\n")
    assert lines[0] == "[" and lines[-2] == "]" and lines[-1] == ""
    assert len(lines) == len(events) + 3
    assert events[0]["name"] == "model_loading_uri" and events[1]["name"] == "session_initialization"
    names = [e["name"] for e in events]
    assert names.count("SequentialExecutor::Execute") == 3 and names.count("model_run") == 3
    fences = [n for n in names if n.endswith(("_fence_before", "_fence_after"))]
    assert (len(fences) == 30) == (layout == "fences") and (len(fences) == 0) == (layout == "kernel")
    kernels = [e for e in events if e["name"].endswith("_kernel_time")]
    assert len(kernels) == 15
    assert kernels[1]["name"] == 'we"ird\\na\nme_kernel_time'
    for e in events:
        assert list(e) == ["cat", "pid", "tid", "dur", "ts", "ph", "name", "args"]
        assert all(isinstance(e[k], int) and e[k] >= 0 for k in ("pid", "tid", "dur", "ts"))
    for k in kernels:
        stats = k["args"]["thread_scheduling_stats"]
        assert (stats == "") == (threads == 1)
        if threads > 1:
            assert set(stats) == {"main_thread", "sub_threads"} and len(stats["sub_threads"]) == 1


def test_seed_pandas_groupby(tmp_path):
    pd = pytest.importorskip("pandas")
    path = profile(tmp_path, chain_model(str(tmp_path / "m.onnx")))
    with open(path) as f:
        events = json.load(f)
    df = pd.DataFrame(flatten(events))
    gr = df[["dur", "args_op_name"]].groupby("args_op_name").sum()
    expected = defaultdict(int)
    for e in events:
        if "op_name" in e["args"]:
            expected[e["args"]["op_name"]] += e["dur"]
    assert gr["dur"].to_dict() == dict(expected)
    assert set(gr.index) == {"Mul", "Add", "Relu", "Concat", "Transpose"}
    kernel = df[df["name"].str.endswith("_kernel_time")]
    assert kernel["args_provider"].unique().tolist() == ["CPUExecutionProvider"]
    assert kernel["args_node_index"].astype(int).tolist() == [0, 1, 2, 3, 4] * 3


def test_onnx_array_api_reads_onnxmini_traces(tmp_path):
    pd = pytest.importorskip("pandas")
    ort_profile = pytest.importorskip("onnx_array_api.ort.ort_profile")
    model = chain_model(str(tmp_path / "m.onnx"))
    base = profile(tmp_path, model)
    other = profile(tmp_path, model, "--profile-layout", "kernel")
    dfs = []
    for p in (base, other):
        with open(p) as f:
            df = pd.DataFrame(flatten(json.load(f)))
        post = ort_profile.post_process_df_profile(df)
        assert sorted(post["iteration"].unique().tolist()) == [-1, 0, 1, 2]  # session events before run 0
        agg = ort_profile.post_process_df_profile(df, agg=True, first_it_out=True)
        assert len(agg) > 0
        dfs.append(df)
    merge, gr = ort_profile.merge_ort_profile(dfs[0], dfs[1])
    # Same model on both sides: every (op, shapes, occurrence) row is present on both.
    assert len(gr) == 5
    assert (gr["countbase"] == 3).all() and (gr["countopti"] == 3).all()
    assert all(label.startswith("[=CPU]") for label in gr.index)


def hand_summary(events, skip_runs):
    """Kernel time per op over the runs after skip_runs, computed directly from the JSON."""
    run, totals, counts, all_us = 0, defaultdict(int), defaultdict(int), 0
    for e in events:
        if e["name"] == "SequentialExecutor::Execute":
            run += 1
        elif e["name"].endswith("_kernel_time") and run >= skip_runs:
            totals[e["args"]["op_name"]] += e["dur"]
            counts[e["args"]["op_name"]] += 1
            all_us += e["dur"]
    return totals, counts, all_us, run - skip_runs


@pytest.mark.parametrize("trace", ["small_ort-1.20_no-opt_1-thread.json", "small_ort-1.30_no-opt_1-thread.json",
                                   "small_ort-1.20_opt-all_2-threads.json", "kmeans_ort-1.20_no-opt_1-thread.json"])
@pytest.mark.parametrize("skip", [0, 3])
def test_summary_on_onnxruntime_traces(trace, skip):
    path = os.path.join(REF, trace)
    if not os.path.exists(path):
        pytest.skip("reference traces not found")
    with open(path) as f:
        totals, counts, all_us, runs = hand_summary(json.load(f), skip)
    rows = json.loads(cli("profile", "summary", path, "--skip-runs", skip, "--format", "json").stdout)
    assert {r["op"]: r["total_us"] for r in rows} == dict(totals)
    assert {r["op"]: r["count"] for r in rows} == dict(counts)
    for r in rows:
        assert r["mean_us"] == pytest.approx(totals[r["op"]] / counts[r["op"]], abs=0.05)
        assert r["per_run_us"] == pytest.approx(totals[r["op"]] / runs, abs=0.05)
        assert r["share_pct"] == pytest.approx(100 * totals[r["op"]] / all_us, abs=0.005)
    assert [r["total_us"] for r in rows] == sorted((r["total_us"] for r in rows), reverse=True)
    top = json.loads(cli("profile", "summary", path, "--top", 2, "--format", "json").stdout)
    assert len(top) == 2


def test_summary_by_node_and_shape_and_formats():
    path = os.path.join(REF, "small_ort-1.20_no-opt_1-thread.json")
    if not os.path.exists(path):
        pytest.skip("reference traces not found")
    events = json.load(open(path))
    by_node, by_shape = defaultdict(int), defaultdict(int)
    for e in events:
        if e["name"].endswith("_kernel_time"):
            a = e["args"]
            by_node[e["name"][:-12]] += e["dur"]
            key = (a["op_name"], json.dumps(a["input_type_shape"], separators=(",", ":")),
                   json.dumps(a["output_type_shape"], separators=(",", ":")))
            by_shape[key] += e["dur"]
    rows = json.loads(cli("profile", "summary", path, "--by", "node", "--format", "json").stdout)
    assert {r["node"]: r["total_us"] for r in rows} == dict(by_node)
    rows = json.loads(cli("profile", "summary", path, "--by", "shape", "--format", "json").stdout)
    assert {(r["op"], r["input_type_shape"], r["output_type_shape"]): r["total_us"] for r in rows} == dict(by_shape)
    csv = cli("profile", "summary", path, "--format", "csv").stdout.splitlines()
    assert csv[0] == "op,count,total_us,mean_us,per_run_us,share_pct" and len(csv) == 10
    md = cli("profile", "summary", path, "--format", "markdown").stdout
    assert "| op | count | total_us |" in md and "|---|---:|" in md
    text = cli("profile", "summary", path).stdout
    assert "Conv" in text and "runs: 6" in text
    bad = cli("profile", "summary", path, "--by", "nothing", check=False)
    assert bad.returncode != 0 and "expected op, node, shape or variant" in bad.stderr
    missing = cli("profile", "summary", "/nonexistent.json", check=False)
    assert missing.returncode != 0 and "cannot read profile '/nonexistent.json'" in missing.stderr


def hand_merge(events, skip):
    """The seeds' merge: (op, inputs, outputs, occurrence in run) -> (total dur, count)."""
    out, run, seen = defaultdict(lambda: [0, 0]), 0, defaultdict(int)
    for e in events:
        if e["cat"] == "Session":
            if e["name"] == "SequentialExecutor::Execute":
                run += 1
            seen.clear()
            continue
        if not e["name"].endswith("_kernel_time"):
            continue
        a = e["args"]
        k3 = (a["op_name"], json.dumps(a["input_type_shape"], separators=(",", ":")),
              json.dumps(a["output_type_shape"], separators=(",", ":")))
        idx = seen[k3]
        seen[k3] += 1
        if run >= skip:
            out[k3 + (idx,)][0] += e["dur"]
            out[k3 + (idx,)][1] += 1
    return out, run - skip


def test_compare_on_onnxruntime_traces():
    base_p = os.path.join(REF, "small_ort-1.20_no-opt_1-thread.json")
    other_p = os.path.join(REF, "small_ort-1.20_opt-all_2-threads.json")
    if not os.path.exists(base_p):
        pytest.skip("reference traces not found")
    base, base_runs = hand_merge(json.load(open(base_p)), 3)
    other, other_runs = hand_merge(json.load(open(other_p)), 3)
    rows = json.loads(cli("profile", "compare", base_p, other_p, "--skip-runs", 3, "--format", "json").stdout)
    keys = set(base) | set(other)
    assert len(rows) == len(keys)
    for r in rows:
        k = (r["op"], r["input_type_shape"], r["output_type_shape"], r["idx"])
        side = "=" if k in base and k in other else ("-" if k in base else "+")
        assert r["side"] == side, k
        if k in base:
            assert r["base_us"] == pytest.approx(base[k][0] / base_runs, abs=0.05)
            assert r["base_count"] == base[k][1]
        else:
            assert r["base_us"] is None
        if k in other:
            assert r["other_us"] == pytest.approx(other[k][0] / other_runs, abs=0.05)
        if side == "=" and base[k][0] > 0:
            assert r["ratio"] == pytest.approx(other[k][0] / other_runs / (base[k][0] / base_runs), abs=1e-3)
    assert {r["side"] for r in rows} == {"=", "-", "+"}  # the optimized graph has Reorder nodes, no Add/Sigmoid
    by_op = json.loads(cli("profile", "compare", base_p, other_p, "--by", "op", "--format", "json").stdout)
    assert {r["op"]: r["side"] for r in by_op}["ReorderInput"] == "+"
    assert {r["op"]: r["side"] for r in by_op}["Sigmoid"] == "-"


def kernel_view(events):
    """The first run's node events, without timings and thread stats."""
    out = []
    for e in events[2:]:
        if e["name"] == "SequentialExecutor::Execute":
            break
        args = {k: v for k, v in e["args"].items()
                if k in ("op_name", "node_index", "activation_size", "parameter_size", "output_size",
                         "input_type_shape", "output_type_shape", "provider")}
        out.append((e["name"], args))
    return out


def test_small_matches_onnxruntime_120(tmp_path):
    model = os.path.join(SHARED, "models", "small.onnx")
    ref = os.path.join(REF, "small_ort-1.20_no-opt_1-thread.json")
    if not os.path.exists(model) or not os.path.exists(ref):
        pytest.skip("shared files not found")
    probe = cli("info", model).stdout
    if "(unsupported)" in probe:
        pytest.skip("kernels for small.onnx not all implemented yet")
    path = profile(tmp_path, model, inputs=("input=random:1x3x112x112",), repeat=1)
    assert kernel_view(json.load(open(path))) == kernel_view(json.load(open(ref)))


def test_kmeans_matches_live_onnxruntime(tmp_path):
    """models/kmeans.onnx against onnxruntime (pip) on the same input. onnxruntime
    leaves out of its lists the constant inputs its kernels prepacked (Gemm's B);
    onnxmini lists every input, so such inputs are removed from our side first."""
    ort = pytest.importorskip("onnxruntime")
    model = os.path.join(ROOT, "models", "kmeans.onnx")
    if not os.path.exists(model):
        pytest.skip("models/kmeans.onnx not generated")
    if "(unsupported)" in cli("info", model).stdout:
        pytest.skip("kernels for kmeans.onnx not all implemented yet")
    x = np.random.default_rng(0).random((1000, 20), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    name = onnx.load(model).graph.input[0].name
    ours = json.load(open(profile(tmp_path, model, "--profile-layout", "kernel", inputs=(f"{name}={tmp_path}/x.npy",),
                                  repeat=1)))
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.profile_file_prefix = str(tmp_path / "ort")
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    sess.run(None, {name: x})
    theirs = json.load(open(sess.end_profiling()))
    theirs = [e for e in theirs if not e["name"].endswith(("_fence_before", "_fence_after"))]
    a, b = kernel_view(ours), kernel_view(theirs)
    assert [n for n, _ in a] == [n for n, _ in b]
    for (name_a, x_args), (_, y_args) in zip(a, b):
        for k in ("op_name", "node_index", "activation_size", "output_size", "output_type_shape"):
            assert x_args[k] == y_args[k], (name_a, k)
        if x_args["input_type_shape"] != y_args["input_type_shape"]:
            # Only prepacked constants may be missing on onnxruntime's side.
            assert x_args["op_name"] in ("Gemm", "MatMul"), name_a
            assert all(t in x_args["input_type_shape"] for t in y_args["input_type_shape"])
        else:
            assert x_args["parameter_size"] == y_args["parameter_size"], name_a


def test_escaped_names_stay_valid_json(tmp_path):
    path = profile(tmp_path, chain_model(str(tmp_path / "m.onnx"), weird=True))
    raw = open(path, encoding="utf-8").read()
    assert '"we\\"ird\\\\na\\nme_kernel_time"' in raw
    json.loads(raw)


def test_skip_runs_and_memory(tmp_path):
    path = profile(tmp_path, chain_model(str(tmp_path / "m.onnx")), "--profile-skip-runs", 2, "--memory", repeat=5)
    events = json.load(open(path))
    assert [e["name"] for e in events].count("model_run") == 3
    counters = [e for e in events if e["ph"] == "C"]
    assert len(counters) == 3 * 6 and all(isinstance(e["args"]["bytes"], int) for e in counters)
