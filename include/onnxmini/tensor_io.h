// Reading and writing tensors: numpy .npy files and ONNX TensorProto (.pb) files,
// as used by the ONNX backend test folders (test_data_set_N/input_K.pb).
#pragma once
#include "onnxmini/export.h"
#include <string>

#include "onnxmini/tensor.h"

ONNXMINI_API_BEGIN
namespace onnxmini {

Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& tensor);

// A serialized onnx.TensorProto; `name` receives its name field when not null.
Tensor read_tensor_pb(const std::string& path, std::string* name = nullptr);
Tensor parse_tensor_pb(const std::string& bytes, std::string* name = nullptr);
void write_tensor_pb(const std::string& path, const Tensor& tensor, const std::string& name = "");
std::string serialize_tensor_pb(const Tensor& tensor, const std::string& name = "");

}  // namespace onnxmini
ONNXMINI_API_END
