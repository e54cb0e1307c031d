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

``summary`` and ``compare`` are ``onnxmini profile summary|compare``: they call the
C++ analysis (include/onnxmini/profile.h) through the extension and return its
table as a DataFrame with the CLI's column names and values.
"""
from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List, Optional, Sequence, Union

import pandas as pd

from ._onnxmini import profile as _profile

_SUFFIXES = ("_kernel_time", "_fence_before", "_fence_after")
_SESSION_RUN_EVENTS = ("SequentialExecutor::Execute", "model_run")
_EVENT_KEYS = ("cat", "pid", "tid", "dur", "ts", "ph", "name")

#: A trace: a file path, the list ``json.load`` returns, a frame from ``read()``
#: (summary/compare also take what ``load()`` returns).
Trace = Union[str, os.PathLike, List[Dict[str, Any]], pd.DataFrame, "_profile.Trace"]


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


def _events_of(df: pd.DataFrame) -> List[Dict[str, Any]]:
    """The events a ``read()`` frame (possibly filtered) came from: ``args_<key>``
    columns back into ``args``; cells a row does not have (NaN) left out."""

    def present(v: Any) -> bool:
        return v is not None and not (isinstance(v, float) and math.isnan(v))

    events = []
    for row in df.to_dict("records"):
        ev = {k: v for k, v in row.items() if k in _EVENT_KEYS and present(v)}
        ev["args"] = {k[5:]: v for k, v in row.items() if k.startswith("args_") and present(v)}
        events.append(ev)
    return events


def load(trace: Trace) -> "_profile.Trace":
    """The C++ reader's view of a trace (include/onnxmini/profile.h ``read_trace``): a
    path is read by C++; a list of events or a ``read()`` frame is serialized first."""
    if isinstance(trace, _profile.Trace):
        return trace
    if isinstance(trace, (str, os.PathLike)):
        return _profile.read_trace(os.fspath(trace))
    if isinstance(trace, pd.DataFrame):
        trace = _events_of(trace)
    if not isinstance(trace, list):
        raise TypeError(f"a trace is a path, a list of events or a DataFrame from read(), got {type(trace).__name__}")
    return _profile.parse_trace(json.dumps(trace, default=_json_scalar), "<events>")


def _json_scalar(v: Any) -> Any:
    if hasattr(v, "item"):  # numpy scalar
        return v.item()
    raise TypeError(f"cannot write {type(v).__name__} into a trace")


def _frame(table: "_profile.Table") -> pd.DataFrame:
    """The CLI's table as a DataFrame: the same columns, text cells as strings,
    numeric cells parsed (integers stay integers; an empty cell is NaN). The CLI's
    title lines are in ``attrs['title']``."""
    df = pd.DataFrame(table.rows, columns=table.columns)
    for name, numeric in zip(table.columns, table.numeric):
        if numeric:
            df[name] = pd.to_numeric(df[name].replace("", None))
    df.attrs["title"] = list(table.title)
    return df


def summary(trace: Trace, by: str = "op", skip_runs: int = 0, top: Optional[int] = None) -> pd.DataFrame:
    """``onnxmini profile summary`` as a DataFrame: kernel time per op type
    (``by='op'``), per node, or per (op, input shapes, output shapes) (``by='shape'``).

    Columns, as the CLI's: [node] op [input_type_shape output_type_shape] count
    total_us mean_us per_run_us share_pct. Sorted by total_us, largest first; ``top``
    keeps the first rows. Values are the CLI's cells (mean_us, per_run_us to 0.1 us,
    share_pct to 0.01 %).
    """
    return _frame(_profile.summary(load(trace), by, skip_runs, top or 0))


def compare(base: Trace, other: Trace, by: str = "shape", skip_runs: int = 0) -> pd.DataFrame:
    """``onnxmini profile compare BASE OTHER`` as a DataFrame: the seed's profile
    merge, rows keyed by ``by`` ('shape' = (op, input shapes, output shapes,
    occurrence index in the run), 'node' or 'op').

    Columns, as the CLI's: side ('=' both, '-' base only, '+' other only) [node] op
    [input_type_shape output_type_shape idx] base_us other_us (kernel time per run,
    NaN on a side without the row) ratio (other / base) base_count other_count
    (kernel events over the kept runs).
    """
    return _frame(_profile.compare(load(base), load(other), by, skip_runs))


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
    ax[0].barh(s["op"], s["total_us"])
    ax[0].set_xlabel("total kernel time (us)")
    ax[0].set_title("duration per op type")
    ax[1].barh(s["op"], s["count"])
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
    c = compare(base, other, by="op", skip_runs=skip_runs).fillna({"base_us": 0, "other_us": 0})
    c = c.sort_values("base_us")
    plt = _plt()
    import numpy as np

    y = np.arange(len(c))
    fig, ax = plt.subplots(figsize=(10, max(3, 0.45 * len(c) + 1.5)))
    ax.barh(y - 0.2, c["base_us"], height=0.4, label=labels[0])
    ax.barh(y + 0.2, c["other_us"], height=0.4, label=labels[1])
    ax.set_yticks(y)
    ax.set_yticklabels(c["op"])
    ax.set_xlabel("kernel time per run (us)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return os.fspath(path)


__all__ = ["read", "load", "kernel_events", "summary", "compare", "plot_by_op", "plot_compare"]
