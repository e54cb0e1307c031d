// float16 / bfloat16 tensors through a float32 kernel: the vision kernels that
// compute (LRN, Col2Im) widen a half tensor into a float32 scratch tensor, run
// their float32 loops and round the result once into the half output, so a
// half result is the float32 result correctly rounded (onnx computes these ops
// in float for half inputs too). Both tensors are contiguous, same element count.
#pragma once
#include <cstdint>

#include "core/float16.h"
#include "kernels/kernel.h"

namespace onnxmini {
namespace vision {

inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// dst (float32) = src (float16 or bfloat16), element by element.
inline void widen_half(const Tensor& src, float* dst) {
  const auto* s = static_cast<const uint16_t*>(src.raw());
  const int64_t n = src.numel();
  if (src.dtype() == DType::Float16)
    for (int64_t i = 0; i < n; ++i) dst[i] = half_to_float(s[i]);
  else
    for (int64_t i = 0; i < n; ++i) dst[i] = bfloat16_to_float(s[i]);
}

// dst (float16 or bfloat16) = src (float32) rounded to nearest even.
inline void narrow_to_half(const float* src, Tensor& dst) {
  auto* d = static_cast<uint16_t*>(dst.raw_mut());
  const int64_t n = dst.numel();
  if (dst.dtype() == DType::Float16)
    for (int64_t i = 0; i < n; ++i) d[i] = float_to_half(src[i]);
  else
    for (int64_t i = 0; i < n; ++i) d[i] = float_to_bfloat16(src[i]);
}

}  // namespace vision
}  // namespace onnxmini
