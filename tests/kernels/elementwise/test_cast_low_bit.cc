// Cast / CastLike to and from int2, uint2 and float8e8m0 against the rules
// written out here from the ONNX spec and its reference implementation:
// float -> 2-bit integers truncate toward zero and keep the low two bits
// (wrap: 3.0 -> int2 -1, as onnx.reference / ml_dtypes do); 2-bit codes and
// e8m0 codes decode to their values, then the destination's usual rule;
// float -> e8m0 follows core/minifloat.h's float_to_e8m0 (checked against the
// spec in tests/core/test_lowbit_dtypes.cc) for each round_mode / saturate.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "core/float16.h"
#include "core/minifloat.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// float -> low two bits of trunc(x); NaN / inf / beyond int64 -> 0.
uint8_t spec_to_2bit(double x) {
  if (!std::isfinite(x) || std::fabs(x) >= 9.2e18) return 0;
  const int64_t t = static_cast<int64_t>(std::trunc(x));
  return static_cast<uint8_t>(((t % 4) + 4) % 4);
}

Tensor codes(DType t, const std::vector<uint8_t>& c) {
  Tensor x(t, {static_cast<int64_t>(c.size())});
  for (size_t i = 0; i < c.size(); ++i) static_cast<uint8_t*>(x.raw_mut())[i] = c[i];
  return x;
}
const uint8_t* code_data(const Tensor& t) { return static_cast<const uint8_t*>(t.raw()); }

NodeSetup cast_to(DType t, const char* round_mode = nullptr, int64_t saturate = 1) {
  return [=](NodeBuilder& n) {
    n.attr("to", static_cast<int64_t>(t));
    n.attr("saturate", saturate);
    if (round_mode) n.attr("round_mode", round_mode);
  };
}

TEST(CastLowBit, FloatToTwoBitIntegersWraps) {
  std::vector<float> xs = {kNaN, kInf, -kInf, 1e20f, -1e20f, 2.5f, -1.5f, 0.99f, -0.99f, 3.75f};
  for (int v = -9; v <= 9; ++v) xs.push_back(static_cast<float>(v));
  const Tensor x = Tensor::from_vector<float>({static_cast<int64_t>(xs.size())}, xs);
  for (DType to : {DType::Int2, DType::UInt2})
    for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
      const Tensor y = run_op(25, "Cast", {x}, cast_to(to), mode, 2);
      ASSERT_EQ(y.dtype(), to);
      for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(code_data(y)[i], spec_to_2bit(xs[i])) << xs[i];
      // CastLike takes the type from its second input.
      const Tensor like = run_op(25, "CastLike", {x, codes(to, {0})}, nullptr, mode, 2);
      ASSERT_EQ(like.dtype(), to);
      for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(code_data(like)[i], spec_to_2bit(xs[i])) << xs[i];
    }
  // Integer sources wrap alike: int64 -> low two bits.
  const Tensor ints = Tensor::from_vector<int64_t>({5}, {-5, -2, 3, 6, int64_t{1} << 40});
  const Tensor y = run_op(25, "Cast", {ints}, cast_to(DType::Int2));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(code_data(y)[i], spec_to_2bit(static_cast<double>(ints.data<int64_t>()[i])));
}

TEST(CastLowBit, EveryTwoBitCodeToOtherTypes) {
  for (DType from : {DType::Int2, DType::UInt2}) {
    const Tensor x = codes(from, {0, 1, 2, 3});
    auto value = [&](int c) { return from == DType::Int2 ? int2_value(uint8_t(c)) : uint2_value(uint8_t(c)); };
    const Tensor f = run_op(25, "Cast", {x}, cast_to(DType::Float32));
    const Tensor h = run_op(25, "Cast", {x}, cast_to(DType::Float16));
    const Tensor i8 = run_op(25, "Cast", {x}, cast_to(DType::Int8));
    const Tensor u8 = run_op(25, "Cast", {x}, cast_to(DType::UInt8));
    const Tensor b = run_op(25, "Cast", {x}, cast_to(DType::Bool));
    const Tensor i4 = run_op(25, "Cast", {x}, cast_to(DType::Int4));
    const Tensor other = run_op(25, "Cast", {x}, cast_to(from == DType::Int2 ? DType::UInt2 : DType::Int2));
    for (int c = 0; c < 4; ++c) {
      EXPECT_EQ(f.data<float>()[c], static_cast<float>(value(c))) << c;
      EXPECT_EQ(half_to_float(static_cast<const uint16_t*>(h.raw())[c]), static_cast<float>(value(c))) << c;
      EXPECT_EQ(i8.data<int8_t>()[c], value(c)) << c;
      EXPECT_EQ(u8.data<uint8_t>()[c], static_cast<uint8_t>(value(c))) << c;  // -1 -> 255: integer wrap
      EXPECT_EQ(b.data<bool>()[c], value(c) != 0) << c;
      EXPECT_EQ(int4_value(code_data(i4)[c]), value(c)) << c;
      EXPECT_EQ(code_data(other)[c], c) << c;  // int2 <-> uint2 keeps the bits
    }
  }
}

TEST(CastLowBit, FloatToE8M0EveryRoundModeAndSaturate) {
  std::vector<float> xs = {0.f, 0.124f, 0.25f, 0.5f, 1.1f, 1.5f, 1.4999f, 2.f, 3.f, 1e-39f, 3e38f, FLT_MAX, kInf, kNaN, -2.f};
  for (int k = -126; k <= 127; k += 7) {
    const float p = std::ldexp(1.f, k);
    for (float v : {p, std::nextafter(p, 0.f), std::nextafter(p, kInf), 1.5f * p, std::nextafter(1.5f * p, 0.f)}) xs.push_back(v);
  }
  const Tensor x = Tensor::from_vector<float>({static_cast<int64_t>(xs.size())}, xs);
  struct Mode {
    const char* name;  // nullptr: the default ("up")
    E8M0Rounding rounding;
  };
  for (Mode m : {Mode{nullptr, E8M0Rounding::Up}, Mode{"up", E8M0Rounding::Up}, Mode{"down", E8M0Rounding::Down},
                 Mode{"nearest", E8M0Rounding::Nearest}})
    for (int64_t sat : {0, 1})
      for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
        const Tensor y = run_op(25, "Cast", {x}, cast_to(DType::Float8E8M0, m.name, sat), mode, 2);
        ASSERT_EQ(y.dtype(), DType::Float8E8M0);
        for (size_t i = 0; i < xs.size(); ++i)
          EXPECT_EQ(code_data(y)[i], float_to_e8m0(xs[i], m.rounding, sat != 0))
              << xs[i] << " round_mode " << (m.name ? m.name : "(default)") << " saturate " << sat;
      }
  // float16 and double sources go through float32 first (exact for both values here).
  const Tensor h = run_op(25, "Cast", {Tensor::from_vector<double>({2}, {1.1, 0.25})}, cast_to(DType::Float8E8M0));
  EXPECT_EQ(code_data(h)[0], 128);  // 1.1 rounds up to 2
  EXPECT_EQ(code_data(h)[1], 125);
}

TEST(CastLowBit, EveryE8M0CodeToOtherTypes) {
  std::vector<uint8_t> all(256);
  for (int c = 0; c < 256; ++c) all[c] = static_cast<uint8_t>(c);
  const Tensor x = codes(DType::Float8E8M0, all);
  const Tensor f = run_op(25, "Cast", {x}, cast_to(DType::Float32));
  const Tensor h = run_op(25, "Cast", {x}, cast_to(DType::Float16));
  const Tensor d = run_op(25, "Cast", {x}, cast_to(DType::Float64));
  const Tensor i32 = run_op(25, "Cast", {x}, cast_to(DType::Int32));
  for (int c = 0; c < 256; ++c) {
    const float v = e8m0_to_float(static_cast<uint8_t>(c));
    if (c == 255) {
      EXPECT_TRUE(std::isnan(f.data<float>()[c]));
      EXPECT_TRUE(std::isnan(half_to_float(static_cast<const uint16_t*>(h.raw())[c])));
      EXPECT_EQ(i32.data<int32_t>()[c], 0);  // NaN -> 0, the float -> integer rule
      continue;
    }
    EXPECT_EQ(f.data<float>()[c], v) << c;
    EXPECT_EQ(d.data<double>()[c], static_cast<double>(v)) << c;
    // float16 rounds the power of two: 0 below its range, inf above it.
    EXPECT_EQ(static_cast<const uint16_t*>(h.raw())[c], float_to_half(v)) << c;
    const double want = v >= 2147483647.0 ? 2147483647.0 : std::trunc(static_cast<double>(v));
    EXPECT_EQ(i32.data<int32_t>()[c], static_cast<int32_t>(want)) << c;  // saturates, truncates
  }
  // ...and e8m0 -> e8m0 through CastLike is the identity.
  const Tensor same = run_op(25, "CastLike", {x, codes(DType::Float8E8M0, {0})});
  for (int c = 0; c < 256; ++c) EXPECT_EQ(code_data(same)[c], c);
}

TEST(CastLowBit, BadRoundModeNamesTheNode) {
  const Tensor x = Tensor::from_vector<float>({1}, {1.f});
  const std::string m = op_error(25, "Cast", {x}, cast_to(DType::Float8E8M0, "zero"));
  EXPECT_NE(m.find("Cast 'n1'"), std::string::npos) << m;
  EXPECT_NE(m.find("round_mode = 'zero'"), std::string::npos) << m;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
