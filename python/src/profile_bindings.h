// onnxmini._onnxmini.profile: include/onnxmini/profile.h for Python.
#pragma once
#include <pybind11/pybind11.h>

namespace onnxmini_py {

void bind_profile(pybind11::module_& m);

}  // namespace onnxmini_py
