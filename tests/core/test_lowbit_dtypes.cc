// core/minifloat.h, the 2-bit integers and FLOAT8E8M0: every code decoded
// against the type's definition, and float -> e8m0 against a value-based
// reference written from the Cast spec (round_mode up / down / nearest,
// saturate) on every power of two and the floats either side of each
// rounding boundary.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "core/minifloat.h"

namespace onnxmini {
namespace {

TEST(LowBitInts, EveryCodeDecodes) {
  for (int code = 0; code < 4; ++code) {
    // Two's complement on two bits: bit 1 weighs -2.
    EXPECT_EQ(int2_value(static_cast<uint8_t>(code)), (code & 1) - 2 * ((code >> 1) & 1)) << code;
    EXPECT_EQ(uint2_value(static_cast<uint8_t>(code)), code) << code;
    // Bits above the low two are ignored.
    EXPECT_EQ(int2_value(static_cast<uint8_t>(code | 0xFC)), int2_value(static_cast<uint8_t>(code)));
  }
  EXPECT_EQ(packed_bits(DType::Int2), 2);
  EXPECT_EQ(packed_bits(DType::UInt2), 2);
  EXPECT_EQ(packed_bits(DType::Int4), 4);
  EXPECT_EQ(packed_bits(DType::Float4E2M1), 4);
  EXPECT_EQ(packed_bits(DType::Float8E8M0), 0);
  EXPECT_EQ(dtype_size(DType::Int2), 1u);
  EXPECT_STREQ(dtype_name(DType::Float8E8M0), "float8e8m0");
  EXPECT_EQ(dtype_from_name("float8_e8m0fnu"), DType::Float8E8M0);
  EXPECT_EQ(dtype_from_name("uint2"), DType::UInt2);
  EXPECT_TRUE(dtype_is_valid(26));
  EXPECT_FALSE(dtype_is_valid(27));
}

TEST(Float8E8M0, EveryCodeDecodes) {
  for (int code = 0; code < 255; ++code) {
    double want = 1.0;  // 2^(code - 127) by repeated doubling / halving: exact in double
    for (int k = 0; k < code - 127; ++k) want *= 2;
    for (int k = 0; k < 127 - code; ++k) want /= 2;
    EXPECT_EQ(e8m0_to_float(static_cast<uint8_t>(code)), static_cast<float>(want)) << code;
  }
  EXPECT_TRUE(std::isnan(e8m0_to_float(0xFF)));
}

// The Cast spec for a positive normal float x (2^-126 <= x <= FLT_MAX), on values:
// 2^k <= x < 2^(k+1); "down" gives 2^k, "up" 2^(k+1) unless x == 2^k, "nearest"
// 2^(k+1) when x >= 1.5 * 2^k (ties up). Past 2^127: 2^127 with saturate, else NaN.
uint8_t spec_e8m0(float x, E8M0Rounding mode, bool saturate) {
  const double a = std::fabs(static_cast<double>(x));
  int k = -126;
  while (std::ldexp(1.0, k + 1) <= a) ++k;
  const double low = std::ldexp(1.0, k);
  bool up = false;
  if (mode == E8M0Rounding::Up) up = a > low;
  if (mode == E8M0Rounding::Nearest) up = a >= 1.5 * low;
  int code = k + 127 + (up ? 1 : 0);
  if (code > 254) code = saturate ? 254 : 255;
  return static_cast<uint8_t>(code);
}

const char* mode_name(E8M0Rounding m) {
  return m == E8M0Rounding::Up ? "up" : m == E8M0Rounding::Down ? "down" : "nearest";
}

TEST(Float8E8M0, FromFloatMatchesTheSpecAroundEveryBoundary) {
  std::vector<float> xs;
  for (int k = -126; k <= 127; ++k) {
    const float p = std::ldexp(1.f, k), mid = 1.5f * p;
    for (float v : {p, mid}) {
      xs.push_back(v);
      xs.push_back(std::nextafter(v, 0.f));
      xs.push_back(std::nextafter(v, FLT_MAX));
    }
    xs.push_back(1.25f * p);
    xs.push_back(1.75f * p);
  }
  xs.push_back(FLT_MAX);
  for (const float x : xs) {
    if (!(x >= std::ldexp(1.f, -126))) continue;  // nextafter below the smallest normal: see Subnormals
    for (E8M0Rounding mode : {E8M0Rounding::Up, E8M0Rounding::Down, E8M0Rounding::Nearest})
      for (bool sat : {true, false}) {
        ASSERT_EQ(float_to_e8m0(x, mode, sat), spec_e8m0(x, mode, sat))
            << "x " << x << " mode " << mode_name(mode) << " saturate " << sat;
        // The sign is ignored (negative inputs are unspecified; onnx's reference drops it).
        ASSERT_EQ(float_to_e8m0(-x, mode, sat), spec_e8m0(x, mode, sat)) << "x " << -x;
      }
  }
}

TEST(Float8E8M0, EveryCodeRoundTrips) {
  for (int code = 0; code < 255; ++code)
    for (E8M0Rounding mode : {E8M0Rounding::Down, E8M0Rounding::Nearest})
      EXPECT_EQ(float_to_e8m0(e8m0_to_float(static_cast<uint8_t>(code)), mode, true), code) << code;
  // "up" on 2^-127 (a float32 subnormal with a mantissa bit set) gives code 1: see Subnormals.
  for (int code = 1; code < 255; ++code)
    EXPECT_EQ(float_to_e8m0(e8m0_to_float(static_cast<uint8_t>(code)), E8M0Rounding::Up, true), code) << code;
}

TEST(Float8E8M0, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (E8M0Rounding mode : {E8M0Rounding::Up, E8M0Rounding::Down, E8M0Rounding::Nearest})
    for (bool sat : {true, false}) {
      EXPECT_EQ(float_to_e8m0(nan, mode, sat), 0xFF);
      EXPECT_EQ(float_to_e8m0(inf, mode, sat), 0xFF);  // onnx's reference: inf keeps the all-ones exponent
      EXPECT_EQ(float_to_e8m0(0.f, mode, sat), 0x00);  // exponent field 0, no mantissa: 2^-127
    }
}

// Float32 subnormals (exponent field 0) follow onnx's reference bit rule: code 0,
// plus one when the mode rounds up ("up": any mantissa bit; "nearest": mantissa
// above one half of 2^-126, i.e. above 2^-127).
TEST(Float8E8M0, Subnormals) {
  const float half = std::ldexp(1.f, -127), quarter = std::ldexp(1.f, -128);
  EXPECT_EQ(float_to_e8m0(half, E8M0Rounding::Down, true), 0);
  EXPECT_EQ(float_to_e8m0(half, E8M0Rounding::Nearest, true), 0);
  EXPECT_EQ(float_to_e8m0(std::nextafter(half, 1.f), E8M0Rounding::Nearest, true), 1);
  EXPECT_EQ(float_to_e8m0(quarter, E8M0Rounding::Nearest, true), 0);
  EXPECT_EQ(float_to_e8m0(quarter, E8M0Rounding::Up, true), 1);
  EXPECT_EQ(float_to_e8m0(std::nextafter(std::ldexp(1.f, -126), 0.f), E8M0Rounding::Down, true), 0);
}

}  // namespace
}  // namespace onnxmini
