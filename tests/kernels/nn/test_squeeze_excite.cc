// SqueezeExcite (kernels/nn/squeeze_excite.h): the block's arithmetic on every SIMD table
// (and the plain loops) against a double-precision reference with a running error bound,
// over plane sizes around the summation block (1, 7, 255, 256, 257, 80x80), channel counts
// around the SIMD widths, batches, each activation pair and the residual form. The node
// against its inputs' shapes: errors name the bad input.
#include <gtest/gtest.h>

#include <cmath>

#include "core/thread_pool.h"
#include "kernels/gemm_engine/fused_activation.h"
#include "kernels/nn/squeeze_excite.h"
#include "tests/common/nn_test_util.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace test {
namespace {

using K = FusedActivationKind;

struct Act {
  K kind;
  float params[2];  // HardSigmoid (alpha, beta), Clip (min, max); unused otherwise
  std::vector<float> list() const {
    return kind == K::HardSigmoid || kind == K::Clip ? std::vector<float>{params[0], params[1]} : std::vector<float>{};
  }
};

double act_ref(const Act& a, double v) {
  switch (a.kind) {
    case K::Relu: return v > 0 ? v : 0;
    case K::Sigmoid: return 1.0 / (1.0 + std::exp(-v));
    case K::HardSigmoid: return std::max(0.0, std::min(1.0, a.params[0] * v + a.params[1]));
    case K::HardSwish: return v * std::max(0.0, std::min(1.0, v / 6.0 + 0.5));
    case K::Clip: return std::min<double>(std::max<double>(v, a.params[0]), a.params[1]);
    case K::Swish: return v / (1.0 + std::exp(-v));
    default: return v;
  }
}
// The largest slope of the activation (how much an input error can grow through it).
double act_lipschitz(const Act& a) {
  switch (a.kind) {
    case K::Sigmoid: return 0.25;
    case K::HardSigmoid: return std::fabs(a.params[0]);
    case K::HardSwish: return 1.5;
    case K::Swish: return 1.1;
    default: return 1.0;
  }
}

struct Case {
  int64_t N, C, HW, Cm;
  Act act1, act2;
  bool residual, biases;
};

constexpr double kU = 6e-8;  // float32 unit roundoff (2^-24), rounded up

// Runs the kernel with table `k` (null: plain loops) and checks every output against the
// double reference within a bound carried along the computation: the mean's block sums
// (at most 32 terms per lane + the lane reduction), each dot product's C (Cm) roundings,
// the activation's own rounding, and the slope carrying an input error through it.
void check_case(const Case& c, const simd::F32Kernels* k, uint32_t seed) {
  const Tensor x = random_tensor(DType::Float32, {c.N, c.C, c.HW}, seed);
  const Tensor w1 = random_tensor(DType::Float32, {c.Cm, c.C}, seed + 1);
  const Tensor w2 = random_tensor(DType::Float32, {c.C, c.Cm}, seed + 2);
  const Tensor b1 = random_tensor(DType::Float32, {c.Cm}, seed + 3);
  const Tensor b2 = random_tensor(DType::Float32, {c.C}, seed + 4);
  std::vector<float> y(x.numel(), NAN), means(c.N * c.C), hidden(c.N * c.Cm), gate(c.N * c.C);
  nn::SqueezeExciteArgs a{};
  a.x = x.data<float>(), a.y = y.data();
  a.N = c.N, a.C = c.C, a.HW = c.HW, a.Cm = c.Cm;
  a.w1 = w1.data<float>(), a.w2 = w2.data<float>();
  a.b1 = c.biases ? b1.data<float>() : nullptr, a.b2 = c.biases ? b2.data<float>() : nullptr;
  gemm::FusedActivation{c.act1.kind, c.act1.list()}.set(a.act1);
  gemm::FusedActivation{c.act2.kind, c.act2.list()}.set(a.act2);
  a.residual = c.residual;
  a.means = means.data(), a.hidden = hidden.data(), a.gate = gate.data();
  ThreadPool pool(2);
  squeeze_excite_f32(a, k, &pool);

  const float* px = x.data<float>();
  const std::string what = (k ? test::isa_of(*k) : std::string("plain")) + " N " + std::to_string(c.N) + " C " +
                           std::to_string(c.C) + " HW " + std::to_string(c.HW) + " Cm " + std::to_string(c.Cm);
  const double mean_err = 40 * kU;  // |x| <= 1: block sums of <= 32 terms per lane, then double
  for (int64_t n = 0; n < c.N; ++n) {
    std::vector<double> mean(c.C), h(c.Cm), h_err(c.Cm);
    for (int64_t ch = 0; ch < c.C; ++ch) {
      double s = 0;
      for (int64_t i = 0; i < c.HW; ++i) s += px[(n * c.C + ch) * c.HW + i];
      mean[ch] = s / static_cast<double>(c.HW);
    }
    for (int64_t m = 0; m < c.Cm; ++m) {
      double s = c.biases ? b1.data<float>()[m] : 0.0, mag = std::fabs(s), wsum = 0;
      for (int64_t ch = 0; ch < c.C; ++ch) {
        const double w = w1.data<float>()[m * c.C + ch];
        s += w * mean[ch], mag += std::fabs(w * mean[ch]), wsum += std::fabs(w);
      }
      h[m] = act_ref(c.act1, s);
      h_err[m] = act_lipschitz(c.act1) * (mag * (c.C + 2) * kU + wsum * mean_err) + (std::fabs(h[m]) + 1) * 4 * kU;
    }
    for (int64_t ch = 0; ch < c.C; ++ch) {
      double s = c.biases ? b2.data<float>()[ch] : 0.0, mag = std::fabs(s), err = 0;
      for (int64_t m = 0; m < c.Cm; ++m) {
        const double w = w2.data<float>()[ch * c.Cm + m];
        s += w * h[m], mag += std::fabs(w * h[m]), err += std::fabs(w) * h_err[m];
      }
      double gv = act_ref(c.act2, s);
      double g_err = act_lipschitz(c.act2) * (mag * (c.Cm + 2) * kU + err) + (std::fabs(gv) + 1) * 4 * kU;
      if (c.residual) gv += 1.0, g_err += std::fabs(gv) * kU;
      for (int64_t i = 0; i < c.HW; ++i) {
        const int64_t at = (n * c.C + ch) * c.HW + i;
        const double want = px[at] * gv;
        ASSERT_NEAR(y[at], want, std::fabs(px[at]) * g_err + std::fabs(want) * 2 * kU + 1e-30)
            << what << " at n " << n << " c " << ch << " i " << i;
      }
    }
  }
}

std::vector<const simd::F32Kernels*> tables_and_plain() {
  std::vector<const simd::F32Kernels*> v = simd_tables();
  v.push_back(nullptr);
  return v;
}

TEST(SqueezeExcite, EveryIsaMatchesDoubleReference) {
  const Act relu{K::Relu, {0, 0}}, none{K::None, {0, 0}}, hsig{K::HardSigmoid, {0.2f, 0.5f}};
  const Case cases[] = {
      {1, 96, 6400, 24, relu, hsig, false, true},                       // ppocr_v4_det's 1x96x80x80 block
      {2, 16, 257, 4, relu, {K::HardSigmoid, {1.0f / 6, 0.5f}}, true, true},  // batch, residual form
      {1, 17, 256, 5, none, {K::Sigmoid, {0, 0}}, false, false},          // no biases, no first activation
      {1, 33, 255, 8, {K::HardSwish, {0, 0}}, {K::Clip, {0.0f, 0.75f}}, false, true},
      {3, 8, 7, 2, {K::Swish, {0, 0}}, hsig, true, false},
      {1, 40, 1, 10, relu, {K::Sigmoid, {0, 0}}, false, true},            // 1x1 planes
  };
  uint32_t seed = 100;
  for (const simd::F32Kernels* k : tables_and_plain())
    for (const Case& c : cases) check_case(c, k, seed += 10);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
