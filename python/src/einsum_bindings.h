// onnxmini._onnxmini.einsum: include/onnxmini/einsum.h for Python (onnxmini/_einsum.py wraps it).
#pragma once
#include <pybind11/pybind11.h>

namespace onnxmini_py {

void bind_einsum(pybind11::module_& m);

}  // namespace onnxmini_py
