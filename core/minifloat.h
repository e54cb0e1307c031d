// The 8-bit and 4-bit element types (ONNX FLOAT8E4M3FN, FLOAT8E4M3FNUZ,
// FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT4E2M1, INT4, UINT4) and their float
// conversions.
//
// Storage: one element per byte in memory, for every one of these types (the
// 4-bit codes sit in the low nibble, high nibble zero), which is also how
// numpy's ml_dtypes lays them out, so arrays cross the Python boundary as they
// are. Only TensorProto raw_data / int32_data packs two 4-bit values per byte
// (runtime/tensor_proto.cc).
//
// float -> minifloat rounds to nearest even. With `saturate` (the ONNX default
// for Cast / QuantizeLinear) the value is first clamped to [-max, max], so
// +-inf and overflows give +-max; without it an overflow gives inf (E5M2) or
// NaN (the FN / FNUZ types), as the ONNX Cast table says. NaN gives the type's
// NaN (0x7F / 0xFF for E4M3FN, 0x7E / 0xFE for E5M2, 0x80 for the FNUZ types).
// FNUZ types have no negative zero: -0 and values rounding to it give 0x00.
// FLOAT4E2M1 has neither inf nor NaN: it always saturates (NaN -> 0x8 as
// ml_dtypes does).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "onnxmini/dtype.h"

namespace onnxmini {

struct MiniFloatFormat {
  enum class Special { Fn, Fnuz, Ieee, None };  // where NaN / inf live
  int exp_bits, man_bits, bias;
  Special special;
  float max;  // largest finite value
};

inline constexpr MiniFloatFormat kFloat8E4M3FN{4, 3, 7, MiniFloatFormat::Special::Fn, 448.f};
inline constexpr MiniFloatFormat kFloat8E4M3FNUZ{4, 3, 8, MiniFloatFormat::Special::Fnuz, 240.f};
inline constexpr MiniFloatFormat kFloat8E5M2{5, 2, 15, MiniFloatFormat::Special::Ieee, 57344.f};
inline constexpr MiniFloatFormat kFloat8E5M2FNUZ{5, 2, 16, MiniFloatFormat::Special::Fnuz, 57344.f};
inline constexpr MiniFloatFormat kFloat4E2M1{2, 1, 1, MiniFloatFormat::Special::None, 6.f};

// The format of a minifloat dtype; nullptr for any other dtype.
inline const MiniFloatFormat* minifloat_format(DType t) {
  switch (t) {
    case DType::Float8E4M3FN: return &kFloat8E4M3FN;
    case DType::Float8E4M3FNUZ: return &kFloat8E4M3FNUZ;
    case DType::Float8E5M2: return &kFloat8E5M2;
    case DType::Float8E5M2FNUZ: return &kFloat8E5M2FNUZ;
    case DType::Float4E2M1: return &kFloat4E2M1;
    default: return nullptr;
  }
}
inline bool is_minifloat(DType t) { return minifloat_format(t) != nullptr; }
inline bool is_int4(DType t) { return t == DType::Int4 || t == DType::UInt4; }

inline float minifloat_to_float(uint8_t bits, const MiniFloatFormat& f) {
  const int width = 1 + f.exp_bits + f.man_bits;
  const uint8_t sign_bit = static_cast<uint8_t>(1u << (width - 1));
  const int e = (bits >> f.man_bits) & ((1 << f.exp_bits) - 1), m = bits & ((1 << f.man_bits) - 1);
  const int e_top = (1 << f.exp_bits) - 1, m_top = (1 << f.man_bits) - 1;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.special == MiniFloatFormat::Special::Fnuz && bits == sign_bit) return nan;
  if (f.special == MiniFloatFormat::Special::Ieee && e == e_top)
    return m ? nan : ((bits & sign_bit) ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity());
  if (f.special == MiniFloatFormat::Special::Fn && e == e_top && m == m_top) return nan;
  const float v = e == 0 ? std::ldexp(static_cast<float>(m), 1 - f.bias - f.man_bits)
                         : std::ldexp(static_cast<float>((1 << f.man_bits) + m), e - f.bias - f.man_bits);
  return (bits & sign_bit) ? -v : v;
}

inline uint8_t float_to_minifloat(float x, const MiniFloatFormat& f, bool saturate) {
  const int width = 1 + f.exp_bits + f.man_bits;
  const uint8_t sign_bit = static_cast<uint8_t>(1u << (width - 1));
  const uint8_t all_ones = static_cast<uint8_t>(sign_bit - 1);  // exponent and mantissa bits all set
  const bool neg = std::signbit(x);
  const uint8_t sign = neg ? sign_bit : 0;
  if (std::isnan(x)) {
    switch (f.special) {
      case MiniFloatFormat::Special::Fn: return static_cast<uint8_t>(all_ones | sign);
      case MiniFloatFormat::Special::Ieee: return static_cast<uint8_t>((all_ones - 1) | sign);
      case MiniFloatFormat::Special::Fnuz: return sign_bit;
      default: return sign_bit;
    }
  }
  float a = std::fabs(x);
  if (saturate || f.special == MiniFloatFormat::Special::None) a = std::fmin(a, f.max);
  auto overflow = [&]() -> uint8_t {
    switch (f.special) {
      case MiniFloatFormat::Special::Ieee:  // infinity: top exponent, zero mantissa
        return static_cast<uint8_t>(((((1 << f.exp_bits) - 1)) << f.man_bits) | sign);
      case MiniFloatFormat::Special::Fn: return static_cast<uint8_t>(all_ones | sign);
      default: return sign_bit;  // FNUZ NaN
    }
  };
  if (std::isinf(a)) return overflow();
  const float min_normal = std::ldexp(1.f, 1 - f.bias);
  int e2 = 0;
  float quantum;
  if (a >= min_normal) {
    std::frexp(a, &e2);  // a = frac * 2^e2, frac in [0.5, 1): unbiased exponent e2 - 1
    quantum = std::ldexp(1.f, e2 - 1 - f.man_bits);
  } else {
    quantum = std::ldexp(1.f, 1 - f.bias - f.man_bits);
  }
  const float r = std::nearbyint(a / quantum) * quantum;  // exact: quantum is a power of two
  if (r > f.max) return overflow();
  if (r == 0.f) return f.special == MiniFloatFormat::Special::Fnuz ? 0 : sign;
  uint8_t code;
  if (r < min_normal) {
    code = static_cast<uint8_t>(r / std::ldexp(1.f, 1 - f.bias - f.man_bits));
  } else {
    std::frexp(r, &e2);
    const int man = static_cast<int>((std::ldexp(r, 1 - e2) - 1.f) * static_cast<float>(1 << f.man_bits));
    code = static_cast<uint8_t>(((e2 - 1 + f.bias) << f.man_bits) | man);
  }
  return static_cast<uint8_t>(code | sign);
}

// INT4 / UINT4 codes (low nibble) <-> integer value.
inline int32_t int4_value(uint8_t code) { return static_cast<int32_t>((code & 0x0F) ^ 0x08) - 0x08; }
inline int32_t uint4_value(uint8_t code) { return code & 0x0F; }

}  // namespace onnxmini
