// Prepacked A (pack_a / sgemm_packed_a) and implicit B (sgemm_implicit, the
// convolution path) against the reference engine, on every ISA path, with
// edge sizes in M and in the run length, several K blocks, epilogues, and 1 vs
// 2 threads (bit-identical). Tolerance as in test_sgemm.cc:
//   |err| <= 2 (K + 3) u (|alpha| S + |beta c0| + |bias|) + 4u |ref| + 1e-6,  S = sum |a||b|.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/gemm_engine/sgemm_kernel.h"
#include "core/thread_pool.h"

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

std::vector<float> random_vec(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Reference C for op(A) (M x K, lda, trans) times a plain B (K x N) with the
// epilogue of `a`, and the per-element tolerance.
void reference(const SgemmArgs& a, const std::vector<float>& B, const std::vector<float>& C0, std::vector<float>& ref,
               std::vector<float>& tol) {
  SgemmArgs r = a;
  r.B = B.data(), r.ldb = a.N, r.trans_b = false;
  ref = C0;
  r.C = ref.data();
  reference_engine().sgemm(r, nullptr);
  tol.assign(ref.size(), 0.0f);
  for (int64_t i = 0; i < a.M; ++i)
    for (int64_t j = 0; j < a.N; ++j) {
      double S = 0;
      for (int64_t k = 0; k < a.K; ++k) {
        const float av = a.trans_a ? a.A[k * a.lda + i] : a.A[i * a.lda + k];
        S += std::fabs(av) * std::fabs(B[k * a.N + j]);
      }
      float mag = static_cast<float>(std::fabs(a.alpha) * S) + std::fabs(a.beta * C0[i * a.ldc + j]);
      if (a.epilogue.bias) mag += std::fabs(a.epilogue.bias[a.epilogue.bias_per_row ? i : j]);
      tol[i * a.ldc + j] = 2.0f * (a.K + 3) * kU * mag + 4 * kU * std::fabs(ref[i * a.ldc + j]) + 1e-6f;
    }
}

::testing::AssertionResult close(const std::vector<float>& got, const std::vector<float>& ref,
                                 const std::vector<float>& tol, const std::string& what) {
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - ref[i]) <= tol[i]))
      return ::testing::AssertionFailure() << what << ": element " << i << " = " << got[i] << ", expected " << ref[i]
                                           << " +- " << tol[i];
  return ::testing::AssertionSuccess();
}

class PrepackedIsa : public ::testing::TestWithParam<cpu::Isa> {
 protected:
  const GemmEngine& engine() const { return builtin_engine_for(GetParam()); }
};

TEST_P(PrepackedIsa, PackedAMatchesReference) {
  std::mt19937 rng(7);
  ThreadPool pool(2);
  const int64_t shapes[][3] = {{1, 1, 1},   {5, 33, 17},   {14, 32, 27},  {15, 31, 513}, {33, 100, 64},
                               {64, 300, 576}, {130, 70, 300}, {7, 4200, 27}, {200, 130, 1100}};
  const Epilogue::Activation acts[] = {Epilogue::Activation::None, Epilogue::Activation::Relu,
                                       Epilogue::Activation::PRelu, Epilogue::Activation::Sigmoid};
  int n = 0;
  for (const auto& s : shapes)
    for (bool ta : {false, true}) {
      const int64_t M = s[0], N = s[1], K = s[2];
      std::vector<float> A = random_vec(M * K, rng), B = random_vec(K * N, rng), C0 = random_vec(M * N, rng);
      std::vector<float> bias = random_vec(M, rng), slope(M, 0.2f);
      SgemmArgs a;
      a.trans_a = ta, a.M = M, a.N = N, a.K = K, a.alpha = n % 2 ? -0.5f : 1.0f, a.beta = n % 3 == 0 ? 1.0f : 0.0f;
      a.A = A.data(), a.lda = ta ? M : K, a.B = B.data(), a.ldb = N, a.ldc = N;
      a.epilogue.bias = n % 2 ? bias.data() : nullptr;
      a.epilogue.bias_per_row = true;
      a.epilogue.activation = acts[n % 4];
      a.epilogue.prelu_slope = slope.data();
      ++n;
      std::vector<float> ref, tol;
      reference(a, B, C0, ref, tol);
      auto packed = engine().pack_a(ta, M, K, A.data(), a.lda);
      ASSERT_EQ(packed->M(), M);
      ASSERT_EQ(packed->K(), K);
      std::vector<float> one = C0, two = C0;
      SgemmArgs g = a;
      g.A = nullptr;  // must come from `packed`
      g.C = one.data();
      engine().sgemm_packed_a(g, *packed, nullptr);
      g.C = two.data();
      engine().sgemm_packed_a(g, *packed, &pool);
      const std::string what = "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K);
      ASSERT_TRUE(close(one, ref, tol, what));
      ASSERT_EQ(0, std::memcmp(one.data(), two.data(), one.size() * sizeof(float))) << what;
    }
}

// B[k][r * len + w] = base[off[k] + r * stride + w] with random offsets; the
// engine must equal the reference on the materialised B.
TEST_P(PrepackedIsa, ImplicitBMatchesReference) {
  std::mt19937 rng(11);
  ThreadPool pool(2);
  struct S { int64_t M, K, rows, len; };
  // Row lengths with every kind of edge tile: none, 1..8 columns (half-width tiles) and
  // 9..15 (AVX2: masked in-place loads), some with K past one KC block.
  const S cases[] = {{1, 1, 1, 1},      {5, 7, 3, 16},   {14, 27, 2, 32},  {15, 9, 4, 33},  {33, 64, 3, 70},
                     {64, 576, 4, 112}, {8, 600, 2, 31}, {64, 27, 5, 112}, {3, 1030, 2, 65}, {7, 300, 3, 20},
                     {13, 520, 2, 40},  {6, 90, 2, 26}};
  int n = 0;
  for (const auto& c : cases)
    for (bool prepack : {true, false}) {
      const int64_t stride = c.len + 5, span = c.rows * stride + 40;
      std::vector<float> base = random_vec(span * 3, rng);
      std::uniform_int_distribution<int64_t> pick(0, span * 3 - ((c.rows - 1) * stride + c.len) - 1);
      std::vector<int64_t> off(c.K);
      for (auto& o : off) o = pick(rng);
      const int64_t N = c.rows * c.len;
      std::vector<float> B(c.K * N);
      for (int64_t k = 0; k < c.K; ++k)
        for (int64_t r = 0; r < c.rows; ++r)
          for (int64_t w = 0; w < c.len; ++w) B[k * N + r * c.len + w] = base[off[k] + r * stride + w];
      std::vector<float> A = random_vec(c.M * c.K, rng), C0 = random_vec(c.M * N, rng), bias = random_vec(c.M, rng);
      SgemmArgs a;
      a.M = c.M, a.N = N, a.K = c.K, a.beta = n % 2 ? 1.0f : 0.0f;
      a.A = A.data(), a.lda = c.K, a.ldc = N;
      a.epilogue.bias = bias.data();
      a.epilogue.bias_per_row = true;
      a.epilogue.activation = n % 3 == 0 ? Epilogue::Activation::Relu : Epilogue::Activation::None;
      ++n;
      std::vector<float> ref, tol;
      reference(a, B, C0, ref, tol);
      ImplicitB ib;
      ib.base = base.data(), ib.k_offset = off.data(), ib.rows = c.rows, ib.row_len = c.len, ib.row_stride = stride;
      auto packed = prepack ? engine().pack_a(false, c.M, c.K, A.data(), c.K) : nullptr;
      std::vector<float> one = C0, two = C0;
      SgemmArgs g = a;
      g.B = nullptr, g.N = 0;  // ignored
      g.C = one.data();
      engine().sgemm_implicit(g, packed.get(), ib, nullptr);
      g.C = two.data();
      engine().sgemm_implicit(g, packed.get(), ib, &pool);
      const std::string what = "M=" + std::to_string(c.M) + " K=" + std::to_string(c.K) + " rows=" +
                               std::to_string(c.rows) + " len=" + std::to_string(c.len);
      ASSERT_TRUE(close(one, ref, tol, what));
      ASSERT_EQ(0, std::memcmp(one.data(), two.data(), one.size() * sizeof(float))) << what;
    }
}

INSTANTIATE_TEST_SUITE_P(Isa, PrepackedIsa, ::testing::ValuesIn(isas()),
                         [](const ::testing::TestParamInfo<cpu::Isa>& i) { return std::string(cpu::isa_name(i.param)); });

// The default (non-builtin) implementations: reference engine paths.
TEST(PrepackedDefault, ReferenceEngineImplicitAndPackedA) {
  std::mt19937 rng(3);
  const int64_t M = 6, K = 10, rows = 2, len = 9, stride = 12;
  std::vector<float> base = random_vec(200, rng), A = random_vec(M * K, rng);
  std::vector<int64_t> off(K);
  for (int64_t k = 0; k < K; ++k) off[k] = (k * 37) % 170;
  const int64_t N = rows * len;
  std::vector<float> B(K * N), C0(M * N, 0.0f), ref, tol;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t w = 0; w < len; ++w) B[k * N + r * len + w] = base[off[k] + r * stride + w];
  SgemmArgs a;
  a.M = M, a.N = N, a.K = K, a.A = A.data(), a.lda = K, a.ldc = N;
  reference(a, B, C0, ref, tol);
  const GemmEngine& e = reference_engine();
  auto packed = e.pack_a(false, M, K, A.data(), K);
  ImplicitB ib;
  ib.base = base.data(), ib.k_offset = off.data(), ib.rows = rows, ib.row_len = len, ib.row_stride = stride;
  std::vector<float> got = C0;
  SgemmArgs g = a;
  g.C = got.data();
  e.sgemm_implicit(g, packed.get(), ib, nullptr);
  EXPECT_TRUE(close(got, ref, tol, "reference implicit"));
}

}  // namespace
}  // namespace gemm
}  // namespace onnxmini
