"""Control flow in traces: onnxmini's trace of a Loop model has the structure of
onnxruntime's (pip) for the same model and input: the same events in the same order
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


def loop_model(path):
    """pre = Relu(X); y = Loop(M, "", pre) { acc + X }; z = Neg(y)."""
    def vi(name, shape, t=TensorProto.FLOAT):
        return helper.make_tensor_value_info(name, t, shape)
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "X"], ["acc_out"], name="body_add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_id")],
        "loop_body", [vi("iter", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL), vi("acc_in", [2])],
        [vi("cond_out", [], TensorProto.BOOL), vi("acc_out", [2])])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["X"], ["r"], name="pre"),
         helper.make_node("Loop", ["M", "", "r"], ["y"], name="the_loop", body=body),
         helper.make_node("Neg", ["y"], ["z"], name="post")],
        "main", [vi("X", [2]), vi("M", [], TensorProto.INT64)], [vi("z", [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


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
    ort = pytest.importorskip("onnxruntime")
    model = str(tmp_path / "loop.onnx")
    loop_model(model)
    x = np.array([1.0, -2.0], np.float32)
    m = np.array(3, np.int64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "m.npy", m)
    out = json.loads(cli("run", model, "--input", f"X={tmp_path}/x.npy", "--input", f"M={tmp_path}/m.npy",
                         "--repeat", 2, "--profile", tmp_path / "mini", "--profile-layout", "kernel", "--json"))
    ours = out["profile_file"]
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.profile_file_prefix = str(tmp_path / "ort")
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    for _ in range(2):
        sess.run(None, {"X": x, "M": m})
    theirs = sess.end_profiling()
    return ours, theirs


def test_loop_trace_has_onnxruntimes_structure(traces):
    ours, theirs = (json.load(open(p)) for p in traces)
    ours_s, theirs_s = structure(ours), structure(theirs)
    # Same events in the same order: per run 1 + 3 x (2 body nodes + Execute) + Loop + Neg + Execute + model_run.
    assert [n for n, _ in ours_s] == [n for n, _ in theirs_s]
    assert len(ours_s) == 2 * 14
    assert sum(n == "SequentialExecutor::Execute" for n, _ in ours_s) == 2 * 4
    for (name, a), (_, b) in zip(ours_s, theirs_s):
        # onnxruntime's keys are all there with its values; onnxmini's extra keys on top.
        assert set(b) <= set(a), (name, set(b) - set(a))
        assert {k: a[k] for k in b} == b, name


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
