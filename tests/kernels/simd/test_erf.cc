// erf and Gelu of kernels/simd/erf_impl.h (every SIMD table this machine runs) and their
// scalar twins (erf_scalar.h) against float64 references, over a dense sweep of float
// bit patterns (every 1021st pattern from 0 to +inf, both signs: tails, subnormals included)
// and the special values.
//
// Bounds (u = 2^-24, derived in erf_impl.h's terms):
//   erf, |z| < 1: z S(z^2), fit error 1.4e-9 (0.03 u) + 6 fma roundings of a Horner sum whose
//     terms shrink by >= 3x + the final product: <= 4 ulp.
//   erf, |z| >= 1: 1 - erfc(a), erfc <= 0.16 with relative error (a^2 + 8) u (the rounding
//     of -a^2 + P in exp's argument, rcp, exp's ~2 ulp, P's fit 0.4 u): at most
//     0.16 * 12 u ~ 2 u of erf ~ 0.84 plus the final rounding: <= 4 ulp.
//   Gelu(x), z = x / sqrt 2 >= -1: 0.5 x (1 + erf(z)) with 1 + erf(z) >= 0.16: erf's 4 ulp
//     (of a value <= 1) is <= 4 * 2u / 0.16 = 50u relative at the very worst near z = -1,
//     but there |erf| ~ 0.84 and the branch is z S(z^2) with ~2 ulp: 24 u covers it (measured
//     below), including the slope on the rounding of z and the two final products.
//   Gelu, z < -1: 0.5 x erfc(a): the exp argument p - a^2 carries up to two roundings of
//     size a^2 u (one with the fma of the SIMD rows), and the rounding of z moves
//     log erfc(a) by 2a * a u (d log erfc / da ~ -2a): (4 a^2 + 24) u relative.
//   Gelu tanh = x sigmoid(2u'), 2u' = w: the rounding of w (relative 4 u) moves
//     log sigmoid(w) by |w| 4 u for w < 0: (4 |w| + 24) u relative.
//   Exp arguments below -80 give 0 (erf_impl.h's kExpFloor, no subnormals): results below
//   1e-33 in magnitude are compared absolutely with that slack.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernels/simd/erf_scalar.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace simd {
namespace {

constexpr double kU = 5.9604644775390625e-8;  // 2^-24
constexpr double kTiny = 1e-33;

// Every 1021st float bit pattern in [0, +inf], negated too, and the edges around |z| = 1.
std::vector<float> sweep() {
  std::vector<float> v;
  for (uint32_t bits = 0; bits < 0x7f800000u; bits += 1021) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    v.push_back(f);
    v.push_back(-f);
  }
  for (float x : {1.0f, 0.99999994f, 1.0000001f, 1.4142135f, 1.4142137f, 12.0f, 17.0f, 3e38f})
    v.push_back(x), v.push_back(-x);
  return v;
}

using Fn = std::function<void(const float*, float*, int64_t)>;

struct Impl {
  std::string name;
  Fn erf, gelu, gelu_tanh;
};

std::vector<Impl> impls() {
  std::vector<Impl> v;
  auto scalar = [](float (*f)(float)) {
    return [f](const float* x, float* y, int64_t n) {
      for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
    };
  };
  v.push_back({"scalar", scalar(erf_scalar), scalar(gelu_erf_scalar), scalar(gelu_tanh_scalar)});
  for (const F32Kernels* k : test::simd_tables())
    v.push_back({k->isa == cpu::Isa::Avx512 ? "avx512" : "avx2", k->erf, k->gelu_erf, k->gelu_tanh});
  return v;
}

double ulp_of(double ref) {
  const double a = std::fabs(ref);
  if (a < 1.1754943508222875e-38) return 1.401298464324817e-45;
  int e;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

double gelu_ref(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double gelu_tanh_w(double x) { return 2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x); }
double gelu_tanh_ref(double x) {
  const double w = gelu_tanh_w(x);
  return w >= 0 ? x / (1.0 + std::exp(-w)) : x * std::exp(w) / (1.0 + std::exp(w));
}

TEST(SimdErf, ErfWithin4UlpOfStdErf) {
  const std::vector<float> x = sweep();
  std::vector<float> y(x.size());
  for (const Impl& impl : impls()) {
    impl.erf(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0, worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double ref = std::erf(static_cast<double>(x[i]));
      const double ulps = std::fabs(y[i] - ref) / ulp_of(ref);
      if (ulps > worst) worst = ulps, worst_x = x[i];
    }
    RecordProperty(impl.name + "_erf_max_ulp", std::to_string(worst));
    EXPECT_LE(worst, 4.0) << impl.name << " at x = " << worst_x;
  }
}

TEST(SimdErf, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {0.0f, -0.0f, inf, -inf, nan, 1e-40f, -1e-40f};
  for (const Impl& impl : impls()) {
    std::vector<float> e(x.size()), g(x.size()), t(x.size());
    impl.erf(x.data(), e.data(), static_cast<int64_t>(x.size()));
    impl.gelu(x.data(), g.data(), static_cast<int64_t>(x.size()));
    impl.gelu_tanh(x.data(), t.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(e[0], 0.0f) << impl.name;
    EXPECT_TRUE(std::signbit(e[1])) << impl.name << ": erf(-0) = -0";
    EXPECT_EQ(e[2], 1.0f) << impl.name;
    EXPECT_EQ(e[3], -1.0f) << impl.name;
    EXPECT_TRUE(std::isnan(e[4]) && std::isnan(g[4]) && std::isnan(t[4])) << impl.name;
    EXPECT_NEAR(e[5], 1.1283791670955126 * 1e-40, 2e-45) << impl.name;  // subnormal: 2 / sqrt(pi) x
    EXPECT_EQ(g[2], inf) << impl.name;
    EXPECT_EQ(t[2], inf) << impl.name;
    EXPECT_EQ(g[0], 0.0f) << impl.name;
    // Gelu(-inf): 0.5 x (1 + erf) is -inf * 0 = NaN, as the ONNX formula and the reference kernel.
    EXPECT_TRUE(std::isnan(g[3])) << impl.name;
  }
}

TEST(SimdErf, GeluWithinRelativeBound) {
  const std::vector<float> x = sweep();
  std::vector<float> y(x.size());
  for (const Impl& impl : impls()) {
    impl.gelu(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0, worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double xd = x[i], ref = gelu_ref(xd), a = std::fabs(xd) / std::sqrt(2.0);
      const double rel = xd < -std::sqrt(2.0) ? (4 * a * a + 24) * kU : 24 * kU;
      const double err = std::fabs(y[i] - ref), tol = rel * std::fabs(ref) + kTiny;
      if (err / tol > worst) worst = err / tol, worst_x = xd;
    }
    RecordProperty(impl.name + "_gelu_worst_fraction_of_bound", std::to_string(worst));
    EXPECT_LE(worst, 1.0) << impl.name << " at x = " << worst_x;
  }
}

TEST(SimdErf, GeluTanhWithinRelativeBound) {
  const std::vector<float> x = sweep();
  std::vector<float> y(x.size());
  for (const Impl& impl : impls()) {
    impl.gelu_tanh(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0, worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double xd = x[i];
      if (std::fabs(xd) > 1e12) continue;  // x^3 overflows float: tested as the +-inf limits above
      const double ref = gelu_tanh_ref(xd), w = gelu_tanh_w(xd);
      const double rel = (w < 0 ? 4 * std::fabs(w) : 0.0) * kU + 24 * kU;
      const double err = std::fabs(y[i] - ref), tol = rel * std::fabs(ref) + kTiny;
      if (err / tol > worst) worst = err / tol, worst_x = xd;
    }
    RecordProperty(impl.name + "_gelu_tanh_worst_fraction_of_bound", std::to_string(worst));
    EXPECT_LE(worst, 1.0) << impl.name << " at x = " << worst_x;
  }
}

// Lengths around the vector width: the masked tails read and write only n floats.
TEST(SimdErf, TailsTouchOnlyN) {
  for (const F32Kernels* k : test::simd_tables())
    for (int64_t n = 0; n <= 33; ++n) {
      std::vector<float> x(n + 1, 0.5f), y(n + 1, 7.0f);
      k->gelu_erf(x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y[i], gelu_ref(0.5), 1e-6) << n;
      EXPECT_EQ(y[n], 7.0f) << "n = " << n;
    }
}

// The bias rows (BiasGelu / FastGelu) are the plain rows applied to the float sum x + bias:
// the same bits as gelu(x + b) computed first, for scalar and vector biases, any starting
// column, row segments shorter and longer than a register; nothing past n is written.
TEST(SimdErf, BiasRowsEqualRowsOfTheSum) {
  for (const F32Kernels* k : test::simd_tables())
    for (int64_t bias_len : {1, 3, 16, 37, 768})
      for (int64_t col0 : {int64_t{0}, int64_t{1}, bias_len - 1})
        for (int64_t n : {0, 1, 15, 17, 100, 2000}) {
          std::vector<float> x(n), bias(bias_len), sum(n), want(n + 1, 7.0f), got(n + 1, 7.0f);
          for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 37 % 101) - 50) * 0.13f;
          for (int64_t j = 0; j < bias_len; ++j) bias[j] = static_cast<float>(j % 11) * 0.29f - 1.4f;
          for (int64_t i = 0; i < n; ++i) sum[i] = x[i] + bias[(col0 + i) % bias_len];
          for (bool tanh_form : {false, true}) {
            (tanh_form ? k->gelu_tanh : k->gelu_erf)(sum.data(), want.data(), n);
            (tanh_form ? k->gelu_tanh_bias : k->gelu_erf_bias)(x.data(), bias.data(), bias_len, col0, got.data(), n);
            for (int64_t i = 0; i <= n; ++i)
              ASSERT_EQ(got[i], want[i]) << test::isa_of(*k) << (tanh_form ? " tanh" : " erf") << " bias_len " << bias_len
                                         << " col0 " << col0 << " n " << n << " i " << i;
          }
        }
}

}  // namespace
}  // namespace simd
}  // namespace onnxmini
