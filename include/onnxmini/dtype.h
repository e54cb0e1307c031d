// Element types. The numeric values are those of onnx.TensorProto.DataType so a
// dtype read from a model needs no translation table.
#pragma once
#include "onnxmini/export.h"
#include <cstddef>
#include <cstdint>
#include <string>

ONNXMINI_API_BEGIN
namespace onnxmini {

enum class DType : int32_t {
  Undefined = 0,
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  // One element per byte in memory (core/minifloat.h); 4- and 2-bit codes in the low bits.
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  UInt4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
  Float8E8M0 = 24,  // exponent only: 2^(code - 127), 0xFF = NaN
  UInt2 = 25,
  Int2 = 26,
};

// Bytes per element (String: sizeof(std::string)); 0 for Undefined or unknown codes.
size_t dtype_size(DType t);
// ONNX spelling as onnxruntime prints it in profiles: "float", "int64", "bool", ...
const char* dtype_name(DType t);
// Parses dtype_name() output and numpy names ("float32", "float64", "int64", ...).
// Returns DType::Undefined when the name is unknown.
DType dtype_from_name(const std::string& name);
// True for the codes 1..26 that this runtime can store.
bool dtype_is_valid(int32_t code);

// Compile-time mapping from C++ types to DType.
template <typename T>
struct dtype_of;
#define ONNXMINI_DTYPE_OF(CT, DT) \
  template <>                     \
  struct dtype_of<CT> {           \
    static constexpr DType value = DType::DT; \
  };
ONNXMINI_DTYPE_OF(float, Float32)
ONNXMINI_DTYPE_OF(double, Float64)
ONNXMINI_DTYPE_OF(int8_t, Int8)
ONNXMINI_DTYPE_OF(uint8_t, UInt8)
ONNXMINI_DTYPE_OF(int16_t, Int16)
ONNXMINI_DTYPE_OF(uint16_t, UInt16)
ONNXMINI_DTYPE_OF(int32_t, Int32)
ONNXMINI_DTYPE_OF(uint32_t, UInt32)
ONNXMINI_DTYPE_OF(int64_t, Int64)
ONNXMINI_DTYPE_OF(uint64_t, UInt64)
ONNXMINI_DTYPE_OF(bool, Bool)
ONNXMINI_DTYPE_OF(std::string, String)
#undef ONNXMINI_DTYPE_OF

}  // namespace onnxmini
ONNXMINI_API_END
