// Every level of the half <-> float32 row conversions (kernels/simd/half_rows.h)
// this machine can run gives the bits of core/float16.h's scalar conversions:
// all 65536 half patterns widened, and rounding checked on ties, the overflow
// edge, subnormals, zeros, infinities, NaN and random floats. Odd lengths cover
// the vector tails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/float16.h"
#include "kernels/simd/half_rows.h"

namespace onnxmini {
namespace {

std::vector<const simd::HalfRows*> levels() {
  std::vector<const simd::HalfRows*> v{&simd::half_rows_portable()};
  if (cpu::hw_has_avx2_fma()) v.push_back(&simd::half_rows_avx2());
  if (cpu::hw_has_avx512()) v.push_back(&simd::half_rows_avx512());
  return v;
}

bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return float_to_bits(a) == float_to_bits(b);
}

// A NaN half (exponent all ones, mantissa non-zero) of either format.
bool is_nan_f16(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool is_nan_bf16(uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0; }

// Floats that exercise rounding: exact ties of both formats, around the float16
// overflow edge (65504 + half an ulp = 65520), subnormals, specials, random values.
std::vector<float> tricky_floats() {
  std::vector<float> v = {0.f, -0.f, 1.f, -1.f, 65504.f, 65519.99f, 65520.f, -65520.f, 1e10f, -1e10f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(), 5.9604645e-8f, 2.9802322e-8f, 8.940697e-8f,
                          6.097555e-5f, 6.1035156e-5f, 1e-30f, -1e-30f, 3.4e38f};
  for (uint32_t m = 0; m < 64; ++m) {  // ties and near-ties of float16 (13 dropped bits) and bfloat16 (16)
    v.push_back(bits_to_float(0x3f800000u | (m << 13) | 0x1000u));
    v.push_back(bits_to_float(0x3f800000u | (m << 16) | 0x8000u));
    v.push_back(bits_to_float(0x3f800000u | (m << 16) | 0x8001u));
    v.push_back(bits_to_float(0x33000000u | (m << 13) | 0x1000u));  // float16 subnormal range
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wide(-70000.f, 70000.f), unit(-1.f, 1.f);
  for (int i = 0; i < 2000; ++i) v.push_back(i % 2 ? wide(rng) : unit(rng) * 1e-4f);
  v.push_back(1.f);  // an odd count: a tail on every level
  return v;
}

TEST(HalfRows, WidensEveryFloat16AndBfloat16Pattern) {
  std::vector<uint16_t> all(65536 + 3);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  for (const simd::HalfRows* k : levels()) {
    std::vector<float> y(all.size());
    k->f16_to_f32(all.data(), y.data(), static_cast<int64_t>(all.size()));
    for (size_t i = 0; i < all.size(); ++i)
      ASSERT_TRUE(same_float(y[i], half_to_float(all[i]))) << cpu::isa_name(k->isa) << " float16 0x" << std::hex << all[i];
    k->bf16_to_f32(all.data(), y.data(), static_cast<int64_t>(all.size()));
    for (size_t i = 0; i < all.size(); ++i)
      ASSERT_TRUE(same_float(y[i], bfloat16_to_float(all[i]))) << cpu::isa_name(k->isa) << " bfloat16 0x" << std::hex << all[i];
  }
}

TEST(HalfRows, RoundsToNearestEvenLikeTheScalarConversion) {
  const std::vector<float> x = tricky_floats();
  for (const simd::HalfRows* k : levels()) {
    std::vector<uint16_t> y(x.size());
    k->f32_to_f16(x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const uint16_t want = float_to_half(x[i]);
      if (is_nan_f16(want)) EXPECT_TRUE(is_nan_f16(y[i])) << cpu::isa_name(k->isa) << " at " << x[i];
      else EXPECT_EQ(y[i], want) << cpu::isa_name(k->isa) << " float16 of " << x[i];
    }
    k->f32_to_bf16(x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const uint16_t want = float_to_bfloat16(x[i]);
      if (is_nan_bf16(want)) EXPECT_TRUE(is_nan_bf16(y[i])) << cpu::isa_name(k->isa) << " at " << x[i];
      else EXPECT_EQ(y[i], want) << cpu::isa_name(k->isa) << " bfloat16 of " << x[i];
    }
  }
}

// Every 997th float32 bit pattern (4.3M, all exponents, both signs, NaNs) rounds as the scalar does.
TEST(HalfRows, FloatPatternSweepRoundsLikeTheScalarConversion) {
  std::vector<float> x;
  for (uint64_t b = 0; b < (1ull << 32); b += 997) x.push_back(bits_to_float(static_cast<uint32_t>(b)));
  std::vector<uint16_t> y(x.size());
  for (const simd::HalfRows* k : levels()) {
    k->f32_to_f16(x.data(), y.data(), static_cast<int64_t>(x.size()));
    int64_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const uint16_t want = float_to_half(x[i]);
      const bool ok = is_nan_f16(want) ? is_nan_f16(y[i]) : y[i] == want;
      if (!ok && bad++ < 3) ADD_FAILURE() << cpu::isa_name(k->isa) << " float16 of 0x" << std::hex << float_to_bits(x[i]);
    }
    EXPECT_EQ(bad, 0) << cpu::isa_name(k->isa);
  }
}

TEST(HalfRows, ShortRowsTouchOnlyTheirElements) {
  for (const simd::HalfRows* k : levels()) {
    for (int64_t n = 0; n < 40; ++n) {
      std::vector<float> src(48, 1.5f), dst(48, -7.f);
      std::vector<uint16_t> h(48, 0xabcd);
      k->f32_to_f16(src.data(), h.data(), n);
      k->f16_to_f32(h.data(), dst.data(), n);
      for (int64_t i = 0; i < 48; ++i) {
        EXPECT_EQ(h[i], i < n ? float_to_half(1.5f) : 0xabcd) << cpu::isa_name(k->isa) << " n=" << n << " i=" << i;
        EXPECT_EQ(dst[i], i < n ? 1.5f : -7.f) << cpu::isa_name(k->isa) << " n=" << n << " i=" << i;
      }
    }
  }
}

}  // namespace
}  // namespace onnxmini
