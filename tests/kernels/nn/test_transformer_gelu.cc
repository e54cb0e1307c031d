// com.microsoft BiasGelu (gelu(A + B), erf form) and FastGelu (tanh form of X + bias, bias
// optional) against float64 references of the float sum v = x + b, on the active ISA (CTest
// reruns this suite with ONNXMINI_ISA=avx2 and portable): fast mode with threads splitting
// the input inside rows (the bias column follows the offset), vector and scalar biases,
// row lengths with and without a SIMD tail; the reference mode too.
//
// Bounds: on AVX2 / AVX-512 the SIMD Gelus of kernels/simd/erf_impl.h, with the relative
// bounds derived in tests/kernels/simd/test_erf.cc (u = 2^-24):
//   erf form: 24 u, and (4 a^2 + 24) u for v < -sqrt 2 (a = |v| / sqrt 2);
//   tanh form: (4 |w| + 24) u for w < 0 (w = 2 sqrt(2/pi) (v + 0.044715 v^3)), 24 u above;
// results below 1e-33 absolutely (exp arguments below -80 give 0). The portable level and
// the reference mode compute 0.5 v (1 + erf / tanh) in float with libm: 1 + erf(z) cancels
// for negative v (erf's spacing near -1, 6e-8, times 0.5 |v|), so they get 1e-6 absolute
// for |v| <= 8 on top of 24 u relative.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/simd/f32_kernels.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

constexpr double kU = 5.9604644775390625e-8;  // 2^-24

Tensor run_ms_gelu(const std::string& op, const Tensor& x, const Tensor* bias, KernelMode mode, int threads) {
  ModelBuilder mb(17);
  mb.import_domain("com.microsoft", 1);
  mb.input("x", DType::Float32, x.shape());
  std::vector<std::string> ins = {"x"};
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", x}};
  if (bias) {
    mb.input("b", DType::Float32, bias->shape());
    ins.push_back("b");
    feeds.emplace_back("b", *bias);
  }
  mb.node(op, ins, {"y"}).domain("com.microsoft").name("n1");
  mb.output("y");
  return run_single(*mb.session(options_for(mode, threads)), feeds);
}

double gelu_erf_ref(double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); }
double tanh_w(double v) { return 2.0 * std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v); }
double gelu_tanh_ref(double v) {
  const double w = tanh_w(v);
  return w >= 0 ? v / (1.0 + std::exp(-w)) : v * std::exp(w) / (1.0 + std::exp(w));
}

// Checks y against the reference of v = float(x + bias[i % nb]) with the bounds above.
void expect_within_bounds(const std::string& op, const Tensor& x, const Tensor* bias, const Tensor& y, bool simd) {
  const bool tanh_form = op == "FastGelu";
  const int64_t nb = bias ? bias->numel() : 1;
  ASSERT_EQ(y.shape(), x.shape());
  double worst = 0;
  int64_t worst_i = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = x.data<float>()[i] + (bias ? bias->data<float>()[i % nb] : 0.0f);
    const double vd = v, ref = tanh_form ? gelu_tanh_ref(vd) : gelu_erf_ref(vd);
    double rel = 24 * kU, abs_tol = 1e-33;
    if (!simd) {
      abs_tol = 1e-6;
    } else if (tanh_form) {
      const double w = tanh_w(vd);
      if (w < 0) rel += 4 * std::fabs(w) * kU;
    } else if (vd < -std::sqrt(2.0)) {
      rel += 2 * vd * vd * kU;  // 4 a^2 u, a^2 = v^2 / 2
    }
    const double frac = std::fabs(y.data<float>()[i] - ref) / (rel * std::fabs(ref) + abs_tol);
    if (frac > worst) worst = frac, worst_i = i;
  }
  EXPECT_LE(worst, 1.0) << op << (simd ? " simd" : " scalar") << " at element " << worst_i << " of "
                        << shape_to_string(x.shape());
}

struct Case {
  Shape x, bias;  // bias empty: no bias input
};

void check_op(const std::string& op, const std::vector<Case>& cases) {
  const bool simd = simd::f32_kernels().isa != cpu::Isa::Portable;
  uint32_t seed = 70;
  for (const Case& c : cases) {
    const Tensor x = random_values(DType::Float32, c.x, seed++, -8, 8);
    const Tensor b = random_values(DType::Float32, c.bias.empty() ? Shape{1} : c.bias, seed++, -1, 1);
    const Tensor* bias = c.bias.empty() ? nullptr : &b;
    for (int threads : {1, 4})
      expect_within_bounds(op, x, bias, run_ms_gelu(op, x, bias, KernelMode::Fast, threads), simd);
    expect_within_bounds(op, x, bias, run_ms_gelu(op, x, bias, KernelMode::Reference, 1), false);
  }
}

TEST(TransformerGelu, BiasGeluWithinDerivedBounds) {
  // [5, 7000]: 35000 elements, thread chunks end inside rows; 50 = 3 registers + a tail.
  check_op("BiasGelu", {{{2, 3, 50}, {50}}, {{4, 768}, {768}}, {{5, 7000}, {7000}}, {{3, 37}, {1}}, {{1}, {1}}});
}

TEST(TransformerGelu, FastGeluWithinDerivedBounds) {
  check_op("FastGelu", {{{2, 3, 50}, {50}}, {{4, 768}, {768}}, {{5, 7000}, {7000}}, {{3, 37}, {1}}, {{2, 45}, {}},
                        {{70001}, {}}});
}

// The profile names the path the kernel took.
TEST(TransformerGelu, PlanNamesTheSimdPath) {
  const simd::F32Kernels& k = simd::f32_kernels();
  const std::string want = k.isa == cpu::Isa::Portable ? "gelu_loop" : "gelu_simd";
  ModelBuilder mb(17);
  mb.import_domain("com.microsoft", 1);
  mb.input("x", DType::Float32, {2, 8}).input("b", DType::Float32, {8});
  mb.node("BiasGelu", {"x", "b"}, {"y"}).domain("com.microsoft").name("n1");
  mb.output("y");
  auto session = mb.session(options_for(KernelMode::Fast, 1));
  const std::vector<KernelExplanation> rows = session->explain();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].variant, want);
  EXPECT_EQ(rows[0].isa, cpu::isa_name(k.isa));
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
