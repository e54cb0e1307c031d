// GlobalMaxPool / GlobalAveragePool (kernels/nn/global_pool.cc): global_pool_f32 with
// every SIMD table the machine has and with none (the portable loops, also the
// reference mode), 1 and 2 threads, against a float64 reference; plane sizes on both
// sides of the short-plane path (64 floats) and of the 256-float rows; NaN in max;
// and the op through a session (variant, ISA, float64 and the error for rank 2).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/nn/global_pool.h"
#include "tests/common/fusion_test_util.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace test {
namespace {

std::vector<const simd::F32Kernels*> tables_and_portable() {
  std::vector<const simd::F32Kernels*> v{nullptr};
  for (const auto* k : simd_tables()) v.push_back(k);
  return v;
}

const char* table_name(const simd::F32Kernels* k) { return k ? cpu::isa_name(k->isa) : "portable"; }

TEST(GlobalPool, MeanAndMaxMatchFloat64OnEveryTable) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.0f, 3.0f);  // a non-zero mean: cancellation is not the bound
  ThreadPool pool(2);
  for (int64_t n : {1, 5, 49, 64, 65, 255, 256, 257, 475, 1000, 6400})
    for (int64_t planes : {1, 3, 17, 40}) {
      std::vector<float> x(static_cast<size_t>(planes * n));
      for (auto& v : x) v = u(rng);
      for (const auto* k : tables_and_portable())
        for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
          std::vector<float> mean(planes), mx(planes);
          nn::global_pool_f32(x.data(), planes, n, false, k, tp, mean.data());
          nn::global_pool_f32(x.data(), planes, n, true, k, tp, mx.data());
          for (int64_t p = 0; p < planes; ++p) {
            double s = 0, a = 0;
            float m = x[p * n];
            for (int64_t i = 0; i < n; ++i) {
              s += x[p * n + i], a += std::fabs(x[p * n + i]);
              m = std::max(m, x[p * n + i]);
            }
            // Each float partial sum adds at most 16 terms (256-float rows in 16 lanes) and a
            // register transpose / halving adds 4 more levels: at most 21 roundings of 2^-24
            // relative to a partial sum of |x|, then the division (or 1/n and a product).
            const double bound = 21 * std::ldexp(a, -24) / n + 2 * std::ldexp(std::fabs(s / n), -24);
            EXPECT_NEAR(mean[p], s / n, bound) << table_name(k) << " n=" << n << " planes=" << planes << " p=" << p;
            EXPECT_EQ(mx[p], m) << table_name(k) << " n=" << n << " p=" << p;
          }
        }
    }
}

TEST(GlobalPool, MaxPropagatesNaNOnEveryTable) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t n : {7, 49, 300}) {
    std::vector<float> x(static_cast<size_t>(3 * n), 1.0f);
    x[n + n / 2] = nan;  // plane 1 only
    for (const auto* k : tables_and_portable()) {
      std::vector<float> y(3);
      nn::global_pool_f32(x.data(), 3, n, true, k, nullptr, y.data());
      EXPECT_EQ(y[0], 1.0f) << table_name(k);
      EXPECT_TRUE(std::isnan(y[1])) << table_name(k) << " n=" << n;
      EXPECT_EQ(y[2], 1.0f) << table_name(k);
    }
  }
}

ModelBuilder global_model(const std::string& op, DType dt, const Shape& shape) {
  ModelBuilder mb(13);
  mb.input("X", dt, shape);
  mb.node(op, {"X"}, {"Y"}).name("gp");
  mb.output("Y");
  return mb;
}

TEST(GlobalPool, SessionRunsTheActiveTableAndFloat64) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"})
    for (DType dt : {DType::Float32, DType::Float64}) {
      const ModelBuilder mb = global_model(op, dt, {2, 5, 6, 7});
      const Tensor x = random_tensor(dt, {2, 5, 6, 7}, 11);
      auto s = mb.session(options_for(KernelMode::Fast, 2));
      const Tensor y = s->run({{"X", x}})[0].tensor();
      ASSERT_EQ(y.shape(), (Shape{2, 5, 1, 1}));
      for (int64_t p = 0; p < 10; ++p) {
        double acc = std::string(op) == "GlobalMaxPool" ? -1e300 : 0.0;
        for (int64_t i = 0; i < 42; ++i) {
          const double v = dt == DType::Float32 ? x.data<float>()[p * 42 + i] : x.data<double>()[p * 42 + i];
          acc = std::string(op) == "GlobalMaxPool" ? std::max(acc, v) : acc + v / 42;
        }
        const double got = dt == DType::Float32 ? y.data<float>()[p] : y.data<double>()[p];
        // float32: 42 terms of |x| <= 1 in lanes of <= 3 terms + 4 combining levels + the scaling:
        // <= 9 roundings of 2^-24 (5.4e-7); float64: the same count at 2^-53.
        EXPECT_NEAR(got, acc, dt == DType::Float32 ? 1e-6 : 1e-14) << op << " " << dtype_name(dt) << " p=" << p;
      }
      const auto plan = s->explain();
      ASSERT_FALSE(plan.empty());
      EXPECT_EQ(plan[0].variant, "global_pool");
      if (dt == DType::Float32) {
        EXPECT_EQ(plan[0].isa, cpu::isa_name(simd::f32_kernels().isa));
      }
    }
}

TEST(GlobalPool, RankTwoInputFailsNamingTheNode) {
  const ModelBuilder mb = global_model("GlobalAveragePool", DType::Float32, {4, 5});
  auto s = mb.session(options_for(KernelMode::Fast, 1));
  try {
    s->run({{"X", random_tensor(DType::Float32, {4, 5}, 3)}});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gp"), std::string::npos) << what;
    EXPECT_NE(what.find("4x5"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
