// core/minifloat.h: the float8 / float4 formats against values worked out by
// hand from their bit layouts (sign | exponent | mantissa, bias, NaN / inf
// rules of the ONNX type table), and code -> float -> code round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/minifloat.h"

namespace onnxmini {
namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(MiniFloat, KnownCodes) {
  // E4M3FN: bias 7; 1.0 = 0 0111 000; max 448 = 0 1111 110; NaN = x 1111 111; min subnormal 2^-9.
  EXPECT_EQ(float_to_minifloat(1.f, kFloat8E4M3FN, true), 0x38);
  EXPECT_EQ(float_to_minifloat(448.f, kFloat8E4M3FN, true), 0x7E);
  EXPECT_EQ(float_to_minifloat(-448.f, kFloat8E4M3FN, true), 0xFE);
  EXPECT_EQ(float_to_minifloat(std::ldexp(1.f, -9), kFloat8E4M3FN, true), 0x01);
  EXPECT_EQ(float_to_minifloat(1e6f, kFloat8E4M3FN, true), 0x7E);    // saturate
  EXPECT_EQ(float_to_minifloat(1e6f, kFloat8E4M3FN, false), 0x7F);   // overflow -> NaN
  EXPECT_EQ(float_to_minifloat(kInf, kFloat8E4M3FN, true), 0x7E);
  EXPECT_EQ(float_to_minifloat(-kInf, kFloat8E4M3FN, false), 0xFF);
  EXPECT_EQ(float_to_minifloat(kNaN, kFloat8E4M3FN, true), 0x7F);
  EXPECT_EQ(float_to_minifloat(-0.f, kFloat8E4M3FN, true), 0x80);
  // Ties to even: 1 + 1/16 lies halfway between 1 (mantissa 000) and 1.125 (001) -> 1.
  EXPECT_EQ(float_to_minifloat(1.0625f, kFloat8E4M3FN, true), 0x38);
  EXPECT_EQ(float_to_minifloat(1.1875f, kFloat8E4M3FN, true), 0x3A);  // between 001 and 010 -> 010
  // E4M3FNUZ: bias 8; 1.0 = 0 1000 000; max 240 = 0 1111 111; NaN = 0x80; no -0.
  EXPECT_EQ(float_to_minifloat(1.f, kFloat8E4M3FNUZ, true), 0x40);
  EXPECT_EQ(float_to_minifloat(240.f, kFloat8E4M3FNUZ, true), 0x7F);
  EXPECT_EQ(float_to_minifloat(300.f, kFloat8E4M3FNUZ, false), 0x80);
  EXPECT_EQ(float_to_minifloat(-0.f, kFloat8E4M3FNUZ, true), 0x00);
  // E5M2: bias 15; 1.0 = 0 01111 00; max 57344 = 0 11110 11; inf = 0 11111 00.
  EXPECT_EQ(float_to_minifloat(1.f, kFloat8E5M2, true), 0x3C);
  EXPECT_EQ(float_to_minifloat(57344.f, kFloat8E5M2, true), 0x7B);
  EXPECT_EQ(float_to_minifloat(1e6f, kFloat8E5M2, false), 0x7C);
  EXPECT_EQ(float_to_minifloat(-kInf, kFloat8E5M2, false), 0xFC);
  EXPECT_EQ(float_to_minifloat(kInf, kFloat8E5M2, true), 0x7B);
  // E5M2FNUZ: bias 16; 1.0 = 0 10000 00; max 57344 = 0x7F.
  EXPECT_EQ(float_to_minifloat(1.f, kFloat8E5M2FNUZ, true), 0x40);
  EXPECT_EQ(float_to_minifloat(57344.f, kFloat8E5M2FNUZ, true), 0x7F);
  // E2M1: 0, 0.5, 1, 1.5, 2, 3, 4, 6; saturates always.
  EXPECT_EQ(float_to_minifloat(0.5f, kFloat4E2M1, true), 0x1);
  EXPECT_EQ(float_to_minifloat(3.f, kFloat4E2M1, false), 0x5);
  EXPECT_EQ(float_to_minifloat(5.f, kFloat4E2M1, true), 0x6);  // tie 4 / 6 -> even mantissa: 4
  EXPECT_EQ(float_to_minifloat(-100.f, kFloat4E2M1, false), 0xF);
  EXPECT_EQ(minifloat_to_float(0x7, kFloat4E2M1), 6.f);
  EXPECT_EQ(int4_value(0x0D), -3);
  EXPECT_EQ(uint4_value(0x0D), 13);
}

TEST(MiniFloat, EveryCodeRoundTrips) {
  for (const MiniFloatFormat* f : {&kFloat8E4M3FN, &kFloat8E4M3FNUZ, &kFloat8E5M2, &kFloat8E5M2FNUZ, &kFloat4E2M1}) {
    const int codes = 1 << (1 + f->exp_bits + f->man_bits);
    for (int c = 0; c < codes; ++c) {
      const float v = minifloat_to_float(static_cast<uint8_t>(c), *f);
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(minifloat_to_float(float_to_minifloat(v, *f, false), *f))) << c;
        continue;
      }
      for (bool sat : {true, false}) {
        if (std::isinf(v) && sat) continue;  // saturating inf gives max, by design
        EXPECT_EQ(float_to_minifloat(v, *f, sat), c) << "format bias " << f->bias << " code " << c << " value " << v;
      }
    }
  }
}

}  // namespace
}  // namespace onnxmini
