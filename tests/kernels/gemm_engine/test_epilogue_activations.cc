// The HardSigmoid / HardSwish / Swish GEMM epilogues (sgemm_kernel_{portable,avx2,
// avx512}.cc, epilogue_avx{2,512}.h, gemm.cc's apply_epilogue) on every ISA path,
// against the standalone ops' formulas applied to the reference engine's C:
//   HardSigmoid(z) = max(0, min(1, alpha z + beta)), HardSwish(z) = z HardSigmoid_{1/6, 1/2}(z),
//   Swish(z) = z / (1 + exp(-z)).
// Tolerance: the GEMM bound of test_sgemm.cc on z (2 (K + 3) u S + 4u |z| + 1e-6), times
// the activation's largest slope L (alpha; 1.5 for HardSwish on [-3, 3]; 1.1 for Swish),
// plus 8u |ref| for the activation's own rounding (exp polynomial ~1 ulp, a divide, a multiply).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/gemm_engine/sgemm_kernel.h"

namespace onnxmini {
namespace gemm {
namespace {

constexpr float kU = 5.9604645e-8f;  // 2^-24
using Act = Epilogue::Activation;

std::vector<cpu::Isa> isas() {
  std::vector<cpu::Isa> v{cpu::Isa::Portable};
  if (cpu::hw_has_avx2_fma()) v.push_back(cpu::Isa::Avx2);
  if (cpu::hw_has_avx512()) v.push_back(cpu::Isa::Avx512);
  return v;
}

std::string isa_name(const ::testing::TestParamInfo<cpu::Isa>& p) {
  return p.param == cpu::Isa::Portable ? "Portable" : p.param == cpu::Isa::Avx2 ? "Avx2" : "Avx512";
}

double activate(Act a, double z, double alpha, double beta) {
  switch (a) {
    case Act::HardSigmoid: return std::max(0.0, std::min(1.0, alpha * z + beta));
    case Act::HardSwish: return z * std::max(0.0, std::min(1.0, z / 6.0 + 0.5));
    case Act::Swish: return z / (1.0 + std::exp(-z));
    default: return z;
  }
}

double slope_bound(Act a, double alpha) {
  return a == Act::HardSigmoid ? std::fabs(alpha) : a == Act::HardSwish ? 1.5 : 1.1;
}

class EpilogueActivationIsa : public ::testing::TestWithParam<cpu::Isa> {};

TEST_P(EpilogueActivationIsa, MatchesStandaloneOps) {
  const GemmEngine& engine = builtin_engine_for(GetParam());
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  auto random_vec = [&](int64_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };
  // Edge sizes in M and N (partial tiles, masked bias loads), K past one block.
  const int64_t shapes[][3] = {{1, 1, 5}, {5, 17, 33}, {16, 31, 64}, {33, 70, 300}, {7, 129, 1030}};
  int n = 0;
  for (const auto& s : shapes)
    for (Act act : {Act::HardSigmoid, Act::HardSwish, Act::Swish})
      for (bool per_row : {false, true}) {
        const int64_t M = s[0], N = s[1], K = s[2];
        // alpha scales z to about +-4 so every piece of each activation is exercised.
        const float alpha_gemm = 12.0f / std::sqrt(static_cast<float>(K));
        std::vector<float> A = random_vec(M * K), B = random_vec(K * N), bias = random_vec(per_row ? M : N);
        SgemmArgs a;
        a.M = M, a.N = N, a.K = K, a.alpha = alpha_gemm, a.beta = 0.0f;
        a.A = A.data(), a.lda = K, a.B = B.data(), a.ldb = N, a.ldc = N;
        a.epilogue.bias = bias.data();
        a.epilogue.bias_per_row = per_row;
        std::vector<float> z(M * N);
        a.C = z.data();
        reference_engine().sgemm(a, nullptr);  // z = alpha A B + bias, no activation

        a.epilogue.activation = act;
        const float hs_alpha = act == Act::HardSigmoid ? 0.3f : 1.0f / 6.0f;
        const float hs_beta = act == Act::HardSigmoid ? 0.4f : 0.5f;
        a.epilogue.hard_alpha = hs_alpha, a.epilogue.hard_beta = hs_beta;
        std::vector<float> got(M * N);
        a.C = got.data();
        engine.sgemm(a, nullptr);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double S = 0;
            for (int64_t k = 0; k < K; ++k) S += std::fabs(A[i * K + k]) * std::fabs(B[k * N + j]);
            const double zb = alpha_gemm * S + std::fabs(bias[per_row ? i : j]);
            const double tol_z = 2.0 * (K + 3) * kU * zb + 4 * kU * std::fabs(z[i * N + j]) + 1e-6;
            const double ref = activate(act, z[i * N + j], hs_alpha, hs_beta);
            const double tol = slope_bound(act, hs_alpha) * tol_z + 8 * kU * std::fabs(ref) + 1e-6;
            ASSERT_NEAR(got[i * N + j], ref, tol)
                << fused_activation_name(act) << " M=" << M << " N=" << N << " K=" << K << " per_row=" << per_row
                << " at (" << i << ", " << j << "), z = " << z[i * N + j];
          }
        ++n;
      }
  EXPECT_EQ(n, 30);
}

// apply_epilogue (the conv paths without a GEMM epilogue, the depthwise post-pass)
// against the same formulas, on values covering each piece.
TEST(EpilogueActivation, ApplyEpilogueMatchesStandaloneOps) {
  std::vector<float> x;
  for (float v = -9.0f; v <= 9.0f; v += 0.37f) x.push_back(v);
  x.push_back(-100.0f), x.push_back(100.0f);
  for (Act act : {Act::HardSigmoid, Act::HardSwish, Act::Swish}) {
    Epilogue e;
    e.activation = act;
    e.hard_alpha = act == Act::HardSigmoid ? 0.3f : 1.0f / 6.0f;
    e.hard_beta = act == Act::HardSigmoid ? 0.4f : 0.5f;
    std::vector<float> y = x;
    apply_epilogue(e, y.data(), static_cast<int64_t>(y.size()), 0, 0);
    for (size_t i = 0; i < x.size(); ++i) {
      const double ref = activate(act, x[i], e.hard_alpha, e.hard_beta);
      EXPECT_NEAR(y[i], ref, 8 * kU * std::fabs(ref) + 1e-7) << fused_activation_name(act) << " x = " << x[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, EpilogueActivationIsa, ::testing::ValuesIn(isas()), isa_name);

}  // namespace
}  // namespace gemm
}  // namespace onnxmini
