// RMSNormalization and RotaryEmbedding (kernels/attention): fast (float32
// rows, 4 threads, every ISA's float16 conversions) against the reference
// paths (double), and LayerNormalization on float16 / bfloat16 against the
// float32 kernel on the same (widened) values.
//
// Tolerances:
//   RMSNormalization: the float32 sum of squares of `cols` values has a
//     relative error <= cols * eps32, 1/sqrt of it half that, and y = x * inv
//     * scale two more roundings: rtol = (cols / 2 + 3) * eps32.
//   RotaryEmbedding: y = x1 * c - x2 * s with |x|, |c|, |s| <= 1: two products
//     and a sum, each rounded: atol = 3 * eps32 * 2.
//   float16 / bfloat16 outputs: + 2 units of the output rounding (2^-11 /
//     2^-8 relative), since both sides round.
#include <gtest/gtest.h>

#include <cmath>

#include "core/cpu_features.h"
#include "kernels/attention/attention_lanes.h"
#include "tests/common/node_runner.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

const double kEps32 = std::ldexp(1.0, -23);

std::vector<cpu::Isa> isas() {
  std::vector<cpu::Isa> v{cpu::Isa::Portable};
  if (cpu::hw_has_avx2_fma()) v.push_back(cpu::Isa::Avx2);
  if (cpu::hw_has_avx512()) v.push_back(cpu::Isa::Avx512);
  return v;
}
struct IsaScope {
  explicit IsaScope(cpu::Isa isa) { attention::set_attention_isa_for_tests(isa); }
  ~IsaScope() { attention::set_attention_isa_for_tests(cpu::active_isa()); }
};

double storage_rounding(DType t) {
  return t == DType::Float16 ? 2 * std::ldexp(1.0, -11) : t == DType::BFloat16 ? 2 * std::ldexp(1.0, -8) : 0.0;
}

TEST(RmsNormalization, FastMatchesReference) {
  struct C {
    Shape x, scale;
    int64_t axis;
  };
  const std::vector<C> cases = {{{2, 3, 64}, {64}, -1},       {{4, 5}, {5}, 1},          {{2, 3, 4, 5}, {4, 5}, 2},
                                {{2, 3, 4, 5}, {1, 5}, -2},   {{3, 7}, {3, 7}, 1},       {{6, 17}, {1}, -1},
                                {{2, 3, 4}, {2, 3, 4}, 0},    {{1, 9, 4096}, {4096}, 2}, {{5, 33}, {5, 1}, 1}};
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64})
    for (const C& c : cases) {
      const std::vector<Tensor> in{random_values(t, c.x, 3, -2, 2), random_values(t, c.scale, 4, -1.5, 1.5)};
      auto attrs = [&](NodeBuilder& n) {
        n.attr("axis", c.axis);
        n.attr("epsilon", 1e-3f);
      };
      const auto ref = run_node("RMSNormalization", 23, in, attrs, 1, KernelMode::Reference);
      int64_t cols = 1;
      for (size_t d = static_cast<size_t>(c.axis < 0 ? c.axis + c.x.size() : c.axis); d < c.x.size(); ++d) cols *= c.x[d];
      const double rtol = (cols / 2.0 + 3) * kEps32 + storage_rounding(t);
      for (cpu::Isa isa : isas()) {
        IsaScope scope(isa);
        const auto fast = run_node("RMSNormalization", 23, in, attrs, 1, KernelMode::Fast, 4);
        EXPECT_TRUE(tensors_near(fast[0], ref[0], 1e-30, rtol))
            << dtype_name(t) << " " << shape_to_string(c.x) << " axis " << c.axis << " " << cpu::isa_name(isa);
      }
    }
}

TEST(RmsNormalization, ReferenceMatchesTheFormula) {
  // Independent check of the oracle: y = x / sqrt(mean(x^2) + eps) * scale on one row.
  const Tensor x = Tensor::from_vector<float>({1, 4}, {1.f, -2.f, 3.f, 0.5f});
  const Tensor s = Tensor::from_vector<float>({4}, {1.f, 2.f, -1.f, 0.f});
  const auto y = run_node("RMSNormalization", 23, {x, s}, nullptr, 1, KernelMode::Reference);
  const double rms = std::sqrt((1 + 4 + 9 + 0.25) / 4.0 + 1e-5);
  const std::vector<float> expect = {static_cast<float>(1 / rms), static_cast<float>(-4 / rms),
                                     static_cast<float>(-3 / rms), 0.f};
  EXPECT_TRUE(tensors_near(y[0], Tensor::from_vector<float>({1, 4}, expect), 0, 4 * kEps32));
}

TEST(RmsNormalization, ErrorsNameTheValues) {
  const std::vector<Tensor> in{random_values(DType::Float32, {2, 3}, 1), random_values(DType::Float32, {4}, 2)};
  const std::string e = node_error("RMSNormalization", 23, in, nullptr);
  EXPECT_NE(e.find("scale has shape 4, not broadcastable to X 2x3"), std::string::npos) << e;
  const std::string a = node_error("RMSNormalization", 23, {in[0], random_values(DType::Float32, {3}, 2)},
                                   [](NodeBuilder& n) { n.attr("axis", int64_t{2}); });
  EXPECT_NE(a.find("axis 2 is out of range"), std::string::npos) << a;
}

struct RopeCase {
  bool rank3, interleaved, positions;
  int64_t rotary_dim;
};

TEST(RotaryEmbedding, FastMatchesReference) {
  const int64_t B = 2, S = 5, H = 3, D = 16, max_pos = 11;
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
    for (bool rank3 : {false, true})
      for (bool interleaved : {false, true})
        for (bool positions : {false, true})
          for (int64_t rd : {int64_t{0}, int64_t{8}}) {
            const int64_t half = (rd ? rd : D) / 2;
            std::vector<Tensor> in{
                random_values(t, rank3 ? Shape{B, S, H * D} : Shape{B, H, S, D}, 5, -1, 1),
                random_values(t, positions ? Shape{max_pos, half} : Shape{B, S, half}, 6, -1, 1),
                random_values(t, positions ? Shape{max_pos, half} : Shape{B, S, half}, 7, -1, 1)};
            if (positions) {
              std::vector<int64_t> ids;
              for (int64_t k = 0; k < B * S; ++k) ids.push_back((k * 7 + 3) % max_pos);
              in.push_back(Tensor::from_vector<int64_t>({B, S}, ids));
            }
            auto attrs = [&](NodeBuilder& n) {
              n.attr("interleaved", int64_t{interleaved});
              if (rd) n.attr("rotary_embedding_dim", rd);
              if (rank3) n.attr("num_heads", H);
            };
            const auto ref = run_node("RotaryEmbedding", 23, in, attrs, 1, KernelMode::Reference);
            for (cpu::Isa isa : isas()) {
              IsaScope scope(isa);
              const auto fast = run_node("RotaryEmbedding", 23, in, attrs, 1, KernelMode::Fast, 4);
              EXPECT_TRUE(tensors_near(fast[0], ref[0], 6 * kEps32 + 2 * storage_rounding(t), 0))
                  << dtype_name(t) << " rank3 " << rank3 << " interleaved " << interleaved << " positions "
                  << positions << " rd " << rd << " " << cpu::isa_name(isa);
            }
          }
}

TEST(RotaryEmbedding, ReferenceRotatesPairs) {
  // One head of 4 features, halves: pairs (0, 2) and (1, 3) rotated by 90 and 0 degrees.
  const Tensor x = Tensor::from_vector<float>({1, 1, 1, 4}, {1.f, 2.f, 3.f, 4.f});
  const Tensor c = Tensor::from_vector<float>({1, 1, 2}, {0.f, 1.f});
  const Tensor s = Tensor::from_vector<float>({1, 1, 2}, {1.f, 0.f});
  const auto y = run_node("RotaryEmbedding", 23, {x, c, s}, nullptr, 1, KernelMode::Reference);
  EXPECT_TRUE(tensors_near(y[0], Tensor::from_vector<float>({1, 1, 1, 4}, {-3.f, 2.f, 1.f, 4.f}), 0, 0));
}

TEST(RotaryEmbedding, ErrorsNameTheValues) {
  const std::vector<Tensor> in{random_values(DType::Float32, {1, 2, 3, 8}, 1), random_values(DType::Float32, {5, 4}, 2),
                               random_values(DType::Float32, {5, 4}, 3),
                               Tensor::from_vector<int64_t>({1, 3}, {0, 1, 9})};
  const std::string e = node_error("RotaryEmbedding", 23, in, nullptr);
  EXPECT_NE(e.find("position_ids[2] = 9 is outside the caches' [0, 5)"), std::string::npos) << e;
  const std::string r = node_error("RotaryEmbedding", 23, {in[0], in[1], in[2]}, nullptr);
  EXPECT_NE(r.find("expected 1x3x4"), std::string::npos) << r;
}

TEST(LayerNormalization, HalfAndBfloat16MatchFloat32OnTheSameValues) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    const std::vector<Tensor> in{random_values(t, {3, 4, 40}, 1, -3, 3), random_values(t, {40}, 2),
                                 random_values(t, {40}, 3)};
    std::vector<Tensor> wide;
    for (const Tensor& v : in) {
      Tensor f(DType::Float32, v.shape());
      for (int64_t i = 0; i < v.numel(); ++i) f.mutable_data<float>()[i] = static_cast<float>(v.get_as_double(i));
      wide.push_back(f);
    }
    const auto attrs = [](NodeBuilder& n) { n.attr("axis", int64_t{-1}); };
    for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
      const auto y = run_node("LayerNormalization", 17, in, attrs, 3, mode, 2);
      const auto yf = run_node("LayerNormalization", 17, wide, attrs, 3, mode, 2);
      ASSERT_EQ(y[0].dtype(), t);
      EXPECT_EQ(y[1].dtype(), DType::Float32);  // stash_type 1
      Tensor rounded(t, yf[0].shape());
      for (int64_t i = 0; i < rounded.numel(); ++i) {
        const float v = yf[0].data<float>()[i];
        static_cast<uint16_t*>(rounded.raw_mut())[i] = t == DType::Float16 ? float_to_half(v) : float_to_bfloat16(v);
      }
      EXPECT_TRUE(tensors_near(y[0], rounded, 0, 0)) << dtype_name(t);  // same float32 math, one rounding
      EXPECT_TRUE(tensors_near(y[1], yf[1], 0, 0));
      EXPECT_TRUE(tensors_near(y[2], yf[2], 0, 0));
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
