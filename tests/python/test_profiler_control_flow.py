"""Control flow in traces: onnxmini's trace of a Loop model (and of a Scan, and of a
Loop nested in an If) has the structure of onnxruntime's (pip) for the same model and input: the same events in the same order
(body node events, one SequentialExecutor::Execute per iteration, then the Loop's
kernel event), the same args keys and values (timings, thread stats and onnxruntime's
memory-arena keys aside), and `onnxmini profile summary` counts the same events per
node on both traces. docs/profiler.md, "Control flow". Uses the CLI at
$ONNXMINI_BUILD_DIR/tools/onnxmini."""
import json
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ONNXMINI_BUILD_DIR", os.path.join(ROOT, "build"))
CLI = os.path.join(BUILD, "tools", "onnxmini")

pytestmark = pytest.mark.skipif(not os.path.exists(CLI), reason=f"CLI not built at {CLI}")

# Args whose values depend on the run (timings, threads) or that onnxruntime >= 1.2x
# adds from its memory arena, which onnxmini does not have.
VOLATILE = {"thread_scheduling_stats"}


def cli(*args):
    r = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f"onnxmini {' '.join(map(str, args))} failed: {r.stderr}"
    return r.stdout


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def scan_model(path):
    """sf, ys = Scan(s0, xs) { s + x_i, Identity }, 3 steps."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xi"], ["s_out"], name="scan_add"),
         helper.make_node("Identity", ["s_out"], ["yi"], name="scan_id")],
        "scan_body", [vi("s_in", [2]), vi("xi", [2])], [vi("s_out", [2]), vi("yi", [2])])
    save(helper.make_graph([helper.make_node("Scan", ["s0", "xs"], ["sf", "ys"], name="the_scan", body=body,
                                             num_scan_inputs=1)],
                           "main", [vi("s0", [2]), vi("xs", [3, 2])], [vi("sf", [2]), vi("ys", [3, 2])]), path)


def if_loop_model(path):
    """z = Abs(If(c) then { Loop(M, "", X) { acc + X } } else { Neg(X) })."""
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "X"], ["acc_out"], name="body_add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_id")],
        "loop_body", [vi("iter", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL), vi("acc_in", [2])],
        [vi("cond_out", [], TensorProto.BOOL), vi("acc_out", [2])])
    then_g = helper.make_graph([helper.make_node("Loop", ["M", "", "X"], ["t"], name="inner_loop", body=body)],
                               "then", [], [vi("t", [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["X"], ["e"], name="else_neg")], "else", [], [vi("e", [2])])
    save(helper.make_graph([helper.make_node("If", ["c"], ["y"], name="the_if", then_branch=then_g,
                                             else_branch=else_g),
                            helper.make_node("Abs", ["y"], ["z"], name="post")],
                           "main", [vi("X", [2]), vi("M", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL)],
                           [vi("z", [2])]), path)


def profile_both(tmp_path, model, feeds, runs=2):
    """onnxmini's (CLI, kernel layout) and onnxruntime's traces of `runs` runs on `feeds`."""
    ort = pytest.importorskip("onnxruntime")
    args = ["run", model, "--repeat", runs, "--profile", tmp_path / "mini", "--profile-layout", "kernel", "--json"]
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path}/{name}.npy"]
    ours = json.loads(cli(*args))["profile_file"]
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.profile_file_prefix = str(tmp_path / "ort")
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    for _ in range(runs):
        sess.run(None, feeds)
    return ours, sess.end_profiling()


def loop_model(path):
    """pre = Relu(X); y = Loop(M, "", pre) { acc + X }; z = Neg(y)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "X"], ["acc_out"], name="body_add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_id")],
        "loop_body", [vi("iter", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL), vi("acc_in", [2])],
        [vi("cond_out", [], TensorProto.BOOL), vi("acc_out", [2])])
    save(helper.make_graph(
        [helper.make_node("Relu", ["X"], ["r"], name="pre"),
         helper.make_node("Loop", ["M", "", "r"], ["y"], name="the_loop", body=body),
         helper.make_node("Neg", ["y"], ["z"], name="post")],
        "main", [vi("X", [2]), vi("M", [], TensorProto.INT64)], [vi("z", [2])]), path)


def run_events(events):
    """Every event after model loading and session initialization."""
    return [e for e in events if e["name"] not in ("model_loading_uri", "model_loading_array",
                                                   "session_initialization")]


def structure(events):
    """(name, args without timings and onnxruntime-only keys) per event, in order."""
    out = []
    for e in run_events(events):
        args = {k: v for k, v in e["args"].items() if k not in VOLATILE and not k.startswith("mem_")}
        out.append((e["name"], args))
    return out


@pytest.fixture
def traces(tmp_path):
    model = str(tmp_path / "loop.onnx")
    loop_model(model)
    return profile_both(tmp_path, model, {"X": np.array([1.0, -2.0], np.float32), "M": np.array(3, np.int64)})


def same_structure(ours, theirs):
    ours_s, theirs_s = structure(ours), structure(theirs)
    assert [n for n, _ in ours_s] == [n for n, _ in theirs_s]
    for (name, a), (_, b) in zip(ours_s, theirs_s):
        # onnxruntime's keys are all there with its values; onnxmini's extra keys on top.
        assert set(b) <= set(a), (name, set(b) - set(a))
        assert {k: a[k] for k in b} == b, name
    return ours_s


def test_loop_trace_has_onnxruntimes_structure(traces):
    ours, theirs = (json.load(open(p)) for p in traces)
    ours_s = same_structure(ours, theirs)
    # Per run: 1 + 3 x (2 body nodes + Execute) + Loop + Neg + Execute + model_run.
    assert len(ours_s) == 2 * 14
    assert sum(n == "SequentialExecutor::Execute" for n, _ in ours_s) == 2 * 4


def test_scan_trace_has_onnxruntimes_structure(tmp_path):
    model = str(tmp_path / "scan.onnx")
    scan_model(model)
    ours, theirs = profile_both(tmp_path, model, {"s0": np.array([1.0, -2.0], np.float32),
                                                  "xs": np.ones((3, 2), np.float32)})
    ours_s = same_structure(json.load(open(ours)), json.load(open(theirs)))
    assert sum(n == "SequentialExecutor::Execute" for n, _ in ours_s) == 2 * 4  # 3 steps + the run, twice


@pytest.mark.parametrize("cond", [True, False])
def test_loop_in_if_trace_has_onnxruntimes_structure(tmp_path, cond):
    model = str(tmp_path / "if_loop.onnx")
    if_loop_model(model)
    ours, theirs = profile_both(tmp_path, model, {"X": np.array([1.0, -2.0], np.float32),
                                                  "M": np.array(2, np.int64), "c": np.array(cond)})
    ours_s = same_structure(json.load(open(ours)), json.load(open(theirs)))
    # then: 2 iterations + the branch + the run; else: the branch + the run.
    assert sum(n == "SequentialExecutor::Execute" for n, _ in ours_s) == 2 * (4 if cond else 2)


def test_loop_kernel_event_spans_its_iterations(traces):
    for path in traces:
        events = run_events(json.load(open(path)))
        loop = next(e for e in events if e["name"] == "the_loop_kernel_time")
        i = events.index(loop)
        bodies = [e for e in events[:i] if e["name"] == "SequentialExecutor::Execute"]
        assert len(bodies) == 3, path
        for b in bodies:  # ts and dur are truncated apart: 1 us of slack
            assert b["ts"] >= loop["ts"] and b["ts"] + b["dur"] <= loop["ts"] + loop["dur"] + 1, path


def test_summary_counts_body_nodes_and_loop_own_time(traces):
    counts = []
    for path in traces:
        rows = json.loads(cli("profile", "summary", path, "--by", "node", "--format", "json"))
        counts.append({r["node"]: r["count"] for r in rows})
        events = run_events(json.load(open(path)))
        # The Loop's row holds its own time: its kernel events minus the iterations'
        # Executes (the ones since the previous run ended).
        own, iterations = 0, 0
        for e in events:
            if e["name"] == "SequentialExecutor::Execute":
                iterations += e["dur"]
            elif e["name"] == "the_loop_kernel_time":
                own += max(0, e["dur"] - iterations)
            elif e["name"] == "model_run":
                iterations = 0
        assert {r["node"]: r["total_us"] for r in rows}["the_loop"] == own, path
    assert counts[0] == counts[1] == {"pre": 2, "body_add": 6, "body_id": 6, "the_loop": 2, "post": 2}


def test_python_trace_counts_runs_and_iterations(traces):
    from onnxmini._onnxmini import profile as _profile  # what onnxmini.profiling calls
    for path in traces:
        t = _profile.read_trace(path)
        assert (t.num_runs, t.subgraph_executions, t.num_kernel_events) == (2, 6, 18), path
