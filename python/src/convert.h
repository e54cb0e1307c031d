// numpy <-> onnxmini conversions for the Python extension.
//
// Inputs: a C-contiguous, aligned, native-byte-order numpy array whose dtype maps
// to an ONNX element type is wrapped with Tensor::wrap (no copy); the Tensor keeps
// the array alive. Strings (numpy 'U', 'S', object) are copied into a string
// tensor. Non-contiguous or unaligned arrays are copied only when `allow_copy`
// (InferenceSession.run does, like numpy.ascontiguousarray; io binding does not).
//
// Outputs: a numeric tensor becomes an array over the same buffer (the array
// holds the tensor); when other owners share that buffer (an initializer, an
// input, another output) the array gets its own copy so that writing into it
// can never change the model or another result.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "onnxmini/onnxmini.h"

namespace onnxmini_py {

namespace py = pybind11;

// DType of a numpy dtype; DType::Undefined when it has no ONNX equivalent.
onnxmini::DType dtype_from_numpy(const py::dtype& dt);
// numpy dtype of a DType; throws NotImplemented for types numpy lacks (bfloat16, complex).
py::dtype numpy_dtype(onnxmini::DType t);

// `what` names the value in error messages ("input 'X'").
onnxmini::Tensor tensor_from_array(py::handle obj, const std::string& what, bool allow_copy, bool writable = false);

// Tensor -> numpy array (see above); Value -> array, list (sequence), dict (map), element or None (optional).
py::object tensor_to_array(const onnxmini::Tensor& t);
py::object value_to_python(const onnxmini::Value& v);
// A feed for an input of ONNX type `onnx_type` (ValueInfo::type): "seq(...)" takes a list
// of items, "optional(...)" None (empty) or its element, anything else an array.
onnxmini::Value value_from_python(py::handle obj, const std::string& onnx_type, const std::string& what);

}  // namespace onnxmini_py
