// Rows of float32 / float16 / bfloat16 / float64 tensors read into float32 (or
// double) and written back, for the attention-family kernels, which compute in
// float32 (the reference paths in double) whatever the stored type.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "core/float16.h"
#include "kernels/attention/attention_lanes.h"
#include "onnxmini/dtype.h"
#include "onnxmini/tensor.h"

namespace onnxmini {
namespace attention {

inline bool is_attention_float(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16 || t == DType::Float64;
}

// out[k] = base[offset + k] as float32, k < n.
inline void read_floats(DType t, const void* base, int64_t offset, int64_t n, float* out, const AttentionLanes& lanes) {
  switch (t) {
    case DType::Float32: {
      const float* p = static_cast<const float*>(base) + offset;
      for (int64_t k = 0; k < n; ++k) out[k] = p[k];
      return;
    }
    case DType::Float16: lanes.half_to_float(static_cast<const uint16_t*>(base) + offset, out, n); return;
    case DType::BFloat16: {
      const uint16_t* p = static_cast<const uint16_t*>(base) + offset;
      for (int64_t k = 0; k < n; ++k) out[k] = bfloat16_to_float(p[k]);
      return;
    }
    default: {
      const double* p = static_cast<const double*>(base) + offset;
      for (int64_t k = 0; k < n; ++k) out[k] = static_cast<float>(p[k]);
      return;
    }
  }
}

// base[offset + k] = in[k] rounded to the stored type (nearest even), k < n.
inline void write_floats(DType t, void* base, int64_t offset, int64_t n, const float* in, const AttentionLanes& lanes) {
  switch (t) {
    case DType::Float32: {
      float* p = static_cast<float*>(base) + offset;
      for (int64_t k = 0; k < n; ++k) p[k] = in[k];
      return;
    }
    case DType::Float16: lanes.float_to_half(in, static_cast<uint16_t*>(base) + offset, n); return;
    case DType::BFloat16: {
      uint16_t* p = static_cast<uint16_t*>(base) + offset;
      for (int64_t k = 0; k < n; ++k) p[k] = float_to_bfloat16(in[k]);
      return;
    }
    default: {
      double* p = static_cast<double*>(base) + offset;
      for (int64_t k = 0; k < n; ++k) p[k] = in[k];
      return;
    }
  }
}

// One element as double (the reference paths).
// The attention mask as a float32 additive bias of the same shape: float32 in
// place, bool as 0 / -inf, other float types converted into `buf` (the caller's
// reused buffer, so warm runs do not allocate). Null when there is no mask.
inline const float* mask_as_float_bias(const Tensor* mask, std::vector<float>& buf, const AttentionLanes& lanes) {
  if (!mask) return nullptr;
  if (mask->dtype() == DType::Float32) return mask->data<float>();
  buf.resize(static_cast<size_t>(mask->numel()));
  if (mask->dtype() == DType::Bool) {
    const bool* mb = mask->data<bool>();
    for (int64_t e = 0; e < mask->numel(); ++e) buf[e] = mb[e] ? 0.f : -std::numeric_limits<float>::infinity();
  } else {
    read_floats(mask->dtype(), mask->raw(), 0, mask->numel(), buf.data(), lanes);
  }
  return buf.data();
}

inline double read_double(DType t, const void* base, int64_t i) {
  switch (t) {
    case DType::Float32: return static_cast<const float*>(base)[i];
    case DType::Float16: return half_to_float(static_cast<const uint16_t*>(base)[i]);
    case DType::BFloat16: return bfloat16_to_float(static_cast<const uint16_t*>(base)[i]);
    case DType::Float64: return static_cast<const double*>(base)[i];
    case DType::Bool: return static_cast<const uint8_t*>(base)[i] != 0;
    default: return 0;
  }
}

inline void write_double(DType t, void* base, int64_t i, double v) {
  switch (t) {
    case DType::Float32: static_cast<float*>(base)[i] = static_cast<float>(v); return;
    case DType::Float16: static_cast<uint16_t*>(base)[i] = float_to_half(static_cast<float>(v)); return;
    case DType::BFloat16: static_cast<uint16_t*>(base)[i] = float_to_bfloat16(static_cast<float>(v)); return;
    default: static_cast<double*>(base)[i] = v; return;
  }
}

}  // namespace attention
}  // namespace onnxmini
