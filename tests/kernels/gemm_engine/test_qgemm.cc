// The int8 GEMM engine on every path this machine has (tests/common/simd_isas.h), against
// qgemm_reference (int64 sums straight from the inputs): int32 outputs must match exactly,
// and the requantized / float outputs bit for bit (both go through the same output stage
// from the same int32, so any difference is a wrong sum).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gemm_engine/qgemm.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace gemm {
namespace {

struct Case {
  int64_t M, N, K;
  bool a_signed, b_signed, trans_a, per_column;
};

std::vector<uint8_t> random_bytes(std::mt19937& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>(rng());
  return v;
}

// Runs one case on `isa` (packed or not) and the reference, with output `kind`.
void check(QIsa isa, const Case& c, QgemmOutput::Kind kind, bool prepack, ThreadPool* pool, std::mt19937& rng,
           uint8_t fill_a = 0, uint8_t fill_b = 0, bool fill = false) {
  std::vector<uint8_t> A = random_bytes(rng, static_cast<size_t>(c.M * c.K)), B = random_bytes(rng, static_cast<size_t>(c.K * c.N));
  if (fill) {
    std::fill(A.begin(), A.end(), fill_a);
    std::fill(B.begin(), B.end(), fill_b);
  }
  std::vector<int32_t> zb(static_cast<size_t>(c.N));
  for (auto& z : zb) z = c.b_signed ? int32_t(int8_t(rng())) : int32_t(uint8_t(rng()));
  std::vector<float> scale(static_cast<size_t>(c.N)), bias(static_cast<size_t>(c.N));
  std::vector<int32_t> bias_i(static_cast<size_t>(c.N));
  for (int64_t n = 0; n < c.N; ++n) {
    scale[n] = std::uniform_real_distribution<float>(1e-5f, 3e-3f)(rng);
    bias[n] = std::uniform_real_distribution<float>(-2, 2)(rng);
    bias_i[n] = std::uniform_int_distribution<int32_t>(-5000, 5000)(rng);
  }
  QgemmArgs g;
  g.M = c.M, g.N = c.N, g.K = c.K;
  g.A = A.data(), g.a_signed = c.a_signed, g.trans_a = c.trans_a, g.lda = c.trans_a ? c.M : c.K;
  g.a_zero = fill ? 0 : (c.a_signed ? int32_t(int8_t(rng())) : int32_t(uint8_t(rng())));
  g.B = B.data(), g.b_signed = c.b_signed, g.ldb = c.N;
  g.b_zero = fill ? nullptr : zb.data(), g.b_zero_per_column = c.per_column;
  const size_t esize = kind == QgemmOutput::Int32 || kind == QgemmOutput::Float ? 4 : 1;
  std::vector<uint8_t> got(static_cast<size_t>(c.M * c.N) * esize, 0xcd), want(got.size(), 0x5a);
  g.out.kind = kind;
  g.out.ldy = c.N;
  g.out.scale = scale.data(), g.out.scale_per_column = c.per_column;
  g.out.bias = bias.data(), g.out.bias_i32 = bias_i.data();
  g.out.y_zero = kind == QgemmOutput::UInt8 ? 100 : -7;
  g.out.y = want.data();
  qgemm_reference(g);
  g.out.y = got.data();
  std::shared_ptr<QPackedB> pb;
  if (prepack) pb = qgemm_pack_b(isa, c.K, c.N, B.data(), c.b_signed, c.N);
  qgemm(isa, g, pb.get(), pool);
  ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size()))
      << qisa_name(isa) << " M=" << c.M << " N=" << c.N << " K=" << c.K << " a_signed=" << c.a_signed
      << " b_signed=" << c.b_signed << " trans_a=" << c.trans_a << " per_column=" << c.per_column << " kind=" << kind
      << " prepack=" << prepack;
}

TEST(Qgemm, OddShapesAllSignednessEveryIsa) {
  std::mt19937 rng(7);
  ThreadPool pool(2);
  const int64_t dims[] = {1, 3, 17, 65, 257};
  for (QIsa isa : test::qgemm_isas())
    for (int64_t M : dims)
      for (int64_t N : dims)
        for (int64_t K : {int64_t(1), int64_t(3), int64_t(17), int64_t(65), int64_t(257)}) {
          if (M * N * K > 257 * 65 * 257) continue;
          const int combo = static_cast<int>((M + N + K) % 4);
          Case c{M, N, K, (combo & 1) != 0, (combo & 2) != 0, (M + K) % 3 == 0, (N % 2) == 1};
          check(isa, c, QgemmOutput::Int32, (K % 2) == 1, &pool, rng);
        }
}

TEST(Qgemm, AllSignednessPairsAndOutputs) {
  std::mt19937 rng(11);
  ThreadPool pool(2);
  for (QIsa isa : test::qgemm_isas())
    for (int combo = 0; combo < 4; ++combo)
      for (auto kind : {QgemmOutput::Int32, QgemmOutput::Float, QgemmOutput::UInt8, QgemmOutput::Int8})
        for (bool per_column : {false, true}) {
          Case c{37, 70, 129, (combo & 1) != 0, (combo & 2) != 0, combo == 3, per_column};
          check(isa, c, kind, combo % 2 == 0, &pool, rng);
        }
}

// u8 = 255 against s8 = 127 / -128 everywhere: every vpmaddubsw pair of a naive kernel would
// saturate (255 * 127 * 2 = 64770, 255 * -128 * 2 = -65280); s8 x s8 with -128 too.
TEST(Qgemm, MaddubsSaturationCases) {
  std::mt19937 rng(3);
  for (QIsa isa : test::qgemm_isas())
    for (uint8_t bval : {uint8_t(127), uint8_t(0x80)})
      for (bool a_signed : {false, true}) {
        Case c{19, 45, 300, a_signed, true, false, false};
        check(isa, c, QgemmOutput::Int32, false, nullptr, rng, a_signed ? 0x80 : 255, bval, true);
        // And an alternating pattern with random zero points.
        check(isa, c, QgemmOutput::Int32, true, nullptr, rng);
      }
}

TEST(Qgemm, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(5);
  ThreadPool pool(4);
  for (QIsa isa : test::qgemm_isas()) {
    Case c{300, 600, 96, false, true, false, true};
    check(isa, c, QgemmOutput::UInt8, true, &pool, rng);
  }
}

}  // namespace
}  // namespace gemm
}  // namespace onnxmini
