"""SessionOptions and RunOptions with onnxruntime's defaults, and pickling of the options.

The C++ classes (``_onnxmini.SessionOptions``, ``_onnxmini.RunOptions``) hold the options
the runtime reads; these subclasses add onnxruntime's Python defaults, the attributes
onnxruntime has that change nothing here (accepted so scripts run unchanged), and
``__reduce__`` so that options travel to Dask / Ray / Spark workers with a session.
"""
from __future__ import annotations

import enum
import warnings
from typing import Any, Dict

from . import _onnxmini as _C


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's levels, names and values. ``ORT_DISABLE_ALL`` keeps the model's nodes one for
    one; basic: constant folding and eliminations; extended: fusions; layout and all: as extended
    (onnxmini's layout choices are made inside the kernels at every level). docs/optimizer.md lists
    the rules of each level."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """onnxruntime's execution modes: onnxmini runs nodes one after the other (sequential)."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


# The C++ options that travel in a pickle (every read-write property of _C.SessionOptions;
# tests/python/test_pickle.py checks that none is missing).
_NATIVE_FIELDS = (
    "enable_profiling",
    "profile_file_prefix",
    "intra_op_num_threads",
    "intra_op_allow_spinning",
    "enable_mem_pattern",
    "optimized_model_filepath",
    "graph_optimization_level",
    "log_severity_level",
    "log_verbosity_level",
    "logid",
    "gemm",
    "kernels",
    "profile_layout",
    "profile_skip_runs",
    "profile_max_runs",
    "profile_max_events",
    "profile_memory_counters",
    "allow_unknown_opsets",
    "max_tensor_bytes",
    "max_intermediate_bytes",
)

# onnxruntime attributes accepted for compatibility; they do not change how onnxmini runs.
_ACCEPTED_DEFAULTS: Dict[str, Any] = {
    "inter_op_num_threads": 0,  # no inter-op pool: nodes run in order
    "enable_cpu_mem_arena": True,  # onnxmini's buffer pool is always on
    "enable_mem_reuse": True,  # buffers are always reused once their last reader ran
    "use_deterministic_compute": False,  # kernels are deterministic for a given thread count anyway
}


class SessionOptions(_C.SessionOptions):
    """Options of an InferenceSession, with onnxruntime's defaults.

    Differences from the C++ defaults (``onnxmini::SessionOptions``): ``intra_op_num_threads``
    0 (one thread per physical core) and ``graph_optimization_level`` ``ORT_ENABLE_ALL``
    (folding and fusions), as onnxruntime. Pickles with every field and config entry.
    """

    # The accepted-without-effect attributes: class defaults, set per instance.
    inter_op_num_threads: int = _ACCEPTED_DEFAULTS["inter_op_num_threads"]
    enable_cpu_mem_arena: bool = _ACCEPTED_DEFAULTS["enable_cpu_mem_arena"]
    enable_mem_reuse: bool = _ACCEPTED_DEFAULTS["enable_mem_reuse"]
    use_deterministic_compute: bool = _ACCEPTED_DEFAULTS["use_deterministic_compute"]

    def __init__(self) -> None:
        super().__init__()
        self.intra_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self._execution_mode = ExecutionMode.ORT_SEQUENTIAL

    @property
    def graph_optimization_level(self) -> Any:
        """A :class:`GraphOptimizationLevel` (an int when the level is not one of onnxruntime's)."""
        level = _C.SessionOptions.graph_optimization_level.__get__(self)
        try:
            return GraphOptimizationLevel(level)
        except ValueError:
            return level

    @graph_optimization_level.setter
    def graph_optimization_level(self, level: Any) -> None:
        _C.SessionOptions.graph_optimization_level.__set__(self, int(level))

    @property
    def execution_mode(self) -> ExecutionMode:
        return self._execution_mode

    @execution_mode.setter
    def execution_mode(self, mode: Any) -> None:
        mode = ExecutionMode(int(mode))
        if mode != ExecutionMode.ORT_SEQUENTIAL:
            warnings.warn("onnxmini runs nodes sequentially; ORT_PARALLEL is ignored", stacklevel=2)
        self._execution_mode = mode

    def _state(self) -> Dict[str, Any]:
        state = {name: getattr(self, name) for name in _NATIVE_FIELDS}
        state["graph_optimization_level"] = int(state["graph_optimization_level"])
        state.update({name: getattr(self, name) for name in _ACCEPTED_DEFAULTS})
        state["execution_mode"] = int(self._execution_mode)
        state["config_entries"] = dict(self._config_entries())
        return state

    def __reduce__(self):
        return (_session_options_from_state, (self._state(),))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SessionOptions) and self._state() == other._state()

    __hash__ = None  # mutable


def _session_options_from_state(state: Dict[str, Any]) -> SessionOptions:
    so = SessionOptions()
    state = dict(state)
    entries = state.pop("config_entries", {})
    so._execution_mode = ExecutionMode(state.pop("execution_mode", 0))
    for name, value in state.items():
        setattr(so, name, value)
    for key, value in entries.items():
        so.add_session_config_entry(key, value)
    return so


RunOptions = _C.RunOptions
