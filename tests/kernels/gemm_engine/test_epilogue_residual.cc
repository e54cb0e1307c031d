// The residual epilogue (gemm::Epilogue::residual: a C-shaped Z added after the bias,
// before the activation; a Conv's fused Add) on every ISA path and every builtin route:
// packed, skinny (N <= NR, A in place), prepacked A and implicit B, plus apply_epilogue.
// Reference: the reference engine's C (bias, no activation) + Z, then Relu, in double.
// Tolerance: the GEMM bound of test_sgemm.cc on the product (2 (K + 3) u S, S = sum |a||b|
// + |bias|) plus 2u (|z| + |ref|) for the extra add and its rounding; Relu is 1-Lipschitz.
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

std::vector<cpu::Isa> isas() {
  std::vector<cpu::Isa> v{cpu::Isa::Portable};
  if (cpu::hw_has_avx2_fma()) v.push_back(cpu::Isa::Avx2);
  if (cpu::hw_has_avx512()) v.push_back(cpu::Isa::Avx512);
  return v;
}

std::string isa_name(const ::testing::TestParamInfo<cpu::Isa>& p) {
  return p.param == cpu::Isa::Portable ? "Portable" : p.param == cpu::Isa::Avx2 ? "Avx2" : "Avx512";
}

enum class Route { Plain, PackedA, Implicit };

class EpilogueResidualIsa : public ::testing::TestWithParam<cpu::Isa> {};

TEST_P(EpilogueResidualIsa, AddsZBeforeTheActivation) {
  const GemmEngine& engine = builtin_engine_for(GetParam());
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  auto random_vec = [&](int64_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };
  // Edge sizes: partial tiles in M and N (masked residual loads), skinny N, K past one block.
  const int64_t shapes[][3] = {{1, 1, 5}, {5, 7, 9}, {6, 16, 33}, {16, 31, 64}, {33, 70, 300}, {7, 129, 1030}};
  int checked = 0;
  for (const auto& s : shapes)
    for (Route route : {Route::Plain, Route::PackedA, Route::Implicit})
      for (bool relu : {false, true}) {
        const int64_t M = s[0], N = s[1], K = s[2];
        const int64_t ldc = N + 3, ldz = N + 5;  // Z's row stride differs from C's: indexing is checked
        std::vector<float> A = random_vec(M * K), B = random_vec(K * N), bias = random_vec(M);
        std::vector<float> Z = random_vec(M * ldz);
        for (auto& z : Z) z *= 4.0f;  // about the product's size, so Relu cuts both signs
        SgemmArgs a;
        a.M = M, a.N = N, a.K = K;
        a.A = A.data(), a.lda = K, a.B = B.data(), a.ldb = N, a.ldc = ldc;
        a.epilogue.bias = bias.data();
        a.epilogue.bias_per_row = true;  // as a Conv's
        std::vector<float> base(M * ldc);
        a.C = base.data();
        reference_engine().sgemm(a, nullptr);  // A B + bias

        a.epilogue.residual = Z.data(), a.epilogue.residual_ld = ldz;
        if (relu) a.epilogue.activation = Epilogue::Activation::Relu;
        std::vector<float> got(M * ldc, -7.0f);
        a.C = got.data();
        if (route == Route::Plain) {
          engine.sgemm(a, nullptr);
        } else if (route == Route::PackedA) {
          engine.sgemm_packed_a(a, *engine.pack_a(false, M, K, A.data(), K), nullptr);
        } else {  // B as one run per (k, row): rows = 1, row_len = N, k_offset = k * N
          std::vector<int64_t> koff(K);
          for (int64_t k = 0; k < K; ++k) koff[k] = k * N;
          ImplicitB ib;
          ib.base = B.data(), ib.k_offset = koff.data(), ib.rows = 1, ib.row_len = N, ib.row_stride = 0;
          engine.sgemm_implicit(a, nullptr, ib, nullptr);
        }
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double S = std::fabs(bias[i]);
            for (int64_t k = 0; k < K; ++k) S += std::fabs(A[i * K + k]) * std::fabs(B[k * N + j]);
            const double z = Z[i * ldz + j];
            double ref = static_cast<double>(base[i * ldc + j]) + z;
            if (relu) ref = std::max(0.0, ref);
            const double tol = 2.0 * (K + 3) * kU * S + 2 * kU * (std::fabs(z) + std::fabs(ref)) + 1e-6;
            ASSERT_NEAR(got[i * ldc + j], ref, tol) << "M=" << M << " N=" << N << " K=" << K << " route "
                                                    << static_cast<int>(route) << " relu=" << relu << " at (" << i
                                                    << ", " << j << ")";
          }
        ++checked;
      }
  EXPECT_EQ(checked, 36);
}

INSTANTIATE_TEST_SUITE_P(AllIsas, EpilogueResidualIsa, ::testing::ValuesIn(isas()), isa_name);

// apply_epilogue (Eigen / OpenBLAS / reference engines, the Conv post-passes): row and
// column offsets into Z, the add before Clip.
TEST(EpilogueResidual, ApplyEpilogueIndexesZLikeC) {
  std::vector<float> z(3 * 10);
  for (size_t i = 0; i < z.size(); ++i) z[i] = static_cast<float>(i) - 12.0f;
  Epilogue e;
  e.residual = z.data(), e.residual_ld = 10;
  e.activation = Epilogue::Activation::Clip;
  e.clip_min = -5.0f, e.clip_max = 6.0f;
  std::vector<float> c(4, 1.0f);
  apply_epilogue(e, c.data(), 4, 1, 3);  // row 1, columns 3..6: z = 1 .. 4
  for (int j = 0; j < 4; ++j) EXPECT_FLOAT_EQ(c[j], std::min(6.0f, std::max(-5.0f, 1.0f + z[13 + j])));
}

}  // namespace
}  // namespace gemm
}  // namespace onnxmini
