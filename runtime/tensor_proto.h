// onnx.TensorProto <-> Tensor, with every storage form: raw_data, the typed
// fields and external data files. Sizes are checked against the declared shape
// before anything is allocated, so a corrupt header cannot trigger a huge allocation.
#pragma once
#include <string>

#include "onnxmini/tensor.h"
#include "runtime/onnx_proto.h"

namespace onnxmini {

// `what` names the tensor in error messages ("initializer 'W'");
// `base_dir` is the model's folder for external data ("" rejects external data).
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir, const std::string& what);
void tensor_to_proto(const Tensor& tensor, onnx::TensorProto* proto);

}  // namespace onnxmini
