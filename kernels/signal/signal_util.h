// Shared input handling for the signal kernels (DFT, STFT, windows,
// MelWeightMatrix): scalar integer inputs, the float dtypes they accept, and
// float16 / bfloat16 data through float32 copies (kernels/vision/half_float.h).
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/kernel.h"
#include "kernels/vision/half_float.h"

namespace onnxmini {
namespace signal {

inline bool is_signal_float(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}

// Input i as one int64 (an int32 or int64 tensor of one element, scalar or [1]).
inline int64_t scalar_int(const KernelContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.input(i);
  if ((t.dtype() != DType::Int32 && t.dtype() != DType::Int64) || t.numel() != 1 || t.rank() > 1)
    ctx.fail("{} must be an int32 or int64 scalar, got {} of shape {}", what, dtype_name(t.dtype()),
             shape_to_string(t.shape()));
  return t.dtype() == DType::Int32 ? t.data<int32_t>()[0] : t.data<int64_t>()[0];
}

// Input i as one double (a float32 / float64 / float16 / bfloat16 / int32 / int64 scalar).
inline double scalar_number(const KernelContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.numel() != 1 || t.rank() > 1) ctx.fail("{} must be a scalar, got shape {}", what, shape_to_string(t.shape()));
  switch (t.dtype()) {
    case DType::Float32: return t.data<float>()[0];
    case DType::Float64: return t.data<double>()[0];
    case DType::Float16: return half_to_float(static_cast<const uint16_t*>(t.raw())[0]);
    case DType::BFloat16: return bfloat16_to_float(static_cast<const uint16_t*>(t.raw())[0]);
    case DType::Int32: return t.data<int32_t>()[0];
    case DType::Int64: return static_cast<double>(t.data<int64_t>()[0]);
    default:
      ctx.fail("{} has dtype {} (want float32, float64, float16, bfloat16, int32 or int64)", what,
               dtype_name(t.dtype()));
  }
}

// A float32 / float64 view of tensor t: the data itself, or (half types) a widened float32 copy.
struct FloatInput {
  FloatInput(KernelContext& ctx, const Tensor& t) {
    if (vision::is_half(t.dtype())) {
      copy = ctx.scratch(DType::Float32, t.shape());
      vision::widen_half(t, copy.mutable_data<float>());
      tensor = &copy;
    } else {
      tensor = &t;
    }
  }
  bool is_double() const { return tensor->dtype() == DType::Float64; }
  double at(int64_t i) const {
    return is_double() ? tensor->data<double>()[i] : static_cast<double>(tensor->data<float>()[i]);
  }
  const Tensor* tensor;
  Tensor copy;
};

// Writes doubles into an output of any float dtype: directly for float32 / float64,
// through a float32 scratch narrowed once at finish() for half types.
struct FloatOutput {
  FloatOutput(KernelContext& ctx, Tensor& t) : out(&t) {
    if (vision::is_half(t.dtype())) wide = ctx.scratch(DType::Float32, t.shape());
  }
  void set(int64_t i, double v) {
    if (out->dtype() == DType::Float64) out->mutable_data<double>()[i] = v;
    else (wide.defined() ? wide : *out).mutable_data<float>()[i] = static_cast<float>(v);
  }
  void finish() {
    if (wide.defined()) vision::narrow_to_half(wide.data<float>(), *out);
  }
  Tensor* out;
  Tensor wide;
};

}  // namespace signal
}  // namespace onnxmini
