"""Reading and analysing profiles (onnxmini's and onnxruntime's traces alike).

``read`` flattens a trace into a pandas DataFrame the way the seed notebooks and
onnx-array-api do: one row per event, every ``args`` key as an ``args_<key>``
column, ``op_name`` = the event name without its ``_kernel_time`` /
``_fence_before`` / ``_fence_after`` suffix (the node name), ``event_name`` = that
suffix, ``iteration`` = the run the event belongs to.

``iteration`` counts runs properly: node events, ``SequentialExecutor::Execute``
and ``model_run`` of run k all get k; session events (loading, initialization)
get -1. (onnx-array-api increments at each ``SequentialExecutor::Execute`` row,
and since traces list a run's node events before its Execute event, its node rows
are numbered one lower.)
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Union

import pandas as pd

_SUFFIXES = ("_kernel_time", "_fence_before", "_fence_after")
_SESSION_RUN_EVENTS = ("SequentialExecutor::Execute", "model_run")

Trace = Union[str, os.PathLike, List[Dict[str, Any]], pd.DataFrame]


def read(trace: Trace) -> pd.DataFrame:
    """Flattens a trace (file path, or the list ``json.load`` returns) into a DataFrame.

    Columns: cat, pid, tid, dur, ts, ph, name, args_* (op_name, provider,
    node_index, activation_size, parameter_size, output_size, input_type_shape,
    output_type_shape, thread_scheduling_stats, and any extra key), op_name,
    event_name, iteration. ``args_node_index`` and the ``*_size`` columns stay
    strings as in the file; ``dur``/``ts`` are integers (microseconds).
    """
    if isinstance(trace, pd.DataFrame):
        return trace
    if isinstance(trace, (str, os.PathLike)):
        with open(trace, "r", encoding="utf-8") as f:
            events = json.load(f)
    else:
        events = trace
    if not isinstance(events, list):
        raise ValueError("a profile trace is a JSON array of events")
    rows = []
    run = 0
    for ev in events:
        row = {k: v for k, v in ev.items() if k != "args"}
        args = ev.get("args")
        if isinstance(args, dict):
            for k, v in args.items():
                row[f"args_{k}"] = v
        name = str(ev.get("name", ""))
        row["event_name"] = name
        for suffix in _SUFFIXES:
            if name.endswith(suffix):
                row["op_name"] = name[: -len(suffix)]
                row["event_name"] = suffix[1:]
                break
        if ev.get("cat") == "Node" or name in _SESSION_RUN_EVENTS:
            row["iteration"] = run
        else:
            row["iteration"] = -1
        if name == "model_run":
            run += 1
        rows.append(row)
    df = pd.DataFrame(rows)
    for col in ("dur", "ts"):
        if col in df.columns:
            df[col] = df[col].fillna(0).astype("int64")
    if "op_name" not in df.columns:
        df["op_name"] = None
    return df


def kernel_events(df: pd.DataFrame, skip_runs: int = 0) -> pd.DataFrame:
    """The ``_kernel_time`` rows of runs ``skip_runs`` and later."""
    k = df[(df["cat"] == "Node") & df["name"].astype(str).str.endswith("_kernel_time")]
    if skip_runs:
        k = k[k["iteration"] >= skip_runs]
    return k


def _shape_key(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))


def _by_columns(k: pd.DataFrame, by: str) -> List[str]:
    if by == "op":
        return ["args_op_name"]
    if by == "node":
        return ["op_name", "args_op_name"]
    if by == "shape":
        k["input_type_shape"] = k["args_input_type_shape"].map(_shape_key)
        k["output_type_shape"] = k["args_output_type_shape"].map(_shape_key)
        return ["args_op_name", "input_type_shape", "output_type_shape"]
    raise ValueError(f"by must be 'op', 'node' or 'shape', got {by!r}")


def summary(trace: Trace, by: str = "op", skip_runs: int = 0, top: Optional[int] = None) -> pd.DataFrame:
    """Where the time goes: kernel time per op type (``by='op'``), per node, or per
    (op, input shapes, output shapes) (``by='shape'``).

    Columns: total_us (sum of kernel_time durations), count (kernel events), mean_us
    (total_us / count), per_run_us (total_us / number of runs), share (percent of
    all kernel time). Sorted by total_us, largest first; ``top`` keeps the first rows.
    """
    k = kernel_events(read(trace), skip_runs).copy()
    cols = _by_columns(k, by)
    runs = max(1, k["iteration"].nunique())
    g = k.groupby(cols, sort=False)["dur"].agg(total_us="sum", count="count").reset_index()
    g["mean_us"] = g["total_us"] / g["count"]
    g["per_run_us"] = g["total_us"] / runs
    total = g["total_us"].sum()
    g["share"] = 100.0 * g["total_us"] / total if total else 0.0
    g = g.sort_values("total_us", ascending=False, kind="stable").reset_index(drop=True)
    return g.head(top) if top else g


def _keyed(trace: Trace, by: str, skip_runs: int) -> pd.DataFrame:
    k = kernel_events(read(trace), skip_runs).copy()
    cols = _by_columns(k, by)
    if by == "shape":
        # The seed's merge key: (op, input shapes, output shapes, occurrence index in its run).
        k["idx"] = k.groupby(["iteration", *cols]).cumcount()
        cols = [*cols, "idx"]
    runs = max(1, k["iteration"].nunique())
    g = k.groupby(cols, sort=False)["dur"].agg(dur="sum", count="count").reset_index()
    g["dur"] = g["dur"] / runs
    g["count"] = g["count"] / runs
    return g.set_index(cols)


def compare(base: Trace, other: Trace, by: str = "shape", skip_runs: int = 0) -> pd.DataFrame:
    """The seed's profile merge: rows keyed by ``by`` ('op', 'node' or 'shape' =
    (op, input shapes, output shapes, occurrence index)), with the kernel time
    per run on each side (dur_base, dur_other, microseconds), ratio = other / base,
    and status '=' (in both), '-' (only in base), '+' (only in other).
    """
    a = _keyed(base, by, skip_runs)
    b = _keyed(other, by, skip_runs)
    m = a.add_suffix("_base").join(b.add_suffix("_other"), how="outer")
    m["status"] = "="
    m.loc[m["dur_other"].isna(), "status"] = "-"
    m.loc[m["dur_base"].isna(), "status"] = "+"
    m["ratio"] = m["dur_other"] / m["dur_base"]
    m = m.reset_index()
    order = m[["dur_base", "dur_other"]].max(axis=1)
    return m.loc[order.sort_values(ascending=False, kind="stable").index].reset_index(drop=True)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_by_op(trace: Trace, path: Union[str, os.PathLike], skip_runs: int = 0, title: Optional[str] = None) -> str:
    """The seeds' two bar charts: total kernel time and number of calls per op type. Saves to ``path``."""
    s = summary(trace, by="op", skip_runs=skip_runs).sort_values("total_us")
    plt = _plt()
    fig, ax = plt.subplots(1, 2, figsize=(12, max(3, 0.35 * len(s) + 1.5)))
    ax[0].barh(s["args_op_name"], s["total_us"])
    ax[0].set_xlabel("total kernel time (us)")
    ax[0].set_title("duration per op type")
    ax[1].barh(s["args_op_name"], s["count"])
    ax[1].set_xlabel("calls")
    ax[1].set_title("count per op type")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return os.fspath(path)


def plot_compare(
    base: Trace, other: Trace, path: Union[str, os.PathLike], labels: Sequence[str] = ("base", "other"), skip_runs: int = 0
) -> str:
    """Kernel time per op type, per run, of two traces side by side (grouped bars). Saves to ``path``."""
    c = compare(base, other, by="op", skip_runs=skip_runs).fillna({"dur_base": 0, "dur_other": 0})
    c = c.sort_values("dur_base")
    plt = _plt()
    import numpy as np

    y = np.arange(len(c))
    fig, ax = plt.subplots(figsize=(10, max(3, 0.45 * len(c) + 1.5)))
    ax.barh(y - 0.2, c["dur_base"], height=0.4, label=labels[0])
    ax.barh(y + 0.2, c["dur_other"], height=0.4, label=labels[1])
    ax.set_yticks(y)
    ax.set_yticklabels(c["args_op_name"])
    ax.set_xlabel("kernel time per run (us)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return os.fspath(path)


__all__ = ["read", "kernel_events", "summary", "compare", "plot_by_op", "plot_compare"]
