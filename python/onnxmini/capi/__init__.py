"""Mirror of ``onnxruntime.capi``: only ``onnxruntime_pybind11_state`` (the exception classes),
so ``from <rt>.capi.onnxruntime_pybind11_state import InvalidArgument`` works with either runtime."""
