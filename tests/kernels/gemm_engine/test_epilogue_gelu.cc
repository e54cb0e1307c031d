// The Gelu / GeluTanh GEMM epilogues (sgemm_kernel_{portable,avx2,avx512}.cc through
// epilogue_avx{2,512}.h and erf_impl.h, gemm.cc's apply_epilogue) on every ISA path,
// against a float64 reference: z = alpha A B + bias accumulated in double, then
// Gelu(z) = 0.5 z erfc(-z / sqrt 2) and GeluTanh(z) = z sigmoid(2 sqrt(2/pi) (z + 0.044715 z^3)).
// Tolerance: the GEMM bound of test_sgemm.cc on z (2 (K + 3) u S + 1e-6) times Gelu's
// largest slope (1.13 for both forms, at z ~ 2.1; 1.2 used), plus the activation's own
// relative error (4 a^2 + 24) u |ref| (a = |z| / sqrt 2; tests/kernels/simd/test_erf.cc), and
// 1e-33 absolute where the far tails are flushed to 0.
#include <gtest/gtest.h>

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

constexpr double kU = 5.9604644775390625e-8;  // 2^-24
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

double gelu64(Act a, double z) {
  if (a == Act::Gelu) return 0.5 * z * std::erfc(-z / std::sqrt(2.0));
  const double w = 2.0 * std::sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z);
  return w >= 0 ? z / (1.0 + std::exp(-w)) : z * std::exp(w) / (1.0 + std::exp(w));
}

double own_tol(Act a, double z, double ref) {
  const double s = std::fabs(z) / std::sqrt(2.0);
  const double w = 2.0 * std::sqrt(2.0 / M_PI) * std::fabs(z + 0.044715 * z * z * z);
  const double rel = a == Act::Gelu ? 4 * s * s + 24 : 4 * w + 24;
  return rel * kU * std::fabs(ref);
}

class EpilogueGeluIsa : public ::testing::TestWithParam<cpu::Isa> {};

TEST_P(EpilogueGeluIsa, MatchesFloat64Reference) {
  const GemmEngine& engine = builtin_engine_for(GetParam());
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  auto random_vec = [&](int64_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };
  // Edge sizes in M and N (partial tiles, masked bias loads, the skinny A-rows path), K past one block.
  const int64_t shapes[][3] = {{1, 1, 5}, {5, 17, 33}, {16, 31, 64}, {33, 70, 300}, {7, 129, 1030}, {64, 8, 40}};
  int n = 0;
  for (const auto& s : shapes)
    for (Act act : {Act::Gelu, Act::GeluTanh})
      for (bool per_row : {false, true}) {
        const int64_t M = s[0], N = s[1], K = s[2];
        // alpha scales z to about +-6 so both erf branches and the negative tail are exercised.
        const float alpha = 18.0f / std::sqrt(static_cast<float>(K));
        std::vector<float> A = random_vec(M * K), B = random_vec(K * N), bias = random_vec(per_row ? M : N);
        SgemmArgs a;
        a.M = M, a.N = N, a.K = K, a.alpha = alpha, a.beta = 0.0f;
        a.A = A.data(), a.lda = K, a.B = B.data(), a.ldb = N, a.ldc = N;
        a.epilogue.bias = bias.data();
        a.epilogue.bias_per_row = per_row;
        a.epilogue.activation = act;
        std::vector<float> got(M * N);
        a.C = got.data();
        engine.sgemm(a, nullptr);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double z = 0, S = 0;
            for (int64_t k = 0; k < K; ++k) {
              z += static_cast<double>(A[i * K + k]) * B[k * N + j];
              S += std::fabs(A[i * K + k]) * std::fabs(B[k * N + j]);
            }
            const double b = bias[per_row ? i : j];
            z = alpha * z + b;
            const double tol_z = 2.0 * (K + 3) * kU * (alpha * S + std::fabs(b)) + 1e-6;
            const double ref = gelu64(act, z);
            ASSERT_NEAR(got[i * N + j], ref, 1.2 * tol_z + own_tol(act, z, ref))
                << fused_activation_name(act) << " M=" << M << " N=" << N << " K=" << K << " per_row=" << per_row
                << " at (" << i << ", " << j << "), z = " << z;
          }
        ++n;
      }
  EXPECT_EQ(n, 24);
}

// apply_epilogue (Gemm's non-builtin engines, MatMul's batched layouts) on values covering
// both erf branches and the tails.
TEST(EpilogueGelu, ApplyEpilogueMatchesFloat64) {
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.0137f) x.push_back(v);
  for (Act act : {Act::Gelu, Act::GeluTanh}) {
    Epilogue e;
    e.activation = act;
    std::vector<float> y = x;
    apply_epilogue(e, y.data(), static_cast<int64_t>(y.size()), 0, 0);
    for (size_t i = 0; i < x.size(); ++i) {
      const double ref = gelu64(act, x[i]);
      // 1e-33: exp arguments below -80 give 0 (erf_impl.h kExpFloor), so the far tails read 0.
      EXPECT_NEAR(y[i], ref, own_tol(act, x[i], ref) + 1e-33) << fused_activation_name(act) << " x = " << x[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, EpilogueGeluIsa, ::testing::ValuesIn(isas()), isa_name);

}  // namespace
}  // namespace gemm
}  // namespace onnxmini
