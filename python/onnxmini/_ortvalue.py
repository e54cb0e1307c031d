"""OrtValue: onnxruntime's value handle, for run_with_ort_values and code written against it.

onnxmini has only the CPU, so an OrtValue is a thin handle on what ``run`` takes and returns: a
numpy array (used in place, as onnxruntime does for CPU arrays), a list of arrays (a sequence),
a list of dicts (a sequence of maps), or None (an empty optional).
"""
from __future__ import annotations

from typing import Any, List, Sequence

import numpy as np

from ._onnxmini import InvalidArgument

# numpy dtype -> (onnx type string, onnx TensorProto element type)
_ONNX_TYPES = {
    np.dtype(np.float32): ("float", 1),
    np.dtype(np.uint8): ("uint8", 2),
    np.dtype(np.int8): ("int8", 3),
    np.dtype(np.uint16): ("uint16", 4),
    np.dtype(np.int16): ("int16", 5),
    np.dtype(np.int32): ("int32", 6),
    np.dtype(np.int64): ("int64", 7),
    np.dtype(np.bool_): ("bool", 9),
    np.dtype(np.float16): ("float16", 10),
    np.dtype(np.float64): ("double", 11),
    np.dtype(np.uint32): ("uint32", 12),
    np.dtype(np.uint64): ("uint64", 13),
}
try:  # bfloat16 arrays are ml_dtypes.bfloat16, as in onnx.numpy_helper (ml_dtypes comes with onnx)
    import ml_dtypes

    _ONNX_TYPES[np.dtype(ml_dtypes.bfloat16)] = ("bfloat16", 16)
except ImportError:  # pragma: no cover - without ml_dtypes numpy has no bfloat16
    pass
_NUMPY_OF_ONNX = {code: dt for dt, (_, code) in _ONNX_TYPES.items()}
_STRING = ("string", 8)


def _onnx_type(array: np.ndarray):
    if array.dtype.kind in "USO":
        return _STRING
    try:
        return _ONNX_TYPES[array.dtype]
    except KeyError:
        raise InvalidArgument(f"OrtValue: numpy dtype {array.dtype} has no ONNX tensor type") from None


def _c_contiguous(data: Any) -> np.ndarray:
    """``data`` as a C-contiguous array, by reference when it already is one (0-d arrays stay 0-d,
    which ``np.ascontiguousarray`` would make 1-d)."""
    array = np.asarray(data)
    return array if array.flags.c_contiguous else array.copy(order="C")


def _check_cpu(device_type: str) -> None:
    if device_type.lower() != "cpu":
        # onnxruntime's CPU package raises RuntimeError for other devices too.
        raise RuntimeError(f"onnxmini has only the 'cpu' device, got '{device_type}'")


class OrtValue:
    """A value fed to or returned by :meth:`InferenceSession.run_with_ort_values`."""

    __slots__ = ("_value",)

    def __init__(self, value: Any):
        self._value = value

    # ---- constructors (onnxruntime's static methods)
    @staticmethod
    def ortvalue_from_numpy(numpy_obj: Any, device_type: str = "cpu", device_id: int = 0, vendor_id: int = -1) -> "OrtValue":
        """Wraps ``numpy_obj`` (kept by reference when C-contiguous, as onnxruntime; copied otherwise)."""
        _check_cpu(device_type)
        return OrtValue(_c_contiguous(numpy_obj))

    @staticmethod
    def ortvalue_from_numpy_with_onnx_type(data: np.ndarray, onnx_element_type: int) -> "OrtValue":
        """``data`` viewed as the ONNX element type ``onnx_element_type`` (same item size)."""
        if onnx_element_type not in _NUMPY_OF_ONNX:
            raise InvalidArgument(f"OrtValue: ONNX element type {onnx_element_type} is not supported")
        target = _NUMPY_OF_ONNX[onnx_element_type]
        data = _c_contiguous(data)
        if data.dtype.itemsize != target.itemsize:
            raise InvalidArgument(
                f"OrtValue: a {data.dtype} array cannot hold ONNX element type {onnx_element_type} ({target})"
            )
        return OrtValue(data.view(target))

    @staticmethod
    def ortvalue_from_shape_and_type(
        shape: Sequence[int], element_type: Any, device_type: str = "cpu", device_id: int = 0, vendor_id: int = -1
    ) -> "OrtValue":
        """A new uninitialized tensor; ``element_type`` a numpy type or an ONNX element type (int)."""
        _check_cpu(device_type)
        dtype = _NUMPY_OF_ONNX.get(element_type) if isinstance(element_type, int) else np.dtype(element_type)
        if dtype is None:
            raise InvalidArgument(f"OrtValue: ONNX element type {element_type} is not supported")
        return OrtValue(np.empty(tuple(shape), dtype=dtype))

    # ---- queries
    def has_value(self) -> bool:
        return self._value is not None

    def is_tensor(self) -> bool:
        return isinstance(self._value, np.ndarray)

    def is_tensor_sequence(self) -> bool:
        return isinstance(self._value, list) and all(isinstance(v, np.ndarray) for v in self._value)

    def is_sparse_tensor(self) -> bool:
        return False

    def _tensor(self) -> np.ndarray:
        if not self.is_tensor():
            raise InvalidArgument(f"OrtValue holds a {type(self._value).__name__}, not a tensor")
        return self._value

    def shape(self) -> List[int]:
        return list(self._tensor().shape)

    def data_type(self) -> str:
        """``'tensor(float)'``, ``'seq(tensor(int64))'``..."""
        if self.is_tensor():
            return f"tensor({_onnx_type(self._value)[0]})"
        if self.is_tensor_sequence() and self._value:
            return f"seq(tensor({_onnx_type(self._value[0])[0]}))"
        raise InvalidArgument(f"OrtValue holds a {type(self._value).__name__}: no single data type")

    def element_type(self) -> int:
        """The ONNX element type (``onnx.TensorProto.FLOAT`` = 1, ...), as onnxruntime >= 1.20."""
        return _onnx_type(self._tensor())[1]

    def device_name(self) -> str:
        return "cpu"

    def data_ptr(self) -> int:
        return self._tensor().ctypes.data

    def tensor_size_in_bytes(self) -> int:
        return self._tensor().nbytes

    def numpy(self) -> Any:
        """The array (by reference; sequences as a list of arrays)."""
        return self._value

    def update_inplace(self, np_arr: np.ndarray) -> None:
        """Copies ``np_arr`` (same shape and dtype) into this tensor's memory."""
        target = self._tensor()
        src = np.asarray(np_arr)
        if src.shape != target.shape or src.dtype != target.dtype:
            raise InvalidArgument(
                f"OrtValue.update_inplace: got {src.dtype} {list(src.shape)}, holds {target.dtype} {list(target.shape)}"
            )
        np.copyto(target, src)

    def __repr__(self) -> str:
        if self.is_tensor():
            return f"OrtValue({self.data_type()}, shape={self.shape()})"
        return f"OrtValue({self._value!r})"


def unwrap(value: Any) -> Any:
    """What ``run`` takes for a feed given as an OrtValue (or as is)."""
    return value._value if isinstance(value, OrtValue) else value


def wrap_all(values: List[Any]) -> List[OrtValue]:
    return [OrtValue(v) for v in values]


__all__ = ["OrtValue"]
