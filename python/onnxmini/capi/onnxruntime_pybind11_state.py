"""onnxruntime's exception classes under onnxruntime's module path (see docs/python.md, Exceptions)."""
from .._onnxmini import (  # noqa: F401  (re-exported)
    EngineError,
    EPFail,
    Fail,
    InvalidArgument,
    InvalidGraph,
    InvalidProtobuf,
    ModelLoaded,
    NoModel,
    NoSuchFile,
    NotImplemented,
    RuntimeException,
)
