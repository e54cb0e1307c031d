"""onnxmini: a small ONNX inference runtime with onnxruntime's Python API.

Change ``import onnxruntime as ort`` into ``import onnxmini as ort``::

    import numpy as np, onnxmini
    sess = onnxmini.InferenceSession("model.onnx")
    name = sess.get_inputs()[0].name
    (y,) = sess.run(None, {name: np.zeros((1, 3), dtype=np.float32)})

See docs/python.md for the reference: what is shared with onnxruntime, what differs.
"""
from __future__ import annotations

import os
import threading
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _onnxmini as _C
from . import capi  # noqa: F401  (onnxmini.capi.onnxruntime_pybind11_state, as onnxruntime's)
from ._onnxmini import (  # noqa: F401  (re-exported)
    EngineError,
    EPFail,
    Fail,
    InvalidArgument,
    InvalidGraph,
    InvalidProtobuf,
    ModelLoaded,
    NodeArg,
    NoModel,
    NoSuchFile,
    NotImplemented,
    OnnxMiniError,
    RuntimeException,
    set_default_logger_severity,
    set_default_logger_verbosity,
)
from ._options import ExecutionMode, GraphOptimizationLevel, RunOptions, SessionOptions  # noqa: F401
from ._ortvalue import OrtValue, unwrap as _unwrap_ortvalue, wrap_all as _wrap_ortvalues

__version__ = "0.1.0"

#: Alias of :class:`InvalidGraph` (a malformed model).
InvalidModel = InvalidGraph

#: The one provider: onnxmini runs on the CPU, with its own kernels.
CPU_PROVIDER = "CPUExecutionProvider"


def get_available_providers() -> List[str]:
    """``['CPUExecutionProvider']``: the only provider onnxmini has."""
    return [CPU_PROVIDER]


def get_all_providers() -> List[str]:
    """The providers onnxmini knows: ``['CPUExecutionProvider']``."""
    return [CPU_PROVIDER]


def get_device() -> str:
    return "CPU"


def get_version_string() -> str:
    return __version__


def _check_providers(providers: Optional[Sequence[Any]]) -> List[str]:
    """onnxruntime's behaviour for providers it does not have: a UserWarning, then the CPU."""
    if not providers:
        return [CPU_PROVIDER]
    names = [p[0] if isinstance(p, (tuple, list)) else p for p in providers]
    for name in names:
        if not isinstance(name, str):
            raise ValueError(f"a provider is a name or a (name, options) pair, got {name!r}")
        if name != CPU_PROVIDER:
            warnings.warn(
                f"Specified provider '{name}' is not in available provider names. "
                f"Available providers: '{CPU_PROVIDER}' (onnxmini runs on the CPU only)",
                stacklevel=3,
            )
    return [CPU_PROVIDER]


class ModelMetadata:
    """What ``InferenceSession.get_modelmeta()`` returns, with onnxruntime's fields."""

    __slots__ = ("producer_name", "graph_name", "graph_description", "description", "domain", "version",
                 "custom_metadata_map")

    def __init__(self, d: Dict[str, Any]):
        self.producer_name: str = d["producer_name"]
        self.graph_name: str = d["graph_name"]
        self.graph_description: str = d["graph_doc_string"]
        self.description: str = d["doc_string"]
        self.domain: str = d["domain"]
        self.version: int = d["model_version"]  # ModelProto.model_version, as onnxruntime
        self.custom_metadata_map: Dict[str, str] = dict(d["metadata_props"])

    def __repr__(self) -> str:
        return (
            f"ModelMetadata(producer_name={self.producer_name!r}, graph_name={self.graph_name!r}, "
            f"domain={self.domain!r}, version={self.version})"
        )


class IOBinding:
    """Inputs and outputs bound to numpy arrays, used in place by ``run_with_iobinding``.

    A bound input must be C-contiguous with the input's dtype; a bound output must
    also be writable and have the exact shape and dtype the model produces: the
    kernel writes straight into it. Outputs bound without an array are allocated
    by the run and returned by :meth:`get_outputs`.
    """

    def __init__(self, session: "InferenceSession"):
        self._session = session
        self._b = _C.IOBinding()

    def bind_input(self, name: str, array: np.ndarray) -> None:
        """Binds input ``name`` to ``array`` (no copy; the array must stay unchanged until the run)."""
        self._b.bind_input(name, array)

    def bind_cpu_input(self, name: str, array: np.ndarray) -> None:
        """onnxruntime's name for :meth:`bind_input`."""
        self._b.bind_input(name, array)

    def bind_output(self, name: str, array: Union[np.ndarray, str, None] = None, *args: Any, **kwargs: Any) -> None:
        """Binds output ``name`` (any value of the graph, intermediates included).

        With ``array``, the run writes into it; without (or with onnxruntime's
        ``device_type='cpu'`` string) the run allocates the output.
        """
        if isinstance(array, str):
            if array.lower() != "cpu":
                raise InvalidArgument(f"bound output '{name}': onnxmini has only the 'cpu' device, got '{array}'")
            array = None
        self._b.bind_output(name, array)

    def bind_ortvalue_input(self, name: str, ortvalue: OrtValue) -> None:
        """:meth:`bind_input` with the array an :class:`OrtValue` holds."""
        self._b.bind_input(name, ortvalue.numpy())

    def bind_ortvalue_output(self, name: str, ortvalue: OrtValue) -> None:
        """:meth:`bind_output` into the array an :class:`OrtValue` holds."""
        self._b.bind_output(name, ortvalue.numpy())

    def get_outputs(self) -> List[Any]:
        """Outputs of the last run, in binding order (bound arrays are returned as is)."""
        return self._b.get_outputs()

    def get_outputs_as_ortvaluevector(self) -> List[OrtValue]:
        """:meth:`get_outputs` as :class:`OrtValue`s."""
        return _wrap_ortvalues(self._b.get_outputs())

    def copy_outputs_to_cpu(self) -> List[Any]:
        """onnxruntime's name for :meth:`get_outputs` (the data already lives on the CPU)."""
        return self._b.get_outputs()

    def clear_binding_inputs(self) -> None:
        self._b.clear_binding_inputs()

    def clear_binding_outputs(self) -> None:
        self._b.clear_binding_outputs()

    def synchronize_inputs(self) -> None:
        """No-op (CPU only)."""

    def synchronize_outputs(self) -> None:
        """No-op (CPU only)."""


class InferenceSession:
    """Loads an ONNX model and runs it, with onnxruntime's ``InferenceSession`` API.

    :param path_or_bytes: a file path, the serialized model (bytes), or an
        ``onnx.ModelProto``
    :param sess_options: :class:`SessionOptions` (default: onnxruntime's defaults, i.e. one
        thread per physical core and every graph optimization)
    :param providers: accepted for compatibility; onnxmini always runs on
        ``CPUExecutionProvider`` and warns about any other name, as onnxruntime does
        for providers it does not have

    A session pickles (``pickle``, Dask, Ray, Spark): the model bytes, the options and the
    providers travel, and the session is rebuilt when unpickled (see docs/python.md, Pickling).
    """

    def __init__(
        self,
        path_or_bytes: Union[str, os.PathLike, bytes, Any],
        sess_options: Optional[SessionOptions] = None,
        providers: Optional[Sequence[Any]] = None,
        provider_options: Optional[Sequence[Dict[Any, Any]]] = None,
        **kwargs: Any,
    ):
        if hasattr(path_or_bytes, "SerializeToString"):
            path_or_bytes = path_or_bytes.SerializeToString()
        self._model_path: Optional[str] = None
        self._model_bytes: Optional[bytes] = None
        self._model_stamp: Optional[tuple] = None
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._model_bytes = bytes(path_or_bytes)  # no copy for bytes; kept for pickling
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path = os.fspath(path_or_bytes)
        else:
            raise TypeError(
                f"InferenceSession expects a path, bytes or an onnx.ModelProto, got {type(path_or_bytes).__name__}"
            )
        self._create(sess_options if sess_options is not None else SessionOptions(), providers)

    def _create(self, options: SessionOptions, providers: Optional[Sequence[Any]], base_dir: str = "") -> None:
        self._providers = _check_providers(providers)
        self._sess_options = options
        if self._model_bytes is not None:
            self._sess = _C.Session.load_bytes(self._model_bytes, options, base_dir)
        else:
            assert self._model_path is not None
            self._sess = _C.Session.load(self._model_path, options)
            st = os.stat(self._model_path)
            self._model_stamp = (st.st_size, st.st_mtime_ns)
        self._inputs = self._sess.inputs()
        self._outputs = self._sess.outputs()

    # ---- pickling: the model bytes, options and providers travel; the session is rebuilt.
    def _model_bytes_for_pickle(self) -> bytes:
        if self._model_bytes is not None:
            return self._model_bytes
        # A session from a path reads its file when pickled (not kept in memory meanwhile);
        # a file changed since the session was created would ship another model: refuse.
        assert self._model_path is not None
        st = os.stat(self._model_path)
        if (st.st_size, st.st_mtime_ns) != self._model_stamp:
            raise RuntimeError(
                f"cannot pickle the session: its model file '{self._model_path}' changed since the session was created"
            )
        with open(self._model_path, "rb") as f:
            return f.read()

    def __getstate__(self) -> Dict[str, Any]:
        return {
            "model": self._model_bytes_for_pickle(),
            "model_path": self._model_path,
            "sess_options": self._sess_options,
            "providers": list(self._providers),
        }

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self._model_bytes = state["model"]
        path = state["model_path"]
        self._model_path = None
        self._model_stamp = None
        # External data, if any, is looked up next to where the model file was.
        base_dir = os.path.dirname(os.path.abspath(path)) if path else ""
        self._create(state["sess_options"], state["providers"], base_dir)
        self._model_path = path  # for information; the model came from the pickled bytes

    # ---- model description
    def get_inputs(self) -> List[NodeArg]:
        """Graph inputs (name, type, shape); shape dims are int, str (symbolic) or None."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        """Graph outputs (name, type, shape)."""
        return list(self._outputs)

    def get_overridable_initializers(self) -> List[NodeArg]:
        """Initializers the model also lists as inputs: feeding one by name replaces it for that run."""
        return self._sess.overridable_initializers()

    def get_providers(self) -> List[str]:
        """``['CPUExecutionProvider']``: the provider name onnxmini reports (and writes in profiles)."""
        return list(self._providers)

    def set_providers(self, providers: Optional[Sequence[Any]] = None, provider_options: Any = None) -> None:
        """As onnxruntime: other providers than the CPU warn and fall back to it (nothing to rebuild)."""
        self._providers = _check_providers(providers)

    def get_provider_options(self) -> Dict[str, Dict[str, str]]:
        return {CPU_PROVIDER: {}}

    def get_session_options(self) -> SessionOptions:
        return self._sess_options

    def get_modelmeta(self) -> ModelMetadata:
        return ModelMetadata(self._sess.describe())

    # ---- running
    def _missing_inputs(self, input_feed: Dict[str, Any]) -> Optional[ValueError]:
        """onnxruntime's error (a ValueError) for feeds that lack a graph input, or None."""
        missing = [i.name for i in self._inputs if i.name not in input_feed]
        if not missing:
            return None
        return ValueError(f"Required inputs ({missing}) are missing from input feed ({list(input_feed)}).")

    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any], run_options: Optional[RunOptions] = None) -> List[Any]:
        """Runs the model.

        :param output_names: names to return (graph outputs or any intermediate
            value); ``None`` or ``[]`` for all graph outputs
        :param input_feed: ``{name: numpy array}``. C-contiguous arrays of the
            declared dtype are used without a copy; non-contiguous ones are
            copied first; another dtype raises :class:`InvalidArgument`.
            An input declared ``seq(tensor(...))`` takes a list of arrays; one
            declared ``optional(...)`` takes ``None`` (an empty optional) or
            its element; one declared ``map(K, tensor(V))`` takes a dict. A missing input raises ``ValueError``, as onnxruntime
        :param run_options: a :class:`RunOptions` (log tag and level, ``terminate``)
        :return: a list of numpy arrays; sequences as lists of arrays (of
            dicts for sequences of maps, e.g. ZipMap); optionals as their
            element, or ``None`` when empty

        The GIL is released while the model runs, so runs from several Python
        threads proceed in parallel.
        """
        try:
            return self._sess.run(output_names, input_feed, run_options)
        except InvalidArgument:
            missing = self._missing_inputs(input_feed)  # checked on failure only: free when the run succeeds
            if missing is None:
                raise
        raise missing

    def run_with_ort_values(
        self, output_names: Optional[Sequence[str]], input_dict_ort_values: Dict[str, Any], run_options: Optional[RunOptions] = None
    ) -> List[OrtValue]:
        """:meth:`run` with :class:`OrtValue` feeds (plain arrays are accepted too) and results."""
        feed = {name: _unwrap_ortvalue(v) for name, v in input_dict_ort_values.items()}
        return _wrap_ortvalues(self.run(output_names, feed, run_options))

    def run_async(
        self,
        output_names: Optional[Sequence[str]],
        input_feed: Dict[str, Any],
        callback: Callable[[List[Any], Any, str], None],
        user_data: Any,
        run_options: Optional[RunOptions] = None,
    ) -> None:
        """Runs on a new thread and calls ``callback(results, user_data, err)`` from it, as onnxruntime:
        ``err`` is ``''`` on success; on failure ``results`` is ``[]`` and ``err`` the message.
        A missing input raises ``ValueError`` here, before the thread starts."""
        missing = self._missing_inputs(input_feed)
        if missing is not None:
            raise missing

        def work() -> None:
            try:
                results, err = self._sess.run(output_names, input_feed, run_options), ""
            except Exception as e:  # noqa: BLE001  (reported to the callback, as onnxruntime)
                results, err = [], str(e)
            callback(results, user_data, err)

        threading.Thread(target=work, name="onnxmini-run-async", daemon=True).start()

    def io_binding(self) -> IOBinding:
        """A new :class:`IOBinding` for this session."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding: IOBinding, run_options: Optional[RunOptions] = None) -> None:
        """Runs with the bound inputs and outputs; read results with ``iobinding.get_outputs()``.

        ``run_options.terminate`` is read when the run starts (the options are copied with the bindings).
        """
        self._sess.run_with_iobinding(iobinding._b, run_options)

    # ---- profiling
    def end_profiling(self) -> str:
        """Writes the profile and returns its file name ('' when profiling is off or already ended)."""
        return self._sess.end_profiling()

    def get_profiling_start_time_ns(self) -> int:
        """When profiling started (ns, steady clock), as onnxruntime's method of the same name."""
        return self._sess.profiling_start_time_ns()

    def describe(self) -> Dict[str, Any]:
        """onnxmini extra: the model as ``onnxmini info`` shows it (nodes in execution order, kernels)."""
        return self._sess.describe()

    def graph_rewrites(self) -> List[Tuple[str, str]]:
        """onnxmini extra: the optimizer's rewrites when the session was created, in order, as
        (rule, nodes touched) pairs (docs/optimizer.md); empty at ``ORT_DISABLE_ALL``."""
        return [tuple(r) for r in self._sess.graph_rewrites()]


__all__ = [
    "InferenceSession",
    "SessionOptions",
    "RunOptions",
    "OrtValue",
    "IOBinding",
    "NodeArg",
    "GraphOptimizationLevel",
    "ExecutionMode",
    "ModelMetadata",
    "get_all_providers",
    "get_available_providers",
    "get_device",
    "get_version_string",
    "set_default_logger_severity",
    "set_default_logger_verbosity",
    "OnnxMiniError",
    "Fail",
    "InvalidArgument",
    "InvalidGraph",
    "InvalidModel",
    "InvalidProtobuf",
    "NotImplemented",
    "RuntimeException",
    "NoSuchFile",
    "NoModel",
    "EngineError",
    "ModelLoaded",
    "EPFail",
]

# einsum (docs/einsum.md, "From Python")
from ._einsum import EinsumCandidate, EinsumPlan, EinsumStep, einsum, einsum_decompose, einsum_output_shape, einsum_plan  # noqa: E402

__all__ += ["einsum", "einsum_plan", "einsum_decompose", "einsum_output_shape", "EinsumPlan", "EinsumStep", "EinsumCandidate"]
