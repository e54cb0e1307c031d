#include "onnxmini/dtype.h"

#include <string>

namespace onnxmini {

namespace {
struct DTypeRow {
  DType type;
  size_t size;
  const char* name;        // onnxruntime's spelling
  const char* numpy_name;  // numpy's spelling
};
// One row per ONNX element type, indexed by its code.
const DTypeRow kRows[] = {
    {DType::Undefined, 0, "undefined", "undefined"}, {DType::Float32, 4, "float", "float32"},
    {DType::UInt8, 1, "uint8", "uint8"},             {DType::Int8, 1, "int8", "int8"},
    {DType::UInt16, 2, "uint16", "uint16"},          {DType::Int16, 2, "int16", "int16"},
    {DType::Int32, 4, "int32", "int32"},             {DType::Int64, 8, "int64", "int64"},
    {DType::String, sizeof(std::string), "string", "str"}, {DType::Bool, 1, "bool", "bool"},
    {DType::Float16, 2, "float16", "float16"},       {DType::Float64, 8, "double", "float64"},
    {DType::UInt32, 4, "uint32", "uint32"},          {DType::UInt64, 8, "uint64", "uint64"},
    {DType::Complex64, 8, "complex64", "complex64"}, {DType::Complex128, 16, "complex128", "complex128"},
    {DType::BFloat16, 2, "bfloat16", "bfloat16"},
};
constexpr int kNumRows = sizeof(kRows) / sizeof(kRows[0]);
}  // namespace

bool dtype_is_valid(int32_t code) { return code > 0 && code < kNumRows; }

size_t dtype_size(DType t) {
  int c = static_cast<int>(t);
  return (c >= 0 && c < kNumRows) ? kRows[c].size : 0;
}

const char* dtype_name(DType t) {
  int c = static_cast<int>(t);
  return (c >= 0 && c < kNumRows) ? kRows[c].name : "unknown";
}

DType dtype_from_name(const std::string& name) {
  for (const auto& r : kRows)
    if (name == r.name || name == r.numpy_name) return r.type;
  if (name == "float" || name == "f4") return DType::Float32;
  if (name == "f8") return DType::Float64;
  return DType::Undefined;
}

}  // namespace onnxmini
