"""onnxmini: a small ONNX inference runtime with onnxruntime's Python API.

Change ``import onnxruntime as ort`` into ``import onnxmini as ort``::

    import numpy as np, onnxmini
    sess = onnxmini.InferenceSession("model.onnx")
    name = sess.get_inputs()[0].name
    (y,) = sess.run(None, {name: np.zeros((1, 3), dtype=np.float32)})

See docs/python.md for the reference: what is shared with onnxruntime, what differs.
"""
from __future__ import annotations

import enum
import os
import warnings
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _onnxmini as _C
from ._onnxmini import (  # noqa: F401  (re-exported)
    InvalidArgument,
    InvalidGraph,
    NodeArg,
    NoSuchFile,
    NotImplemented,
    OnnxMiniError,
    RuntimeException,
    SessionOptions,
    set_default_logger_severity,
    set_default_logger_verbosity,
)

__version__ = "0.1.0"

#: onnxruntime's generic failure class; here the base of every onnxmini error.
Fail = OnnxMiniError
#: Alias of :class:`InvalidGraph` (a malformed model).
InvalidModel = InvalidGraph

#: The one provider: onnxmini runs on the CPU, with its own kernels.
CPU_PROVIDER = "CPUExecutionProvider"


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's levels, accepted for API parity: onnxmini does no graph rewrites."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


def get_available_providers() -> List[str]:
    """``['CPUExecutionProvider']``: the only provider onnxmini has."""
    return [CPU_PROVIDER]


def get_device() -> str:
    return "CPU"


def _check_providers(providers: Optional[Sequence[Any]]) -> List[str]:
    if not providers:
        return [CPU_PROVIDER]
    names = [p[0] if isinstance(p, (tuple, list)) else p for p in providers]
    others = [n for n in names if n != CPU_PROVIDER]
    if others:
        warnings.warn(f"onnxmini runs on the CPU only; providers {others} are ignored", stacklevel=3)
    return [CPU_PROVIDER]


class ModelMetadata:
    """What ``InferenceSession.get_modelmeta()`` returns (a subset of onnxruntime's)."""

    def __init__(self, d: Dict[str, Any]):
        self.producer_name: str = d["producer_name"]
        self.graph_name: str = d["graph_name"]
        self.description: str = d["doc_string"]
        self.version: int = d["ir_version"]
        self.domain: str = ""
        self.custom_metadata_map: Dict[str, str] = {}


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

    def get_outputs(self) -> List[Any]:
        """Outputs of the last run, in binding order (bound arrays are returned as is)."""
        return self._b.get_outputs()

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
    :param sess_options: :class:`SessionOptions` (default: one thread, no profiling)
    :param providers: accepted for compatibility; onnxmini always runs on
        ``CPUExecutionProvider`` and warns about any other name
    """

    def __init__(
        self,
        path_or_bytes: Union[str, os.PathLike, bytes, Any],
        sess_options: Optional[SessionOptions] = None,
        providers: Optional[Sequence[Any]] = None,
        provider_options: Optional[Sequence[Dict[Any, Any]]] = None,
        **kwargs: Any,
    ):
        options = sess_options if sess_options is not None else SessionOptions()
        self._providers = _check_providers(providers)
        self._sess_options = options
        if hasattr(path_or_bytes, "SerializeToString"):
            path_or_bytes = path_or_bytes.SerializeToString()
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._model_path: Optional[str] = None
            self._sess = _C.Session.load_bytes(bytes(path_or_bytes), options)
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path = os.fspath(path_or_bytes)
            self._sess = _C.Session.load(self._model_path, options)
        else:
            raise TypeError(
                f"InferenceSession expects a path, bytes or an onnx.ModelProto, got {type(path_or_bytes).__name__}"
            )
        self._inputs = self._sess.inputs()
        self._outputs = self._sess.outputs()

    def get_inputs(self) -> List[NodeArg]:
        """Graph inputs (name, type, shape); shape dims are int, str (symbolic) or None."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        """Graph outputs (name, type, shape)."""
        return list(self._outputs)

    def get_overridable_initializers(self) -> List[NodeArg]:
        return []

    def get_providers(self) -> List[str]:
        """``['CPUExecutionProvider']``: the provider name onnxmini reports (and writes in profiles)."""
        return list(self._providers)

    def get_provider_options(self) -> Dict[str, Dict[str, str]]:
        return {CPU_PROVIDER: {}}

    def get_session_options(self) -> SessionOptions:
        return self._sess_options

    def get_modelmeta(self) -> ModelMetadata:
        return ModelMetadata(self._sess.describe())

    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any], run_options: Any = None) -> List[Any]:
        """Runs the model.

        :param output_names: names to return (graph outputs or any intermediate
            value); ``None`` or ``[]`` for all graph outputs
        :param input_feed: ``{name: numpy array}``. C-contiguous arrays of the
            declared dtype are used without a copy; non-contiguous ones are
            copied first; another dtype raises :class:`InvalidArgument`.
            An input declared ``seq(tensor(...))`` takes a list of arrays; one
            declared ``optional(...)`` takes ``None`` (an empty optional) or
            its element
        :return: a list of numpy arrays; sequences as lists of arrays (of
            dicts for sequences of maps, e.g. ZipMap); optionals as their
            element, or ``None`` when empty

        The GIL is released while the model runs, so runs from several Python
        threads proceed in parallel.
        """
        return self._sess.run(output_names, input_feed)

    def io_binding(self) -> IOBinding:
        """A new :class:`IOBinding` for this session."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding: IOBinding, run_options: Any = None) -> None:
        """Runs with the bound inputs and outputs; read results with ``iobinding.get_outputs()``."""
        self._sess.run_with_iobinding(iobinding._b)

    def end_profiling(self) -> str:
        """Writes the profile and returns its file name ('' when profiling is off or already ended)."""
        return self._sess.end_profiling()

    def get_profiling_start_time_ns(self) -> int:
        """When profiling started (ns, steady clock), as onnxruntime's method of the same name."""
        return self._sess.profiling_start_time_ns()

    def describe(self) -> Dict[str, Any]:
        """onnxmini extra: the model as ``onnxmini info`` shows it (nodes in execution order, kernels)."""
        return self._sess.describe()


__all__ = [
    "InferenceSession",
    "SessionOptions",
    "IOBinding",
    "NodeArg",
    "GraphOptimizationLevel",
    "ModelMetadata",
    "get_available_providers",
    "get_device",
    "set_default_logger_severity",
    "set_default_logger_verbosity",
    "OnnxMiniError",
    "Fail",
    "InvalidArgument",
    "InvalidGraph",
    "InvalidModel",
    "NotImplemented",
    "RuntimeException",
    "NoSuchFile",
]

# einsum (docs/einsum.md, "From Python")
from ._einsum import EinsumCandidate, EinsumPlan, EinsumStep, einsum, einsum_decompose, einsum_output_shape, einsum_plan  # noqa: E402

__all__ += ["einsum", "einsum_plan", "einsum_decompose", "einsum_output_shape", "EinsumPlan", "EinsumStep", "EinsumCandidate"]
