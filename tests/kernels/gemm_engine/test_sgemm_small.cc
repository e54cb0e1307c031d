// The small-matrix batched SGEMM (kernels/gemm_engine/small_gemm.h) on every ISA this
// machine has, against a double-precision reference: M, N, K over 1..100 (odd sizes, the
// vector-width edges 7/8/9, 15/16/17, 31/32/33), A^T / B^T, padded leading dimensions,
// batch strides with broadcasting (stride 0), alpha / beta, NaN in C with beta == 0.
// Then the builtin engine's sgemm_batched: the Small route exactly when small_sgemm_fits,
// and correct results on both sides of the rule (M, N up to 65, K up to 100).
//
// Tolerance. c = alpha * sum_k a_k b_k + beta * c0 in float: an FMA chain (or partial
// sums folded by a reduction tree) over K terms is within gamma_K * S of the exact sum,
// S = sum_k |a_k||b_k|, gamma_K ~ K u (u = 2^-24; Higham 3.1, any summation order);
// alpha and beta * c0 add one rounding each, the reference's float conversion u/2.
//   |err| <= 2 * (K + 3) * u * (|alpha| S + |beta c0|) + 2u |ref|   (factor 2 of slack)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/gemm_engine/sgemm_kernel.h"
#include "kernels/gemm_engine/small_gemm.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace gemm {
namespace {

constexpr double kU = 5.9604645e-8;  // 2^-24

const SmallSgemm& small_for(cpu::Isa isa) {
  switch (isa) {
    case cpu::Isa::Avx512: return small_sgemm_avx512();
    case cpu::Isa::Avx2: return small_sgemm_avx2();
    default: return small_sgemm_portable();
  }
}

struct Layout {
  int64_t M, N, K;
  bool ta = false, tb = false;
  int64_t pad = 0;          // added to every leading dimension
  int64_t batch = 2;
  bool bcast_a = false, bcast_b = false;  // batch stride 0
  float alpha = 1, beta = 0;
};

std::string describe(const Layout& l) {
  return "M=" + std::to_string(l.M) + " N=" + std::to_string(l.N) + " K=" + std::to_string(l.K) +
         " ta=" + std::to_string(l.ta) + " tb=" + std::to_string(l.tb) + " pad=" + std::to_string(l.pad) +
         " batch=" + std::to_string(l.batch) + " bcast=" + std::to_string(l.bcast_a) + std::to_string(l.bcast_b) +
         " alpha=" + std::to_string(l.alpha) + " beta=" + std::to_string(l.beta);
}

// Operands in the layout, C preset (NaN when beta == 0: it must be ignored), the
// reference and bound per element.
struct Problem {
  Layout l;
  SgemmArgs args;
  BatchStrides st;
  std::vector<float> A, B, C;
  std::vector<double> ref, bound;

  Problem(const Layout& lay, std::mt19937& rng) : l(lay) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    const int64_t ar = l.ta ? l.K : l.M, ac = l.ta ? l.M : l.K;
    const int64_t br = l.tb ? l.N : l.K, bc = l.tb ? l.K : l.N;
    args.trans_a = l.ta, args.trans_b = l.tb;
    args.M = l.M, args.N = l.N, args.K = l.K;
    args.lda = ac + l.pad, args.ldb = bc + l.pad, args.ldc = l.N + l.pad;
    args.alpha = l.alpha, args.beta = l.beta;
    st.a = l.bcast_a ? 0 : ar * args.lda + 3;  // +3: matrices not at multiples of the vector width
    st.b = l.bcast_b ? 0 : br * args.ldb + 5;
    st.c = l.M * args.ldc + 1;
    A.resize(static_cast<size_t>((l.bcast_a ? 1 : l.batch) * (ar * args.lda + 3)));
    B.resize(static_cast<size_t>((l.bcast_b ? 1 : l.batch) * (br * args.ldb + 5)));
    C.resize(static_cast<size_t>(l.batch * st.c));
    for (auto& x : A) x = d(rng);
    for (auto& x : B) x = d(rng);
    for (auto& x : C) x = l.beta == 0 ? std::numeric_limits<float>::quiet_NaN() : d(rng);
    args.A = A.data(), args.B = B.data(), args.C = C.data();
    reference();
  }

  // ref and bound from the current A, B and C.
  void reference() {
    ref.assign(C.size(), 0.0);
    bound.assign(C.size(), 0.0);
    for (int64_t b = 0; b < l.batch; ++b)
      for (int64_t i = 0; i < l.M; ++i)
        for (int64_t j = 0; j < l.N; ++j) {
          double acc = 0, s = 0;
          for (int64_t k = 0; k < l.K; ++k) {
            const double av = A[b * st.a + (l.ta ? k * args.lda + i : i * args.lda + k)];
            const double bv = B[b * st.b + (l.tb ? j * args.ldb + k : k * args.ldb + j)];
            acc += av * bv;
            s += std::fabs(av * bv);
          }
          const size_t at = static_cast<size_t>(b * st.c + i * args.ldc + j);
          const double c0 = l.beta == 0 ? 0.0 : l.beta * static_cast<double>(C[at]);
          ref[at] = l.alpha * acc + c0;
          bound[at] = 2.0 * (l.K + 3) * kU * (std::fabs(l.alpha) * s + std::fabs(c0)) + 2.0 * kU * std::fabs(ref[at]);
        }
  }

  // Every element of every C matrix within its bound; padding between rows untouched.
  void check(const std::string& who) const {
    int bad = 0;
    for (int64_t b = 0; b < l.batch; ++b)
      for (int64_t i = 0; i < l.M; ++i)
        for (int64_t j = 0; j < args.ldc && (i + 1 < l.M || j < l.N); ++j) {
          const size_t at = static_cast<size_t>(b * st.c + i * args.ldc + j);
          if (j >= l.N) {  // padding: NaN (beta == 0) or its old value must stay
            if (l.beta == 0 && !std::isnan(C[at]) && ++bad < 4)
              ADD_FAILURE() << who << " " << describe(l) << ": padding written at batch " << b << " row " << i
                            << " col " << j;
            continue;
          }
          if (!(std::fabs(C[at] - ref[at]) <= bound[at]) && ++bad < 4)
            ADD_FAILURE() << who << " " << describe(l) << ": C[" << b << "][" << i << "][" << j << "] = " << C[at]
                          << ", reference " << ref[at] << ", bound " << bound[at];
        }
  }
};

std::vector<Layout> grid() {
  std::vector<Layout> v;
  const int64_t ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 24, 31, 32, 40, 64};
  const int64_t ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 48, 63, 64};
  const int64_t ks[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 40, 64, 100};
  int variant = 0;
  for (int64_t m : ms)
    for (int64_t n : ns)
      for (int64_t k : ks)
        for (int t = 0; t < 3; ++t) {  // NN, A^T, B^T (A^T with B^T is not a small route)
          if (t == 2 && m > 32 && k > 64) continue;  // outside the rule: the packed engine's
          Layout l{m, n, k};
          l.ta = t == 1, l.tb = t == 2;
          // Cycle the other knobs so every shape meets a few of them.
          const int x = variant++;
          l.pad = x % 3 == 0 ? 0 : x % 3 == 1 ? 1 : 19;
          l.batch = 1 + x % 3;
          l.bcast_a = x % 5 == 1, l.bcast_b = x % 5 == 2;
          l.alpha = x % 4 == 3 ? -0.5f : 1.0f;
          l.beta = x % 4 == 2 ? 0.75f : x % 4 == 3 ? 1.0f : 0.0f;
          v.push_back(l);
        }
  return v;
}

TEST(SgemmSmall, EveryIsaMatchesDoubleReference) {
  std::mt19937 rng(14);
  const std::vector<Layout> layouts = grid();
  for (cpu::Isa isa : test::isa_levels()) {
    const SmallSgemmFn fn = small_for(isa).run;
    for (const Layout& l : layouts) {
      Problem p(l, rng);
      ASSERT_TRUE(small_sgemm_fits(p.args)) << describe(l);
      fn(p.args, l.batch, p.st);
      p.check(cpu::isa_name(isa));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Large products of small values next to tiny ones: the dot kernel's reduction and the
// broadcast kernel's FMA chain must not lose the small terms beyond the bound (K = 512,
// the rule's limit, with one row of huge values).
TEST(SgemmSmall, LongKWithMixedMagnitudes) {
  std::mt19937 rng(3);
  for (cpu::Isa isa : test::isa_levels())
    for (int t = 0; t < 3; ++t) {
      Layout l{5, 6, 512};
      l.ta = t == 1, l.tb = t == 2;
      Problem p(l, rng);
      for (int64_t k = 0; k < l.K; k += 7) p.A[l.ta ? k * p.args.lda : k] *= 1e4f;  // row 0 of op(A), every 7th k
      p.reference();
      small_for(isa).run(p.args, l.batch, p.st);
      p.check(cpu::isa_name(isa));
    }
}

// The engine: route Small exactly when the rule says so, right answers on both sides,
// with and without a thread pool (tasks of whole matrices).
TEST(SgemmSmall, BuiltinBatchedRouteAndResults) {
  std::mt19937 rng(7);
  ThreadPool pool(2);
  const int64_t sizes[] = {1, 6, 17, 32, 33, 40, 65};
  for (cpu::Isa isa : test::isa_levels()) {
    const GemmEngine& e = builtin_engine_for(isa);
    for (int64_t m : sizes)
      for (int64_t n : sizes)
        for (int64_t k : {int64_t(1), int64_t(9), int64_t(40), int64_t(100)})
          for (int t = 0; t < 4; ++t) {
            Layout l{m, n, k};
            l.ta = t & 1, l.tb = t & 2;
            l.batch = 5;
            l.bcast_b = (m + n) % 2 == 0;
            Problem p(l, rng);
            const bool fits = small_sgemm_fits(p.args);
            EXPECT_EQ(fits, !(l.ta && l.tb) && n <= 64 && (m <= 32 || (m <= 64 && (!l.tb || k <= 64)))) << describe(l);
            const SgemmPath path = e.sgemm_batched_path(p.args);
            EXPECT_EQ(path.route == SgemmRoute::Small, fits) << describe(l);
            EXPECT_STREQ(path.isa, cpu::isa_name(isa));
            e.sgemm_batched(p.args, l.batch, p.st, (m + k) % 2 ? &pool : nullptr);
            p.check(std::string("engine ") + cpu::isa_name(isa));
          }
  }
}

TEST(SgemmSmall, RuleAndVariantNames) {
  SgemmArgs a;
  a.M = 8, a.N = 8, a.K = 64, a.trans_b = true;
  EXPECT_TRUE(small_sgemm_fits(a));
  a.epilogue.activation = Epilogue::Activation::Relu;  // epilogues stay on the packed engine
  EXPECT_FALSE(small_sgemm_fits(a));
  a.epilogue.activation = Epilogue::Activation::None;
  a.K = 513;
  EXPECT_FALSE(small_sgemm_fits(a));
  a.K = 64, a.N = 65;
  EXPECT_FALSE(small_sgemm_fits(a));
  a.N = 8, a.trans_a = true;
  EXPECT_FALSE(small_sgemm_fits(a));
  EXPECT_STREQ(sgemm_variant(GemmCaller::MatMulBatched, SgemmRoute::Small), "matmul_batched+gemm_small/builtin");
  a.trans_a = false;
  // 8 x 8 x 64 B^T (portable: 2 x 8 x 64): dot products (AVX2 has no dot kernel: B is
  // transposed); 32 x 32 x 64 B^T: B transposed once.
  for (cpu::Isa isa : test::isa_levels()) {
    a.M = isa == cpu::Isa::Portable ? 2 : 8;
    SgemmPath p = builtin_engine_for(isa).sgemm_batched_path(a);
    EXPECT_EQ(p.route, SgemmRoute::Small);
    const bool dot = isa != cpu::Isa::Avx2;
    EXPECT_EQ(p.small_dot, dot) << cpu::isa_name(isa);
    EXPECT_EQ(sgemm_blocking(p).find("dot products along K") != std::string::npos, dot) << sgemm_blocking(p);
    SgemmArgs big = a;
    big.M = big.N = 32;
    p = builtin_engine_for(isa).sgemm_batched_path(big);
    EXPECT_FALSE(p.small_dot) << cpu::isa_name(isa);
    EXPECT_NE(sgemm_blocking(p).find("broadcast"), std::string::npos) << sgemm_blocking(p);
  }
  // The reference engine has no small route.
  EXPECT_EQ(reference_engine().sgemm_batched_path(a).route, SgemmRoute::Reference);
}

}  // namespace
}  // namespace gemm
}  // namespace onnxmini
