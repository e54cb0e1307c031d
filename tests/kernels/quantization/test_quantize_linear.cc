// QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear against the ONNX
// formulas written out here, the quantize lanes of every ISA this machine has
// against the scalar rule, and the errors (the message names the node and the
// bad value). The comparison with onnxruntime is tests/python/test_quantization_vs_ort.py.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/cpu_features.h"
#include "kernels/quantization/quant_common.h"
#include "kernels/quantization/quantize_lanes.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

// The spec's formula: saturate(round_half_even(x / scale) + zp), in float as the spec's
// reference implementation computes it; NaN -> minimum (this runtime's documented rule).
template <class Q>
Q spec_quantize(float x, float scale, int32_t zp) {
  const float q = std::nearbyint(x / scale) + static_cast<float>(zp);
  if (std::isnan(q)) return std::numeric_limits<Q>::lowest();
  return static_cast<Q>(std::min<float>(std::max<float>(q, std::numeric_limits<Q>::lowest()),
                                        std::numeric_limits<Q>::max()));
}

std::vector<float> tricky_floats(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-300.f * scale, 300.f * scale);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (i % 9) {
      case 0: v[i] = (static_cast<float>(static_cast<int>(i) - 40) + 0.5f) * scale; break;  // ties
      case 1: v[i] = std::numeric_limits<float>::quiet_NaN(); break;
      case 2: v[i] = (i & 2) ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity(); break;
      case 3: v[i] = (i & 2) ? 1e30f : -1e30f; break;
      default: v[i] = u(rng);
    }
  }
  return v;
}

std::vector<cpu::Isa> isas() {
  std::vector<cpu::Isa> v = {cpu::Isa::Portable};
  if (cpu::hw_has_avx2_fma()) v.push_back(cpu::Isa::Avx2);
  if (cpu::hw_has_avx512()) v.push_back(cpu::Isa::Avx512);
  return v;
}

TEST(QuantizeLanes, EveryIsaMatchesTheScalarRule) {
  for (cpu::Isa isa : isas()) {
    const quant::QuantizeLanes& lanes = quant::quantize_lanes_for(isa);
    ASSERT_EQ(lanes.isa, isa);
    for (size_t n : {0, 1, 15, 16, 17, 31, 32, 33, 64, 100, 257}) {
      for (int32_t zp : {0, 3, 128, 255}) {
        const float scale = 0.0371f;
        const std::vector<float> x = tricky_floats(n, static_cast<uint32_t>(n + zp), scale);
        std::vector<uint8_t> yu(n + 1, 0xAA);
        std::vector<int8_t> ys(n + 1, 0x55);
        lanes.to_u8(x.data(), yu.data(), static_cast<int64_t>(n), scale, zp);
        lanes.to_s8(x.data(), ys.data(), static_cast<int64_t>(n), scale, zp - 128);
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(yu[i], spec_quantize<uint8_t>(x[i], scale, zp)) << cpu::isa_name(isa) << " n " << n << " i " << i
                                                                  << " x " << x[i];
          ASSERT_EQ(ys[i], spec_quantize<int8_t>(x[i], scale, zp - 128)) << cpu::isa_name(isa) << " i " << i;
        }
        EXPECT_EQ(yu[n], 0xAA) << "wrote past the end";
        EXPECT_EQ(ys[n], 0x55) << "wrote past the end";
        // The range scan: NaN skipped, starting from the given bounds.
        float lo = 0.f, hi = 0.f, want_lo = 0.f, want_hi = 0.f;
        lanes.min_max(x.data(), static_cast<int64_t>(n), &lo, &hi);
        for (float v : x)
          if (!std::isnan(v)) want_lo = std::min(want_lo, v), want_hi = std::max(want_hi, v);
        EXPECT_EQ(lo, want_lo) << cpu::isa_name(isa) << " n " << n;
        EXPECT_EQ(hi, want_hi) << cpu::isa_name(isa) << " n " << n;
      }
    }
  }
}

Tensor floats(const Shape& shape, uint32_t seed, float scale) {
  Tensor t(DType::Float32, shape);
  const std::vector<float> v = tricky_floats(static_cast<size_t>(t.numel()), seed, scale);
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  return t;
}

// Per-axis and blocked QuantizeLinear, fast and reference, against spec_quantize.
template <class Q>
void check_quantize(const Shape& shape, int64_t axis, int64_t block, KernelMode mode) {
  const Tensor x = floats(shape, 7, 0.05f);
  const int64_t a = axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis;
  Shape pshape = {shape[a]};
  if (block > 0) {
    pshape = shape;
    pshape[a] = (shape[a] + block - 1) / block;
  }
  Tensor scale(DType::Float32, pshape), zp(dtype_of<Q>::value, pshape);
  for (int64_t i = 0; i < scale.numel(); ++i) {
    scale.mutable_data<float>()[i] = 0.01f + 0.003f * static_cast<float>(i % 17);
    zp.mutable_data<Q>()[i] = static_cast<Q>(std::numeric_limits<Q>::lowest() + 5 * (i % 40) + 1);
  }
  const Tensor y = run_op(21, "QuantizeLinear", {x, scale, zp}, [&](NodeBuilder& n) {
    n.attr("axis", axis);
    if (block > 0) n.attr("block_size", block);
  }, mode, 3);
  ASSERT_EQ(y.dtype(), dtype_of<Q>::value);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a; ++d) outer *= shape[d];
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < shape[a]; ++k)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t e = (o * shape[a] + k) * inner + i;
        const int64_t p = block > 0 ? (o * pshape[a] + k / block) * inner + i : k;
        ASSERT_EQ(y.data<Q>()[e], spec_quantize<Q>(x.data<float>()[e], scale.data<float>()[p], zp.data<Q>()[p]))
            << "element " << e;
      }
}

TEST(QuantizeLinear, PerAxisAndBlockedMatchTheFormula) {
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    check_quantize<uint8_t>({3, 40, 20}, 1, 0, mode);
    check_quantize<int8_t>({3, 40, 20}, 0, 0, mode);
    check_quantize<int8_t>({3, 5, 40}, -1, 0, mode);
    check_quantize<int16_t>({4, 33, 2}, 1, 0, mode);
    check_quantize<uint16_t>({4, 10, 3}, 1, 4, mode);
    check_quantize<int8_t>({6, 7}, 0, 4, mode);
    check_quantize<uint8_t>({5, 64}, 1, 16, mode);
  }
}

TEST(QuantizeLinear, PerTensorFastMatchesReference) {
  const Tensor x = floats({1000, 33}, 3, 0.1f);
  const Tensor scale = Tensor::from_vector<float>({}, {0.1f});
  for (const Tensor& zp : {Tensor::from_vector<uint8_t>({}, {17}), Tensor::from_vector<int8_t>({}, {-3})}) {
    EXPECT_TRUE(fast_matches_reference(13, "QuantizeLinear", {x, scale, zp}));
    const Tensor y = run_op(13, "QuantizeLinear", {x, scale, zp}, nullptr, KernelMode::Fast, 4);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float xi = x.data<float>()[i];
      if (zp.dtype() == DType::UInt8) ASSERT_EQ(y.data<uint8_t>()[i], spec_quantize<uint8_t>(xi, 0.1f, 17)) << i;
      else ASSERT_EQ(y.data<int8_t>()[i], spec_quantize<int8_t>(xi, 0.1f, -3)) << i;
    }
  }
}

TEST(DequantizeLinear, PerAxisAndBlockedMatchTheFormula) {
  Tensor x(DType::Int8, {5, 6, 5});  // 3 blocks of 2 along axis 0, the last one partial
  for (int64_t i = 0; i < x.numel(); ++i) x.mutable_data<int8_t>()[i] = static_cast<int8_t>(i * 37);
  Tensor scale = Tensor::from_vector<float>({3, 6, 5}, std::vector<float>(90, 0.f));
  Tensor zp(DType::Int8, {3, 6, 5});
  for (int64_t i = 0; i < 90; ++i) {
    scale.mutable_data<float>()[i] = 0.5f + 0.25f * static_cast<float>(i % 7);
    zp.mutable_data<int8_t>()[i] = static_cast<int8_t>(i % 11 - 5);
  }
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    const Tensor y = run_op(21, "DequantizeLinear", {x, scale, zp}, [](NodeBuilder& n) {
      n.attr("axis", int64_t{0});
      n.attr("block_size", int64_t{2});
    }, mode, 2);
    ASSERT_EQ(y.dtype(), DType::Float32);
    for (int64_t e = 0; e < x.numel(); ++e) {
      const int64_t o = e / 30, rest = e % 30, p = (o / 2) * 30 + rest;
      const float want = static_cast<float>(x.data<int8_t>()[e] - zp.data<int8_t>()[p]) * scale.data<float>()[p];
      ASSERT_EQ(y.data<float>()[e], want) << e;
    }
  }
}

TEST(DynamicQuantizeLinear, MatchesTheSpecRule) {
  for (auto [lo, hi] : {std::pair<float, float>{-3.f, 5.f}, {0.5f, 2.f}, {-2.f, -1.f}}) {
    Tensor x = random_values(DType::Float32, {3, 700}, 11, lo, hi);
    ModelBuilder mb(11);
    mb.input("x", DType::Float32, x.shape());
    mb.node("DynamicQuantizeLinear", {"x"}, {"y", "s", "z"}).name("n1");
    mb.output("y");
    mb.output("s");
    mb.output("z");
    auto session = mb.session(options_for(KernelMode::Fast, 2));
    auto out = run_all(*session, {{"x", x}});
    const float* xv = x.data<float>();
    float mn = 0.f, mx = 0.f;
    for (int64_t i = 0; i < x.numel(); ++i) mn = std::min(mn, xv[i]), mx = std::max(mx, xv[i]);
    const float scale = (mx - mn) / 255.f;
    const uint8_t zp = spec_quantize<uint8_t>(0.f - mn, scale, 0);
    EXPECT_EQ(out[1].data<float>()[0], scale);
    EXPECT_EQ(out[2].data<uint8_t>()[0], zp);
    for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(out[0].data<uint8_t>()[i], spec_quantize<uint8_t>(xv[i], scale, zp));
  }
}

#define EXPECT_ERROR(msg, ...)                                                                 \
  do {                                                                                         \
    const std::string m_ = (msg);                                                              \
    EXPECT_FALSE(m_.empty()) << "no error";                                                    \
    for (const char* part : {__VA_ARGS__}) EXPECT_NE(m_.find(part), std::string::npos) << m_; \
  } while (0)

TEST(QuantizeLinear, Errors) {
  const Tensor x = floats({2, 3}, 1, 0.1f);
  EXPECT_ERROR(op_error(13, "QuantizeLinear", {x, Tensor::from_vector<float>({2}, {1.f, 1.f})},
                        [](NodeBuilder& n) { n.attr("axis", int64_t{1}); }),
               "QuantizeLinear 'n1'", "per-axis scale", "length x.shape[1] = 3", "got shape 2");
  EXPECT_ERROR(op_error(21, "QuantizeLinear", {x, Tensor::from_vector<float>({2, 3}, std::vector<float>(6, 1.f))},
                        [](NodeBuilder& n) { n.attr("axis", int64_t{1}).attr("block_size", int64_t{2}); }),
               "QuantizeLinear 'n1'", "block_size 2", "shape 2x2");
  EXPECT_ERROR(op_error(21, "QuantizeLinear", {x, Tensor::from_vector<float>({}, {1.f}), Tensor::from_vector<int8_t>({}, {0})},
                        [](NodeBuilder& n) { n.attr("output_dtype", int64_t{2}); }),
               "QuantizeLinear 'n1'", "output_dtype uint8", "int8");
  EXPECT_ERROR(op_error(13, "QuantizeLinear", {x, Tensor::from_vector<float>({3}, {1.f, 1.f, 1.f})},
                        [](NodeBuilder& n) { n.attr("axis", int64_t{5}); }),
               "QuantizeLinear 'n1'", "axis 5");
  EXPECT_ERROR(op_error(13, "DequantizeLinear", {Tensor::from_vector<uint8_t>({2}, {1, 2}),
                                                 Tensor::from_vector<float>({}, {1.f}),
                                                 Tensor::from_vector<int8_t>({}, {0})}),
               "DequantizeLinear 'n1'", "x_zero_point dtype int8", "uint8");
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
