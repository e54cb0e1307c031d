# Type stubs of the onnxmini package (python/onnxmini/__init__.py).
import enum
import os
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from ._onnxmini import (
    InvalidArgument as InvalidArgument,
    InvalidGraph as InvalidGraph,
    NodeArg as NodeArg,
    NoSuchFile as NoSuchFile,
    NotImplemented as NotImplemented,
    OnnxMiniError as OnnxMiniError,
    RuntimeException as RuntimeException,
    SessionOptions as SessionOptions,
    set_default_logger_severity as set_default_logger_severity,
    set_default_logger_verbosity as set_default_logger_verbosity,
)

__version__: str
Fail = OnnxMiniError
InvalidModel = InvalidGraph
CPU_PROVIDER: str

class GraphOptimizationLevel(enum.IntEnum):
    ORT_DISABLE_ALL: int
    ORT_ENABLE_BASIC: int
    ORT_ENABLE_EXTENDED: int
    ORT_ENABLE_ALL: int

def get_available_providers() -> List[str]: ...
def get_device() -> str: ...

class ModelMetadata:
    producer_name: str
    graph_name: str
    description: str
    version: int
    domain: str
    custom_metadata_map: Dict[str, str]

class IOBinding:
    def bind_input(self, name: str, array: np.ndarray) -> None: ...
    def bind_cpu_input(self, name: str, array: np.ndarray) -> None: ...
    def bind_output(self, name: str, array: Union[np.ndarray, str, None] = None, *args: Any, **kwargs: Any) -> None: ...
    def get_outputs(self) -> List[Any]: ...
    def copy_outputs_to_cpu(self) -> List[Any]: ...
    def clear_binding_inputs(self) -> None: ...
    def clear_binding_outputs(self) -> None: ...
    def synchronize_inputs(self) -> None: ...
    def synchronize_outputs(self) -> None: ...

class InferenceSession:
    def __init__(
        self,
        path_or_bytes: Union[str, os.PathLike, bytes, Any],
        sess_options: Optional[SessionOptions] = None,
        providers: Optional[Sequence[Any]] = None,
        provider_options: Optional[Sequence[Dict[Any, Any]]] = None,
        **kwargs: Any,
    ) -> None: ...
    def get_inputs(self) -> List[NodeArg]: ...
    def get_outputs(self) -> List[NodeArg]: ...
    def get_overridable_initializers(self) -> List[NodeArg]: ...
    def get_providers(self) -> List[str]: ...
    def get_provider_options(self) -> Dict[str, Dict[str, str]]: ...
    def get_session_options(self) -> SessionOptions: ...
    def get_modelmeta(self) -> ModelMetadata: ...
    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any], run_options: Any = None) -> List[Any]: ...
    def io_binding(self) -> IOBinding: ...
    def run_with_iobinding(self, iobinding: IOBinding, run_options: Any = None) -> None: ...
    def end_profiling(self) -> str: ...
    def get_profiling_start_time_ns(self) -> int: ...
    def describe(self) -> Dict[str, Any]: ...

# einsum (python/onnxmini/_einsum.py)
from ._einsum import (
    EinsumCandidate as EinsumCandidate,
    EinsumPlan as EinsumPlan,
    EinsumStep as EinsumStep,
    einsum as einsum,
    einsum_decompose as einsum_decompose,
    einsum_output_shape as einsum_output_shape,
    einsum_plan as einsum_plan,
)
