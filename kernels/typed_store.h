// Writing computed doubles into an output whose element type an attribute
// chooses (output_datatype of the window ops and MelWeightMatrix, dtype of
// the random ops).
#pragma once
#include <cstdint>

#include "core/float16.h"
#include "kernels/kernel.h"

namespace onnxmini {

// The dtype an output_datatype attribute names; fails naming the node for a
// non-numeric or unknown code (bool only when allow_bool).
inline DType output_dtype(const KernelInfo& info, int64_t code, bool allow_bool = false) {
  switch (static_cast<DType>(code)) {
    case DType::Bool:
      if (!allow_bool) break;
      return DType::Bool;
    case DType::Float32: case DType::Float64: case DType::Float16: case DType::BFloat16:
    case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
    case DType::UInt8: case DType::UInt16: case DType::UInt32: case DType::UInt64:
      return static_cast<DType>(code);
    default: break;
  }
  info.fail("output dtype code {} is not a supported numeric type", code);
}

// y[i] = v converted to y's dtype (truncation for integers, as numpy's astype).
inline void store_number(Tensor& y, int64_t i, double v) {
  switch (y.dtype()) {
    case DType::Float32: y.mutable_data<float>()[i] = static_cast<float>(v); break;
    case DType::Float64: y.mutable_data<double>()[i] = v; break;
    case DType::Float16: static_cast<uint16_t*>(y.raw_mut())[i] = float_to_half(static_cast<float>(v)); break;
    case DType::BFloat16: static_cast<uint16_t*>(y.raw_mut())[i] = float_to_bfloat16(static_cast<float>(v)); break;
    case DType::Int8: y.mutable_data<int8_t>()[i] = static_cast<int8_t>(v); break;
    case DType::Int16: y.mutable_data<int16_t>()[i] = static_cast<int16_t>(v); break;
    case DType::Int32: y.mutable_data<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::Int64: y.mutable_data<int64_t>()[i] = static_cast<int64_t>(v); break;
    case DType::UInt8: y.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
    case DType::UInt16: y.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
    case DType::UInt32: y.mutable_data<uint32_t>()[i] = static_cast<uint32_t>(v); break;
    case DType::UInt64: y.mutable_data<uint64_t>()[i] = static_cast<uint64_t>(v); break;
    case DType::Bool: y.mutable_data<bool>()[i] = v != 0; break;
    default: break;  // output_dtype() admits only the types above
  }
}

}  // namespace onnxmini
