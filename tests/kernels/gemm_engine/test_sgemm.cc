// Builtin SGEMM engine against gemm::reference_engine(), on every ISA path
// this machine has (portable, AVX2, AVX-512 via builtin_engine_for).
//
// Tolerance. Each output is c = act(alpha * sum_k a_k b_k + beta * c0 + bias).
// A float FMA chain over K terms is within gamma_K * S of the exact sum, where
// S = sum_k |a_k||b_k| and gamma_K = K*u / (1 - K*u) ~ K*u, u = 2^-24 (Higham,
// "Accuracy and Stability", 3.1). Scaling by alpha, adding beta*c0 and the
// bias each add one rounding (u relative), and the reference itself rounds
// its double result to float (u/2 of |ref|). Relu/Clip/PRelu (slopes < 1) do
// not increase errors, Sigmoid has slope <= 1/4 but its vector exp is a
// polynomial good to a few ulp, so we allow 1e-6 absolute on top. Bound:
//   |err| <= 2 * (K + 3) * u * (|alpha| S + |beta c0| + |bias|) + 4u |ref| + 1e-6
// (factor 2 of slack). S is computed by the reference on |A|, |B|.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
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

using Act = Epilogue::Activation;
constexpr float kU = 5.9604645e-8f;  // 2^-24

std::vector<cpu::Isa> isas() {
  std::vector<cpu::Isa> v{cpu::Isa::Portable};
  if (cpu::hw_has_avx2_fma()) v.push_back(cpu::Isa::Avx2);
  if (cpu::hw_has_avx512()) v.push_back(cpu::Isa::Avx512);
  return v;
}

struct Case {
  int64_t M = 1, N = 1, K = 1;
  bool ta = false, tb = false;
  int64_t pad_a = 0, pad_b = 0, pad_c = 0;  // ld = cols + pad
  int64_t offset = 0;                       // pointer + offset (unaligned when odd)
  float alpha = 1, beta = 0;
  bool nan_c = false;  // fill C with NaN (only meaningful with beta == 0)
  Act act = Act::None;
  bool bias = false, per_row = false;
  bool bias2 = false;  // the second, per-column bias
};

std::string describe(const Case& c) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "M=%lld N=%lld K=%lld ta=%d tb=%d pads=%lld,%lld,%lld off=%lld alpha=%g beta=%g act=%d bias=%d row=%d bias2=%d",
                (long long)c.M, (long long)c.N, (long long)c.K, c.ta, c.tb, (long long)c.pad_a, (long long)c.pad_b,
                (long long)c.pad_c, (long long)c.offset, c.alpha, c.beta, (int)c.act, c.bias, c.per_row, c.bias2);
  return buf;
}

// Operands of one case, laid out as the case says; run() fills C and checks.
struct Problem {
  Case c;
  int64_t lda, ldb, ldc;
  std::vector<float> A, B, C0, bias, bias2, slope;
  std::vector<float> Aabs, Babs;

  Problem(const Case& cs, std::mt19937& rng) : c(cs) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    const int64_t ar = c.ta ? c.K : c.M, ac = c.ta ? c.M : c.K;
    const int64_t br = c.tb ? c.N : c.K, bc = c.tb ? c.K : c.N;
    lda = ac + c.pad_a;
    ldb = bc + c.pad_b;
    ldc = c.N + c.pad_c;
    A.resize(ar * lda + c.offset + 1);
    B.resize(br * ldb + c.offset + 1);
    C0.resize(c.M * ldc + c.offset + 1);
    for (auto& x : A) x = d(rng);
    for (auto& x : B) x = d(rng);
    for (auto& x : C0) x = c.nan_c ? std::numeric_limits<float>::quiet_NaN() : d(rng);
    const int64_t nb = c.per_row ? c.M : c.N;
    bias.resize(nb);
    slope.resize(nb);
    for (auto& x : bias) x = d(rng);
    bias2.resize(c.N);
    for (auto& x : bias2) x = d(rng);
    for (auto& x : slope) x = 0.25f * (d(rng) + 1.0f);
    Aabs = A;
    Babs = B;
    for (auto& x : Aabs) x = std::fabs(x);
    for (auto& x : Babs) x = std::fabs(x);
  }

  SgemmArgs args(float* C) const {
    SgemmArgs a;
    a.trans_a = c.ta;
    a.trans_b = c.tb;
    a.M = c.M;
    a.N = c.N;
    a.K = c.K;
    a.alpha = c.alpha;
    a.beta = c.beta;
    // Empty operands (M, N or K = 0) may have no storage: no offset on a null pointer.
    a.A = A.empty() ? nullptr : A.data() + c.offset;
    a.lda = lda;
    a.B = B.empty() ? nullptr : B.data() + c.offset;
    a.ldb = ldb;
    a.C = C ? C + c.offset : nullptr;
    a.ldc = ldc;
    a.epilogue.activation = c.act;
    a.epilogue.bias = c.bias ? bias.data() : nullptr;
    a.epilogue.bias_per_row = c.per_row;
    a.epilogue.bias2 = c.bias2 ? bias2.data() : nullptr;
    a.epilogue.prelu_slope = slope.data();
    a.epilogue.clip_min = -0.3f;
    a.epilogue.clip_max = 0.4f;
    return a;
  }

  // Expected C and per-element tolerance.
  void expected(std::vector<float>& ref, std::vector<float>& tol) const {
    ref = C0;
    reference_engine().sgemm(args(ref.data()), nullptr);
    std::vector<float> S(C0.size(), 0.0f);
    SgemmArgs sa = args(S.data());
    sa.A = Aabs.data() + c.offset;
    sa.B = Babs.data() + c.offset;
    sa.alpha = 1;
    sa.beta = 0;
    sa.epilogue = Epilogue();
    reference_engine().sgemm(sa, nullptr);
    tol.assign(C0.size(), 0.0f);
    for (int64_t i = 0; i < c.M; ++i)
      for (int64_t j = 0; j < c.N; ++j) {
        const int64_t at = c.offset + i * ldc + j;
        float mag = std::fabs(c.alpha) * S[at];
        if (c.beta != 0) mag += std::fabs(c.beta * C0[at]);
        if (c.bias) mag += std::fabs(bias[c.per_row ? i : j]);
        if (c.bias2) mag += std::fabs(bias2[j]);
        tol[at] = 2.0f * (c.K + 3) * kU * mag + 4 * kU * std::fabs(ref[at]) + 1e-6f;
      }
  }

  // Checks got against ref within tol; elements outside the M x N window must be untouched.
  ::testing::AssertionResult check(const std::vector<float>& got, const std::vector<float>& ref,
                                   const std::vector<float>& tol) const {
    for (size_t at = 0; at < got.size(); ++at) {
      const int64_t rel = static_cast<int64_t>(at) - c.offset;
      const bool inside = rel >= 0 && rel / ldc < c.M && rel % ldc < c.N;
      if (!inside) {
        if (std::memcmp(&got[at], &C0[at], sizeof(float)) != 0)
          return ::testing::AssertionFailure() << describe(c) << ": wrote outside C at " << at;
        continue;
      }
      if (!(std::fabs(got[at] - ref[at]) <= tol[at]))
        return ::testing::AssertionFailure() << describe(c) << ": C[" << rel / ldc << "," << rel % ldc
                                             << "] = " << got[at] << ", expected " << ref[at] << " +- " << tol[at];
    }
    return ::testing::AssertionSuccess();
  }

  ::testing::AssertionResult run(const GemmEngine& e, ThreadPool* pool) const {
    std::vector<float> ref, tol, got = C0;
    expected(ref, tol);
    e.sgemm(args(got.data()), pool);
    return check(got, ref, tol);
  }
};

Case random_case(std::mt19937& rng, int64_t M, int64_t N, int64_t K) {
  std::uniform_int_distribution<int> coin(0, 1), pad(0, 3), act(0, 4);
  const float alphas[] = {1.0f, -0.5f, 2.0f};
  const float betas[] = {0.0f, 1.0f, 0.5f};
  Case c;
  c.M = M;
  c.N = N;
  c.K = K;
  c.ta = coin(rng);
  c.tb = coin(rng);
  c.pad_a = pad(rng);
  c.pad_b = pad(rng);
  c.pad_c = pad(rng);
  c.offset = coin(rng);
  c.alpha = alphas[rng() % 3];
  c.beta = betas[rng() % 3];
  c.nan_c = c.beta == 0 && coin(rng);
  c.act = static_cast<Act>(act(rng));
  c.bias = coin(rng);
  c.per_row = coin(rng);
  c.bias2 = coin(rng);
  return c;
}

class SgemmIsa : public ::testing::TestWithParam<cpu::Isa> {
 protected:
  const GemmEngine& engine() const { return builtin_engine_for(GetParam()); }
  // Runs `p` with no pool into `one` and with `pool` into `two` (B packed per call or prepacked).
  void one_and_two_threads(const Case& c, const Problem& p, bool prepacked, ThreadPool& pool, std::vector<float>& one,
                           std::vector<float>& two) const {
    SgemmArgs a = p.args(nullptr);
    auto packed = engine().pack_b(c.tb, c.K, c.N, a.B, a.ldb);
    one = p.C0, two = p.C0;
    for (auto [out, tp] : {std::pair{&one, static_cast<ThreadPool*>(nullptr)}, std::pair{&two, &pool}}) {
      SgemmArgs g = p.args(out->data());
      if (prepacked) engine().sgemm_packed(g, *packed, tp);
      else engine().sgemm(g, tp);
    }
  }
  // A random M x N x K case with A not transposed, B packed per call and prepacked: against
  // the reference, and 1 vs 2 threads bit for bit.
  void check_a_not_transposed(std::mt19937& rng, ThreadPool& pool, int64_t M, int64_t N, int64_t K) const {
    for (bool prepacked : {false, true}) {
      Case c = random_case(rng, M, N, K);
      c.ta = false;
      Problem p(c, rng);
      std::vector<float> ref, tol;
      p.expected(ref, tol);
      std::vector<float> one, two;
      one_and_two_threads(c, p, prepacked, pool, one, two);
      ASSERT_TRUE(p.check(one, ref, tol)) << describe(c) << " prepacked " << prepacked;
      ASSERT_EQ(0, std::memcmp(one.data(), two.data(), one.size() * sizeof(float))) << describe(c);
    }
  }
};

// Every M, N in 1..33 crossed with K in 1..33 (K cycles with M, N so each K
// meets many shapes), random transposes / strides / offsets / alpha / beta / epilogue.
TEST_P(SgemmIsa, AllEdgeSizes) {
  std::mt19937 rng(1234);
  for (int64_t M = 1; M <= 33; ++M)
    for (int64_t N = 1; N <= 33; ++N)
      for (int64_t K : {(M * 7 + N) % 33 + 1, (M + N * 5) % 33 + 1}) {
        Problem p(random_case(rng, M, N, K), rng);
        ASSERT_TRUE(p.run(engine(), nullptr));
      }
}

TEST_P(SgemmIsa, EveryKForSomeTiles) {
  std::mt19937 rng(7);
  for (int64_t K = 1; K <= 33; ++K)
    for (int64_t M : {1, 5, 14, 15, 33})
      for (int64_t N : {1, 16, 31, 32, 33}) {
        Problem p(random_case(rng, M, N, K), rng);
        ASSERT_TRUE(p.run(engine(), nullptr));
      }
}

// Shapes that cross the cache blocks (KC = 256 / 512, MC, NC = 4096 / 2048), on both
// the shared-packed-A path (M*K <= 128K) and the per-task path.
TEST_P(SgemmIsa, CrossesCacheBlocks) {
  std::mt19937 rng(99);
  const int64_t shapes[][3] = {{350, 40, 300}, {37, 70, 600}, {700, 33, 257}, {3, 4100, 20}, {20, 2100, 513},
                               {400, 4200, 600}};
  for (const auto& s : shapes)
    for (int rep = 0; rep < 2; ++rep) {
      Problem p(random_case(rng, s[0], s[1], s[2]), rng);
      ASSERT_TRUE(p.run(engine(), nullptr));
    }
}

TEST_P(SgemmIsa, KZeroScalesC) {
  std::mt19937 rng(5);
  for (float beta : {0.0f, 1.0f, -2.0f}) {
    Case c = random_case(rng, 9, 17, 0);
    c.beta = beta;
    c.nan_c = beta == 0;
    Problem p(c, rng);
    ASSERT_TRUE(p.run(engine(), nullptr));
  }
}

TEST_P(SgemmIsa, BetaZeroIgnoresNaN) {
  std::mt19937 rng(11);
  for (int64_t n : {1, 13, 40, 100}) {
    Case c = random_case(rng, n, n + 3, n);
    c.beta = 0;
    c.nan_c = true;
    Problem p(c, rng);
    ASSERT_TRUE(p.run(engine(), nullptr));
  }
}

TEST_P(SgemmIsa, EveryEpilogue) {
  std::mt19937 rng(21);
  for (int a = 0; a <= 4; ++a)
    for (bool bias : {false, true})
      for (bool row : {false, true})
        for (bool bias2 : {false, true}) {
          Case c = random_case(rng, 29, 45, 70);
          c.act = static_cast<Act>(a);
          c.bias = bias;
          c.per_row = row;
          c.bias2 = bias2;
          Problem p(c, rng);
          ASSERT_TRUE(p.run(engine(), nullptr));
        }
}

// Sigmoid far into both tails (saturation must give 0 / 1, not NaN).
TEST_P(SgemmIsa, SigmoidTails) {
  std::vector<float> A = {1.0f}, B = {-200, -90, -20, -1, 0, 1, 20, 90, 200, 3, 4, 5, 6, 7, 8, 9, 10};
  const int64_t N = static_cast<int64_t>(B.size());
  std::vector<float> C(N), R(N);
  SgemmArgs a;
  a.M = 1;
  a.N = N;
  a.K = 1;
  a.A = A.data();
  a.lda = 1;
  a.B = B.data();
  a.ldb = N;
  a.ldc = N;
  a.epilogue.activation = Act::Sigmoid;
  a.C = C.data();
  engine().sgemm(a, nullptr);
  a.C = R.data();
  reference_engine().sgemm(a, nullptr);
  for (int64_t j = 0; j < N; ++j) EXPECT_NEAR(C[j], R[j], 1e-6f + 4 * kU * R[j]) << "x=" << B[j];
}

// The threaded split must not change the arithmetic: each C element is
// computed by the same kernel sequence, so 1 and 2 threads agree exactly.
TEST_P(SgemmIsa, TwoThreadsMatchOne) {
  std::mt19937 rng(31);
  ThreadPool pool(2);
  // M*K <= 128K floats takes the shared-packed-A path, larger ones the per-task path.
  const int64_t shapes[][3] = {{100, 300, 70}, {300, 64, 128}, {64, 3136, 64}, {1, 5000, 98}, {257, 259, 261},
                               {600, 300, 400}, {1000, 40, 300}};
  for (const auto& s : shapes) {
    Problem p(random_case(rng, s[0], s[1], s[2]), rng);
    ASSERT_TRUE(p.run(engine(), &pool));
    std::vector<float> one = p.C0, two = p.C0;
    engine().sgemm(p.args(one.data()), nullptr);
    engine().sgemm(p.args(two.data()), &pool);
    ASSERT_EQ(0, std::memcmp(one.data(), two.data(), one.size() * sizeof(float))) << describe(p.c);
  }
}

// Skinny GEMMs (N <= NR, A not transposed): the A-in-place kernel (AVX-512: N
// <= 32; AVX2: N <= 16, one ymm per row up to N = 8), with B packed per call or
// prepacked, large enough for the threaded split; K past the KC block (256 on
// AVX2) checks the beta = 1 accumulation. Against the reference, and 1 vs 2
// threads bit for bit.
TEST_P(SgemmIsa, SkinnyNThreadsAndPrepacked) {
  std::mt19937 rng(37);
  ThreadPool pool(2);
  const int64_t shapes[][3] = {{30000, 8, 20}, {5000, 17, 100}, {3000, 32, 300}, {700, 1, 600}, {29, 5, 3},
                               {2000, 9, 70},  {999, 16, 33},   {13, 3, 600},    {401, 15, 257}};
  for (const auto& s : shapes) check_a_not_transposed(rng, pool, s[0], s[1], s[2]);
}

// Tall GEMMs with 2-4 column panels read A in place, panel after panel per row tile
// (gemm_builtin.cc a_in_place): full and partial last panels, K past one KC block, every
// epilogue's column offset (random_case draws them), prepacked or not; 1 vs 2 threads bit for bit.
TEST_P(SgemmIsa, TallFewPanelsAInPlace) {
  std::mt19937 rng(53);
  ThreadPool pool(2);
  const int64_t shapes[][3] = {{2048, 64, 257}, {300, 40, 33}, {97, 128, 600}, {500, 100, 20}, {64, 17, 7}};
  for (const auto& s : shapes) check_a_not_transposed(rng, pool, s[0], s[1], s[2]);
}

// An RNN step: [M <= 4, 256] x [256, 1024]^T, 1 MB of B for 0.5 MFLOP. Below the FLOP rule, but
// B is large: the builtin engine splits N over the threads (each core streams its share of B);
// 1 vs 2 threads bit for bit, and the 2-thread call used the pool.
TEST_P(SgemmIsa, LargeBSmallMSplitsOverN) {
  std::mt19937 rng(43);
  ThreadPool pool(2);
  for (int64_t m : {1, 4})
    for (bool prepacked : {false, true}) {
      Case c = random_case(rng, m, 1024, 256);
      c.ta = false, c.tb = true;
      Problem p(c, rng);
      std::vector<float> ref, tol;
      p.expected(ref, tol);
      std::vector<float> one, two;
      pool.reset_stats();
      one_and_two_threads(c, p, prepacked, pool, one, two);
      ASSERT_TRUE(p.check(one, ref, tol)) << describe(c) << " prepacked " << prepacked;
      ASSERT_EQ(0, std::memcmp(one.data(), two.data(), one.size() * sizeof(float))) << describe(c);
      const ThreadPool::Stats st = pool.stats();
      EXPECT_GT(st.parallel_for_calls - st.inline_calls, 0) << describe(c) << ": the split did not use the pool";
    }
}

// One thread, the same large-B product call after call (an RNN's steps): every other call
// walks B's column blocks last to first (gemm_builtin.cc alternate_b_order). The order must
// not change a bit of C, and both orders match the reference; M = 1..3 with an odd K
// also cover the micro-kernels' split-K tail (odd k in a second accumulator set).
TEST_P(SgemmIsa, AlternatingBOrderSameBits) {
  std::mt19937 rng(47);
  for (int64_t m : {1, 2, 3})
    for (int64_t k : {256, 255})
      for (bool prepacked : {false, true}) {
        Case c = random_case(rng, m, 1024, k);
        c.ta = false, c.tb = true;
        Problem p(c, rng);
        std::vector<float> ref, tol;
        p.expected(ref, tol);
        SgemmArgs a = p.args(nullptr);
        auto packed = engine().pack_b(c.tb, c.K, c.N, a.B, a.ldb);
        std::vector<float> calls[3];
        for (auto& out : calls) {
          out = p.C0;
          SgemmArgs g = p.args(out.data());
          if (prepacked) engine().sgemm_packed(g, *packed, nullptr);
          else engine().sgemm(g, nullptr);
        }
        ASSERT_TRUE(p.check(calls[0], ref, tol)) << describe(c) << " prepacked " << prepacked;
        for (int i = 1; i < 3; ++i)
          ASSERT_EQ(0, std::memcmp(calls[0].data(), calls[i].data(), calls[0].size() * sizeof(float)))
              << describe(c) << " call " << i;
      }
}

// One row of A (a batch-1 RNN step, a classifier head): on AVX-512 groups of four full
// 32-column panels go through row_panels (the panels read side by side), the rest through
// kernel<1>. N crosses the group edges, K the KC block and the odd-k tail; random
// alpha / beta / epilogues; against the reference, and 1 vs 2 threads (whose N split
// regroups the panels) bit for bit.
TEST_P(SgemmIsa, OneRowAcrossPanelGroups) {
  if (GetParam() == cpu::Isa::Avx512) ASSERT_NE(sgemm_kernels_for(GetParam()).row_panels, nullptr);
  std::mt19937 rng(53);
  ThreadPool pool(2);
  for (int64_t N : {128, 129, 160, 250, 256, 300, 1000})
    for (int64_t K : {1, 2, 3, 255, 513}) check_a_not_transposed(rng, pool, 1, N, K);
}

TEST_P(SgemmIsa, PackedB) {
  std::mt19937 rng(41);
  ThreadPool pool(2);
  const int64_t shapes[][3] = {{1, 1, 1}, {5, 33, 17}, {64, 100, 576}, {130, 70, 300}, {7, 4200, 27}, {600, 100, 300}};
  for (const auto& s : shapes)
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      Case c = random_case(rng, s[0], s[1], s[2]);
      Problem p(c, rng);
      SgemmArgs a = p.args(nullptr);
      auto packed = engine().pack_b(c.tb, c.K, c.N, a.B, a.ldb);
      ASSERT_EQ(packed->K(), c.K);
      ASSERT_EQ(packed->N(), c.N);
      std::vector<float> ref, tol, got = p.C0;
      p.expected(ref, tol);
      SgemmArgs g = p.args(got.data());
      g.B = nullptr;  // must come from `packed`
      g.trans_b = !c.tb;
      g.ldb = 0;
      engine().sgemm_packed(g, *packed, tp);
      ASSERT_TRUE(p.check(got, ref, tol));
    }
}

// Batches of small matrices (parallel across the batch) and large ones, with
// broadcast operands (stride 0).
TEST_P(SgemmIsa, Batched) {
  std::mt19937 rng(51);
  ThreadPool pool(2);
  struct B { int64_t M, N, K, batch; bool bcast_a, bcast_b; };
  const B cases[] = {{8, 9, 10, 7, false, false}, {16, 16, 16, 5, true, false}, {33, 20, 12, 4, false, true},
                     {200, 210, 190, 3, false, false}};
  for (const auto& bc : cases)
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      Case c = random_case(rng, bc.M, bc.N, bc.K);
      c.pad_a = c.pad_b = c.pad_c = 0;
      c.offset = 0;
      c.nan_c = false;
      Problem p(c, rng);
      const int64_t sa = bc.bcast_a ? 0 : static_cast<int64_t>(p.A.size());
      const int64_t sb = bc.bcast_b ? 0 : static_cast<int64_t>(p.B.size());
      const int64_t sc = static_cast<int64_t>(p.C0.size());
      std::vector<float> A, Bm, C, R;
      for (int64_t b = 0; b < bc.batch; ++b) {
        Problem q(c, rng);
        A.insert(A.end(), q.A.begin(), q.A.end());
        Bm.insert(Bm.end(), q.B.begin(), q.B.end());
        C.insert(C.end(), q.C0.begin(), q.C0.end());
      }
      R = C;
      SgemmArgs a = p.args(C.data());
      a.A = A.data();
      a.B = Bm.data();
      engine().sgemm_batched(a, bc.batch, {sa, sb, sc}, tp);
      a.C = R.data();
      reference_engine().sgemm_batched(a, bc.batch, {sa, sb, sc}, nullptr);
      for (size_t i = 0; i < C.size(); ++i) {
        const float tol = 2.0f * (bc.K + 3) * kU * (bc.K * 2.0f + 2.0f) + 1e-6f;  // |alpha| <= 2; |a|,|b|,|c|,|bias| <= 1
        ASSERT_NEAR(C[i], R[i], tol) << "batch case M=" << bc.M << " at " << i;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Isa, SgemmIsa, ::testing::ValuesIn(isas()),
                         [](const ::testing::TestParamInfo<cpu::Isa>& i) { return std::string(cpu::isa_name(i.param)); });

TEST(CpuFeatures, NamesAndCap) {
  const std::string n = cpu::active_isa_name();
  EXPECT_TRUE(n == "avx512" || n == "avx2" || n == "portable") << n;
  EXPECT_LE(static_cast<int>(cpu::active_isa()), static_cast<int>(cpu::hw_isa()));
  if (const char* env = std::getenv("ONNXMINI_ISA")) {
    if (std::string(env) == "portable") EXPECT_EQ(cpu::active_isa(), cpu::Isa::Portable);
  }
  EXPECT_STREQ(builtin_engine_for(cpu::active_isa()).name(), "builtin");
  EXPECT_EQ(sgemm_kernels_for(cpu::active_isa()).isa, cpu::active_isa());
}

TEST(Dgemm, MatchesReference) {
  std::mt19937 rng(61);
  std::uniform_real_distribution<double> d(-1, 1);
  ThreadPool pool(2);
  const int64_t shapes[][3] = {{1, 1, 1}, {7, 9, 0}, {33, 65, 300}, {130, 600, 40}};
  for (const auto& s : shapes)
    for (int t = 0; t < 4; ++t) {
      DgemmArgs a;
      a.M = s[0];
      a.N = s[1];
      a.K = s[2];
      a.trans_a = t & 1;
      a.trans_b = t & 2;
      a.alpha = 1.5;
      a.beta = t == 3 ? 0.0 : 0.5;
      std::vector<double> A(a.M * a.K + 1), B(a.K * a.N + 1), C(a.M * a.N), R;
      for (auto& x : A) x = d(rng);
      for (auto& x : B) x = d(rng);
      for (auto& x : C) x = t == 3 ? std::nan("") : d(rng);
      R = C;
      a.A = A.data();
      a.lda = a.trans_a ? a.M : a.K;
      a.B = B.data();
      a.ldb = a.trans_b ? a.K : a.N;
      a.C = C.data();
      a.ldc = a.N;
      builtin_engine().dgemm(a, &pool);
      a.C = R.data();
      reference_engine().dgemm(a, nullptr);
      for (size_t i = 0; i < C.size(); ++i) ASSERT_NEAR(C[i], R[i], 1e-12 * (a.K + 3) * 4) << i;
    }
}

}  // namespace
}  // namespace gemm
}  // namespace onnxmini
