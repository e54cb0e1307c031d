// The 8-, 4- and 2-bit element types (ONNX FLOAT8E4M3FN, FLOAT8E4M3FNUZ,
// FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0, FLOAT4E2M1, INT4, UINT4, INT2, UINT2)
// and their float conversions.
//
// Storage: one element per byte in memory, for every one of these types (the
// 4- and 2-bit codes sit in the low bits, the rest zero), which is also how
// numpy's ml_dtypes lays them out, so arrays cross the Python boundary as they
// are. Only TensorProto raw_data / int32_data packs two 4-bit or four 2-bit
// values per byte (runtime/tensor_proto.cc).
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
#include <cstring>
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

// INT2 / UINT2 codes (low two bits) <-> integer value: [-2, 1] and [0, 3].
inline bool is_int2(DType t) { return t == DType::Int2 || t == DType::UInt2; }
inline int32_t int2_value(uint8_t code) { return static_cast<int32_t>((code & 0x03) ^ 0x02) - 0x02; }
inline int32_t uint2_value(uint8_t code) { return code & 0x03; }
// Bits per element of the types TensorProto packs several to a byte (int4, uint4,
// float4e2m1: 4; int2, uint2: 2); 0 for every other type.
inline int packed_bits(DType t) { return is_int4(t) || t == DType::Float4E2M1 ? 4 : is_int2(t) ? 2 : 0; }

// FLOAT8E8M0, the OCP MX scale type: 8 exponent bits, no sign, no mantissa.
// Code e is 2^(e - 127) (0x00 = 2^-127, 0xFE = 2^127); 0xFF is NaN; there is no
// zero and no infinity.
inline float e8m0_to_float(uint8_t code) {
  return code == 0xFF ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.f, static_cast<int>(code) - 127);
}

// Cast's `round_mode` for FLOAT8E8M0: "up" (default: any mantissa bit set moves to
// the next power of two), "down" (drop the mantissa), "nearest" (mantissa >= 1.5
// rounds up, ties up).
enum class E8M0Rounding { Up, Down, Nearest };

// float -> FLOAT8E8M0 on the float32 bits, as onnx.numpy_helper.to_float8e8m0 (the
// reference implementation the ONNX tests come from) does: the code is the
// float's biased exponent field, plus one when the rounding mode rounds up. The
// sign is ignored (the spec leaves negative inputs unspecified); NaN and +-inf
// give NaN (0xFF); a float32 subnormal or zero has exponent field 0, so it gives
// 0x00 (2^-127), or 0x01 when rounded up. Rounding up from 0xFE gives NaN unless
// `saturate`, which keeps 0xFE (2^127). (The ONNX Cast text's table differs from the
// reference for inf with saturate (E8M0_MAX there) and for underflow without
// saturate (NaN there); the reference's results are the ones the tests check.)
inline uint8_t float_to_e8m0(float x, E8M0Rounding mode, bool saturate) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  uint32_t e = (bits >> 23) & 0xFF;
  const uint32_t m = bits & 0x7FFFFF;
  if (e == 0xFF) return 0xFF;
  bool up = false;
  switch (mode) {
    case E8M0Rounding::Up: up = m != 0; break;
    case E8M0Rounding::Down: break;
    // Guard bit (mantissa >= 0.5) set, and either more bits below it or a normal
    // number: for a normal number 1.5 * 2^e is the tie between 2^e and 2^(e+1),
    // rounded up; for a subnormal 0.5 * 2^-126 is 2^-127 itself (code 0).
    case E8M0Rounding::Nearest: up = (m & 0x400000) && ((m & 0x3FFFFF) || e > 0); break;
  }
  if (up && !(saturate && e == 0xFE)) ++e;  // 0xFE + 1 = 0xFF: NaN without saturate
  return static_cast<uint8_t>(e);
}

}  // namespace onnxmini
