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
    // numpy names: ml_dtypes' spellings (numpy itself has none of these types).
    {DType::Float8E4M3FN, 1, "float8e4m3fn", "float8_e4m3fn"},
    {DType::Float8E4M3FNUZ, 1, "float8e4m3fnuz", "float8_e4m3fnuz"},
    {DType::Float8E5M2, 1, "float8e5m2", "float8_e5m2"},
    {DType::Float8E5M2FNUZ, 1, "float8e5m2fnuz", "float8_e5m2fnuz"},
    {DType::UInt4, 1, "uint4", "uint4"},
    {DType::Int4, 1, "int4", "int4"},
    {DType::Float4E2M1, 1, "float4e2m1", "float4_e2m1fn"},
    {DType::Float8E8M0, 1, "float8e8m0", "float8_e8m0fnu"},
    {DType::UInt2, 1, "uint2", "uint2"},
    {DType::Int2, 1, "int2", "int2"},
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
