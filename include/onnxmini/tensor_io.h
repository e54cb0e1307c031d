// Reading and writing tensors: numpy .npy files and ONNX TensorProto (.pb) files,
// as used by the ONNX backend test folders (test_data_set_N/input_K.pb), and
// sequences and optionals as onnx.SequenceProto / onnx.OptionalProto .pb files.
#pragma once
#include "onnxmini/export.h"
#include <string>

#include "onnxmini/tensor.h"
#include "onnxmini/value.h"

ONNXMINI_API_BEGIN
namespace onnxmini {

Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& tensor);

// A serialized onnx.TensorProto; `name` receives its name field when not null.
Tensor read_tensor_pb(const std::string& path, std::string* name = nullptr);
Tensor parse_tensor_pb(const std::string& bytes, std::string* name = nullptr);
void write_tensor_pb(const std::string& path, const Tensor& tensor, const std::string& name = "");
std::string serialize_tensor_pb(const Tensor& tensor, const std::string& name = "");

// Any Value as a .pb file: a tensor as a TensorProto, a sequence (of tensors,
// sequences or optionals) as a SequenceProto, an optional as an OptionalProto
// (empty: no element field). The bytes do not say which message they hold, so
// the reader names the ONNX type it expects, as ValueInfo::type writes it:
// "seq(...)" reads a SequenceProto, "optional(...)" an OptionalProto, anything
// else ("tensor(float)", "") a TensorProto. Maps are not supported.
Value read_value_pb(const std::string& path, const std::string& onnx_type, std::string* name = nullptr);
Value parse_value_pb(const std::string& bytes, const std::string& onnx_type, std::string* name = nullptr);
void write_value_pb(const std::string& path, const Value& value, const std::string& name = "");
std::string serialize_value_pb(const Value& value, const std::string& name = "");

}  // namespace onnxmini
ONNXMINI_API_END
