// The Swish epilogue with a slope, y = z * sigmoid(alpha * z) (QuickGelu: alpha 1.702),
// on every ISA path (sgemm_kernel_{portable,avx2,avx512}.cc, epilogue_avx{2,512}.h) and
// in gemm.cc's apply_epilogue, against a float64 reference on the reference engine's C.
// Tolerance: the GEMM bound of test_sgemm.cc on z (2 (K + 3) u S + 4u |z| + 1e-6) times
// the largest slope of z -> z sigmoid(alpha z), which is max |d/dt t sigmoid(t)| = 1.1
// for any alpha (t = alpha z); plus (8 + |t|) u |ref| for the activation's own rounding:
// exp polynomial ~1 ulp, divide, multiply, and the rounding of alpha * z, a relative u on t
// that moves sigmoid(t) by at most |t| u (1 - sigmoid(t)) relative.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/gemm_engine/sgemm_kernel.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace gemm {
namespace {

constexpr double kU = 5.9604645e-8;  // 2^-24
constexpr float kAlphas[] = {1.702f, 1.0f, 0.5f, -1.25f};

double swish(double z, double alpha) { return z / (1.0 + std::exp(-alpha * z)); }

double activation_tol(double ref, double z, double alpha) {
  return (8.0 + std::fabs(alpha * z)) * kU * std::fabs(ref) + 1e-7;
}

std::string isa_name(const ::testing::TestParamInfo<cpu::Isa>& p) {
  return p.param == cpu::Isa::Portable ? "Portable" : p.param == cpu::Isa::Avx2 ? "Avx2" : "Avx512";
}

class EpilogueSwishAlphaIsa : public ::testing::TestWithParam<cpu::Isa> {};

TEST_P(EpilogueSwishAlphaIsa, MatchesFloat64Reference) {
  const GemmEngine& engine = builtin_engine_for(GetParam());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  auto random_vec = [&](int64_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };
  // Edge sizes in M and N (partial tiles, masked bias loads), K past one block.
  const int64_t shapes[][3] = {{1, 1, 5}, {5, 17, 33}, {16, 31, 64}, {33, 70, 300}, {7, 129, 1030}};
  int cases = 0;
  for (const auto& s : shapes)
    for (float alpha : kAlphas)
      for (bool per_row : {false, true}) {
        const int64_t M = s[0], N = s[1], K = s[2];
        const float alpha_gemm = 12.0f / std::sqrt(static_cast<float>(K));  // z about +-4
        std::vector<float> A = random_vec(M * K), B = random_vec(K * N), bias = random_vec(per_row ? M : N);
        SgemmArgs a;
        a.M = M, a.N = N, a.K = K, a.alpha = alpha_gemm, a.beta = 0.0f;
        a.A = A.data(), a.lda = K, a.B = B.data(), a.ldb = N, a.ldc = N;
        a.epilogue.bias = bias.data();
        a.epilogue.bias_per_row = per_row;
        std::vector<float> z(M * N);
        a.C = z.data();
        reference_engine().sgemm(a, nullptr);  // z = alpha A B + bias, no activation

        a.epilogue.activation = Epilogue::Activation::Swish;
        a.epilogue.swish_alpha = alpha;
        std::vector<float> got(M * N);
        a.C = got.data();
        engine.sgemm(a, nullptr);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double S = 0;
            for (int64_t k = 0; k < K; ++k) S += std::fabs(A[i * K + k]) * std::fabs(B[k * N + j]);
            const double zij = z[i * N + j];
            const double zb = alpha_gemm * S + std::fabs(bias[per_row ? i : j]);
            const double tol_z = 2.0 * (K + 3) * kU * zb + 4 * kU * std::fabs(zij) + 1e-6;
            const double ref = swish(zij, alpha);
            ASSERT_NEAR(got[i * N + j], ref, 1.1 * tol_z + activation_tol(ref, zij, alpha))
                << "alpha=" << alpha << " M=" << M << " N=" << N << " K=" << K << " per_row=" << per_row << " at ("
                << i << ", " << j << "), z = " << zij;
          }
        ++cases;
      }
  EXPECT_EQ(cases, 40);
}

// The TileEpi the kernels see carries the slope (base_epi), default 1 (plain Swish).
TEST(EpilogueSwishAlpha, TileEpiCarriesAlpha) {
  Epilogue e;
  e.activation = Epilogue::Activation::Swish;
  EXPECT_EQ(base_epi(e).sa, 1.0f);
  e.swish_alpha = 1.702f;
  EXPECT_EQ(base_epi(e).sa, 1.702f);
  EXPECT_EQ(base_epi(e).act, TileEpi::kSwish);
}

// apply_epilogue (conv paths without a GEMM epilogue, the depthwise post-pass, the
// squeeze-excite kernel): the vectorised sigmoid of the active ISA on alpha * x, or the
// exact formula under ONNXMINI_ISA=portable; lengths past its 256-float chunk.
TEST(EpilogueSwishAlpha, ApplyEpilogueMatchesFloat64Reference) {
  std::vector<float> x;
  for (float v = -9.0f; v <= 9.0f; v += 0.037f) x.push_back(v);
  x.push_back(-100.0f), x.push_back(100.0f), x.push_back(0.0f);
  for (float alpha : kAlphas) {
    Epilogue e;
    e.activation = Epilogue::Activation::Swish;
    e.swish_alpha = alpha;
    std::vector<float> y = x;
    apply_epilogue(e, y.data(), static_cast<int64_t>(y.size()), 0, 0);
    for (size_t i = 0; i < x.size(); ++i) {
      const double ref = swish(x[i], alpha);
      ASSERT_NEAR(y[i], ref, activation_tol(ref, x[i], alpha)) << "alpha=" << alpha << " x = " << x[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, EpilogueSwishAlphaIsa, ::testing::ValuesIn(test::isa_levels()), isa_name);

}  // namespace
}  // namespace gemm
}  // namespace onnxmini
