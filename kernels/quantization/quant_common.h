// Shared helpers of the quantization kernels (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear and the com.microsoft QLinear* ops): the rounding and
// saturating conversion rules, reading scales / zero points, and the layout of
// per-tensor, per-axis and blocked quantization parameters.
//
// Rounding: float -> integer rounds half to even (the ONNX rule; nearbyint in
// the default rounding mode, cvtps2dq in the SIMD paths) and saturates to the
// type's range. NaN gives the type's minimum, as onnxruntime's MLAS does (its
// max(v, lo) keeps lo for NaN); ONNX leaves NaN undefined.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/float16.h"
#include "core/minifloat.h"
#include "kernels/kernel.h"

namespace onnxmini {
namespace quant {

// The sub-byte integer types: int4, uint4, int2, uint2.
inline bool is_low_bit_int(DType t) { return is_int4(t) || is_int2(t); }

// The integer types a quantized tensor may have here (one element per byte / short;
// INT4 / UINT4 / INT2 / UINT2 one code per byte, core/minifloat.h).
inline bool is_quant_int(DType t) {
  return t == DType::UInt8 || t == DType::Int8 || t == DType::UInt16 || t == DType::Int16 || is_low_bit_int(t);
}
// Any QuantizeLinear output / DequantizeLinear input type: the integers above, float8 and float4e2m1.
inline bool is_quant_type(DType t) { return is_quant_int(t) || is_minifloat(t); }
// Scale / float-side types: float32, float16, bfloat16.
inline bool is_scale_type(DType t) { return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16; }

// Rounds half to even and saturates to Q's range; NaN -> Q's minimum.
template <class Q>
inline Q saturate_round(float v) {
  constexpr float lo = static_cast<float>(std::numeric_limits<Q>::lowest());
  constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
  if (!(v >= lo)) return std::numeric_limits<Q>::lowest();  // also NaN
  if (v > hi) return std::numeric_limits<Q>::max();
  return static_cast<Q>(std::nearbyint(v));
}

// Integer saturation (for results computed in int32 / int64).
template <class Q>
inline Q saturate_int(int64_t v) {
  if (v < std::numeric_limits<Q>::lowest()) return std::numeric_limits<Q>::lowest();
  if (v > std::numeric_limits<Q>::max()) return std::numeric_limits<Q>::max();
  return static_cast<Q>(v);
}

// y = saturate(round(x / scale) + zp): a division, not a multiply by 1/scale,
// so that ties land where onnxruntime's (dividing) MLAS kernels put them.
template <class Q>
inline Q quantize_value(float x, float scale, int32_t zp) {
  return saturate_round<Q>(std::nearbyint(x / scale) + static_cast<float>(zp));
}

// Element i of a float32 / float16 / bfloat16 tensor as float (the half types are
// stored as raw 16-bit patterns: Tensor::data<T> has no C++ type for them).
inline float float_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::Float32: return t.data<float>()[i];
    case DType::Float16: return half_to_float(static_cast<const uint16_t*>(t.raw())[i]);
    case DType::BFloat16: return bfloat16_to_float(static_cast<const uint16_t*>(t.raw())[i]);
    default: return 0.f;  // callers check is_scale_type first
  }
}
// Stores v into element i of a float32 / float16 / bfloat16 tensor (round to nearest even).
inline void store_float(Tensor& t, int64_t i, float v) {
  switch (t.dtype()) {
    case DType::Float32: t.mutable_data<float>()[i] = v; break;
    case DType::Float16: static_cast<uint16_t*>(t.raw_mut())[i] = float_to_half(v); break;
    case DType::BFloat16: static_cast<uint16_t*>(t.raw_mut())[i] = float_to_bfloat16(v); break;
    default: break;
  }
}

// Element i of an integer tensor (the quantized types and int32) as int32.
inline int32_t int_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::UInt8: return t.data<uint8_t>()[i];
    case DType::Int8: return t.data<int8_t>()[i];
    case DType::UInt16: return t.data<uint16_t>()[i];
    case DType::Int16: return t.data<int16_t>()[i];
    case DType::Int32: return t.data<int32_t>()[i];
    case DType::Int4: return int4_value(static_cast<const uint8_t*>(t.raw())[i]);
    case DType::UInt4: return uint4_value(static_cast<const uint8_t*>(t.raw())[i]);
    case DType::Int2: return int2_value(static_cast<const uint8_t*>(t.raw())[i]);
    case DType::UInt2: return uint2_value(static_cast<const uint8_t*>(t.raw())[i]);
    default: return 0;
  }
}

// Calls fn(Q{}) with Q the C++ type of quantized dtype t (uint8, int8, uint16, int16);
// returns false for any other dtype (the sub-byte types included: see low_bit_compute_type).
template <class Fn>
inline bool visit_quant_int(DType t, Fn&& fn) {
  switch (t) {
    case DType::UInt8: fn(uint8_t{}); return true;
    case DType::Int8: fn(int8_t{}); return true;
    case DType::UInt16: fn(uint16_t{}); return true;
    case DType::Int16: fn(int16_t{}); return true;
    default: return false;
  }
}

// The 8-bit type whose arithmetic a 4- or 2-bit type borrows: values are computed
// and saturated as int8 / uint8, then clamped to the narrow range (clamp_to_low_bits).
inline DType low_bit_compute_type(DType t) {
  return t == DType::Int4 || t == DType::Int2 ? DType::Int8 : DType::UInt8;
}
// In place: int8 / uint8 values -> codes of the values clamped to t's range
// (int4 [-8, 7], uint4 [0, 15], int2 [-2, 1], uint2 [0, 3]).
inline void clamp_to_low_bits(uint8_t* data, int64_t n, DType t) {
  const bool is_signed = t == DType::Int4 || t == DType::Int2;
  const int bits = is_int4(t) ? 4 : 2;
  const int lo = is_signed ? -(1 << (bits - 1)) : 0, hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  for (int64_t i = 0; i < n; ++i) {
    const int v = is_signed ? static_cast<int>(static_cast<int8_t>(data[i])) : static_cast<int>(data[i]);
    data[i] = static_cast<uint8_t>((v < lo ? lo : v > hi ? hi : v) & mask);
  }
}

// Where the scale / zero point of each element of x comes from. x is viewed as
// [outer, axis_dim, inner] around `axis`; the parameters are one value
// (per-tensor), one per axis index (per-axis), or, blocked, the tensor of x's
// shape with axis_dim replaced by ceil(axis_dim / block): element (o, a, i)
// uses parameter ((o * blocks) + a / block) * inner + i.
struct ParamLayout {
  enum class Kind { PerTensor, PerAxis, Blocked } kind = Kind::PerTensor;
  int64_t outer = 1, axis_dim = 1, inner = 1;
  int64_t block = 0, blocks = 1;

  int64_t index(int64_t o, int64_t a, int64_t i) const {
    switch (kind) {
      case Kind::PerTensor: return 0;
      case Kind::PerAxis: return a;
      default: return (o * blocks + a / block) * inner + i;
    }
  }
};

// Works out the layout from x's and scale's shapes (the `axis` and `block_size`
// attributes as given, axis possibly negative); fails naming the node and the
// mismatching shapes.
ParamLayout param_layout(const KernelContext& ctx, const Shape& x, const Shape& scale, int64_t axis,
                         int64_t block_size);

// The per-tensor parameters of the com.microsoft QLinear* ops: input `i` must be a
// one-element float scale / a one-element zero point of dtype `t` (0 when absent).
float scalar_scale(const KernelContext& ctx, size_t i, const char* what);
int32_t scalar_zero_point(const KernelContext& ctx, size_t i, DType t, const char* what);

// A 256-entry map of every 8-bit input q to saturate(round(f((q - zx) * sx) / sy) + zy):
// the exact form of a unary quantized op whose input has 256 possible values.
template <class Q, class F>
void build_lookup(Q* table, float sx, int32_t zx, float sy, int32_t zy, F&& f) {
  for (int v = std::numeric_limits<Q>::lowest(); v <= std::numeric_limits<Q>::max(); ++v)
    table[static_cast<uint8_t>(v)] = quantize_value<Q>(f(static_cast<float>(v - zx) * sx), sy, zy);
}

// Checks that the optional zero point (input `zp_index`) has scale's shape.
void check_zero_point_shape(const KernelContext& ctx, size_t zp_index, const Shape& scale);

}  // namespace quant
}  // namespace onnxmini
