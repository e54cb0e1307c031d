// QuantizeLinear / DequantizeLinear with int2 / uint2 (opset 25+) against the
// formulas written out here: y = clamp(round_half_even(x / scale) + zp) to
// [-2, 1] / [0, 3], and x = (value(code) - value(zp)) * scale for every code.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/minifloat.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

int32_t code_value(DType t, uint8_t c) { return t == DType::Int2 ? int2_value(c) : uint2_value(c); }
uint8_t value_code(int32_t v) { return static_cast<uint8_t>(v & 0x03); }

// The spec's rule in float; NaN -> the type's minimum (this runtime's documented choice).
int32_t spec_quantize_2bit(float x, float scale, int32_t zp, DType t) {
  const int32_t lo = t == DType::Int2 ? -2 : 0, hi = t == DType::Int2 ? 1 : 3;
  const float q = std::nearbyint(x / scale) + static_cast<float>(zp);
  if (std::isnan(q) || q < lo) return lo;
  return q > hi ? hi : static_cast<int32_t>(q);
}

Tensor codes(DType t, const Shape& shape, const std::vector<uint8_t>& c) {
  Tensor x(t, shape);
  for (size_t i = 0; i < c.size(); ++i) static_cast<uint8_t*>(x.raw_mut())[i] = c[i];
  return x;
}

TEST(QuantizeLinearLowBit, PerAxisMatchesTheFormula) {
  // Ties (k + 0.5) * scale, values in and out of range, NaN and infinities.
  std::vector<float> xs;
  for (int k = -12; k <= 12; ++k) xs.push_back((static_cast<float>(k) * 0.5f) * 0.75f);
  for (float v : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), 1e30f, -1e30f, 0.1f, -0.2f})
    xs.push_back(v);
  const int64_t cols = static_cast<int64_t>(xs.size());
  std::vector<float> xv;
  for (int r = 0; r < 3; ++r) xv.insert(xv.end(), xs.begin(), xs.end());
  const Tensor x = Tensor::from_vector<float>({3, cols}, xv);
  const Tensor scale = Tensor::from_vector<float>({3}, {0.75f, 1.5f, 0.25f});
  for (DType t : {DType::Int2, DType::UInt2}) {
    const std::vector<int32_t> zps = t == DType::Int2 ? std::vector<int32_t>{-2, 0, 1} : std::vector<int32_t>{0, 1, 3};
    const Tensor zp = codes(t, {3}, {value_code(zps[0]), value_code(zps[1]), value_code(zps[2])});
    for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
      const Tensor y = run_op(25, "QuantizeLinear", {x, scale, zp}, [](NodeBuilder& n) { n.attr("axis", int64_t{0}); },
                              mode, 2);
      ASSERT_EQ(y.dtype(), t);
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const uint8_t got = static_cast<const uint8_t*>(y.raw())[r * cols + c];
          ASSERT_EQ(got & ~0x03, 0) << "code with high bits set";
          ASSERT_EQ(code_value(t, got), spec_quantize_2bit(xs[c], scale.data<float>()[r], zps[r], t))
              << dtype_name(t) << " row " << r << " x " << xs[c];
        }
    }
  }
  // output_dtype without a zero point (zero point 0).
  const Tensor y = run_op(25, "QuantizeLinear", {x, Tensor::from_vector<float>({}, {1.f})},
                          [](NodeBuilder& n) { n.attr("output_dtype", static_cast<int64_t>(DType::UInt2)); });
  ASSERT_EQ(y.dtype(), DType::UInt2);
  for (int64_t c = 0; c < cols; ++c)
    EXPECT_EQ(uint2_value(static_cast<const uint8_t*>(y.raw())[c]), spec_quantize_2bit(xs[c], 1.f, 0, DType::UInt2));
}

TEST(DequantizeLinearLowBit, EveryCodeAndZeroPoint) {
  for (DType t : {DType::Int2, DType::UInt2})
    for (uint8_t z = 0; z < 4; ++z) {
      const Tensor x = codes(t, {4}, {0, 1, 2, 3});
      const Tensor scale = Tensor::from_vector<float>({}, {2.5f});
      for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
        const Tensor y = run_op(25, "DequantizeLinear", {x, scale, codes(t, {}, {z})}, nullptr, mode, 1);
        ASSERT_EQ(y.dtype(), DType::Float32);
        for (uint8_t c = 0; c < 4; ++c)
          EXPECT_EQ(y.data<float>()[c], static_cast<float>(code_value(t, c) - code_value(t, z)) * 2.5f)
              << dtype_name(t) << " code " << int(c) << " zero point " << int(z);
      }
    }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
