// Random ops: shapes and dtypes, distributions (sample mean / variance within
// 5 standard errors, derived from the sample size; Multinomial frequencies by
// a chi-square bound), seeds that repeat (across runs, sessions and thread
// counts), unseeded nodes that differ between runs, and error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

constexpr int64_t kSamples = 200000;

struct Moments {
  double mean = 0, var = 0;
};
Moments moments(const Tensor& t) {
  Moments m;
  for (int64_t i = 0; i < t.numel(); ++i) m.mean += t.get_as_double(i);
  m.mean /= t.numel();
  for (int64_t i = 0; i < t.numel(); ++i) m.var += std::pow(t.get_as_double(i) - m.mean, 2);
  m.var /= t.numel();
  return m;
}

// mean within 5 sigma / sqrt(n); variance within 5 sqrt((mu4 - sigma^4) / n) (the variance of
// the sample variance for large n).
void expect_moments(const Tensor& t, double mean, double var, double mu4) {
  const Moments m = moments(t);
  const double n = static_cast<double>(t.numel());
  EXPECT_NEAR(m.mean, mean, 5 * std::sqrt(var / n));
  EXPECT_NEAR(m.var, var, 5 * std::sqrt((mu4 - var * var) / n));
}

Tensor run_twice_same_session(const std::string& op, const std::vector<Tensor>& inputs, const NodeSetup& setup,
                              Tensor* second) {
  auto s = one_node_session(22, op, inputs, setup, options_for(KernelMode::Fast, 2));
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.emplace_back("I" + std::to_string(i), inputs[i]);
  Tensor first = run_single(*s, feeds).clone();
  *second = run_single(*s, feeds).clone();
  return first;
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_as_double(i));
  return v;
}

bool same_values(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (a.get_as_double(i) != b.get_as_double(i)) return false;
  return true;
}

TEST(RandomUniform, DistributionRangeAndDtype) {
  for (DType t : {DType::Float32, DType::Float64}) {
    const Tensor y = run_op(22, "RandomUniform", {}, [&](NodeBuilder& n) {
      n.attr("shape", std::vector<int64_t>{kSamples / 100, 100}).attr("low", -2.f).attr("high", 3.f)
          .attr("dtype", static_cast<int64_t>(t)).attr("seed", 4.f);
    });
    ASSERT_EQ(y.shape(), (Shape{kSamples / 100, 100}));
    ASSERT_EQ(y.dtype(), t);
    for (int64_t i = 0; i < y.numel(); ++i) {
      ASSERT_GE(y.get_as_double(i), -2.0);
      ASSERT_LT(y.get_as_double(i), 3.0);
    }
    const double w = 5;  // U(a, b): var = w^2 / 12, fourth central moment w^4 / 80
    expect_moments(y, 0.5, w * w / 12, std::pow(w, 4) / 80);
  }
}

TEST(RandomNormal, Distribution) {
  const Tensor y = run_op(22, "RandomNormal", {}, [](NodeBuilder& n) {
    n.attr("shape", std::vector<int64_t>{kSamples}).attr("mean", 1.5f).attr("scale", 2.f).attr("seed", 9.f);
  });
  ASSERT_EQ(y.dtype(), DType::Float32);
  expect_moments(y, 1.5, 4.0, 3 * 16.0);  // N(m, s^2): mu4 = 3 s^4
  // About 4.55% of a normal sample lies beyond 2 sigma: binomial bound.
  int64_t far = 0;
  for (int64_t i = 0; i < y.numel(); ++i) far += std::fabs(y.get_as_double(i) - 1.5) > 4.0;
  const double p = 0.0455003, n = static_cast<double>(y.numel());
  EXPECT_NEAR(far / n, p, 5 * std::sqrt(p * (1 - p) / n));
}

TEST(RandomOps, SeedRepeatsAndNoSeedDiffers) {
  auto seeded = [](NodeBuilder& n) { n.attr("shape", std::vector<int64_t>{1000}).attr("seed", 7.f); };
  Tensor again;
  const Tensor first = run_twice_same_session("RandomNormal", {}, seeded, &again);
  EXPECT_TRUE(same_values(first, again)) << "a seeded node repeats across runs";
  EXPECT_TRUE(same_values(first, run_op(22, "RandomNormal", {}, seeded, KernelMode::Fast, 1))) << "and sessions / threads";
  EXPECT_TRUE(same_values(first, run_op(22, "RandomNormal", {}, seeded, KernelMode::Reference, 4)));
  auto other_seed = [](NodeBuilder& n) { n.attr("shape", std::vector<int64_t>{1000}).attr("seed", 8.f); };
  EXPECT_FALSE(same_values(first, run_op(22, "RandomNormal", {}, other_seed)));
  auto unseeded = [](NodeBuilder& n) { n.attr("shape", std::vector<int64_t>{1000}); };
  const Tensor a = run_twice_same_session("RandomUniform", {}, unseeded, &again);
  EXPECT_FALSE(same_values(a, again)) << "no seed: a new stream per run";
}

TEST(RandomLike, ShapeAndDtypeFromInputOrAttribute) {
  const Tensor x = random_values(DType::Float64, {3, 4, 5}, 1);
  const Tensor u = run_op(22, "RandomUniformLike", {x});
  EXPECT_EQ(u.shape(), x.shape());
  EXPECT_EQ(u.dtype(), DType::Float64);
  const Tensor n = run_op(22, "RandomNormalLike", {random_values(DType::Int32, {2, 2}, 1)},
                          [](NodeBuilder& b) { b.attr("dtype", int64_t{10}); });
  EXPECT_EQ(n.dtype(), DType::Float16);
  EXPECT_EQ(n.shape(), (Shape{2, 2}));
  EXPECT_NE(op_error(22, "RandomUniformLike", {random_values(DType::Int32, {2}, 1)}).find("not a float type"), std::string::npos);
  const Tensor big = run_op(22, "RandomUniformLike", {Tensor(DType::Float32, {kSamples})}, [](NodeBuilder& b) { b.attr("seed", 2.f); });
  expect_moments(big, 0.5, 1.0 / 12, 1.0 / 80);
}

TEST(Bernoulli, FrequenciesAndDtypes) {
  std::vector<float> p(kSamples);
  for (int64_t i = 0; i < kSamples; ++i) p[i] = i % 2 ? 0.7f : 0.2f;
  const Tensor y = run_op(22, "Bernoulli", {Tensor::from_vector<float>({kSamples}, p)}, [](NodeBuilder& n) { n.attr("seed", 3.f); });
  ASSERT_EQ(y.dtype(), DType::Float32);
  double ones[2] = {0, 0};
  for (int64_t i = 0; i < kSamples; ++i) {
    const double v = y.get_as_double(i);
    ASSERT_TRUE(v == 0 || v == 1);
    ones[i % 2] += v;
  }
  const double n = kSamples / 2.0;
  EXPECT_NEAR(ones[0] / n, 0.2, 5 * std::sqrt(0.2 * 0.8 / n));
  EXPECT_NEAR(ones[1] / n, 0.7, 5 * std::sqrt(0.7 * 0.3 / n));
  const Tensor edge = run_op(22, "Bernoulli", {Tensor::from_vector<double>({4}, {0, 1, 0, 1})},
                             [](NodeBuilder& b) { b.attr("dtype", int64_t{9}); });
  ASSERT_EQ(edge.dtype(), DType::Bool);
  EXPECT_EQ(values_of(edge), (std::vector<double>{0, 1, 0, 1}));
  EXPECT_NE(op_error(22, "Bernoulli", {Tensor::from_vector<float>({2}, {0.5f, 1.5f})}).find("probability [1] = 1.5 is outside [0, 1]"),
            std::string::npos);
}

TEST(Multinomial, ChiSquareAndImpossibleClasses) {
  const std::vector<double> p = {0.1, 0.2, 0.3, 0.4, 0.0};
  std::vector<float> logits;
  for (double q : p) logits.push_back(static_cast<float>(std::log(q)));  // log(0) = -inf: never drawn
  const int64_t samples = 50000;
  const Tensor y = run_op(22, "Multinomial", {Tensor::from_vector<float>({2, 5}, [&] {
                            std::vector<float> two = logits;
                            for (float& v : two) v += 3.f;  // unnormalised: a constant shift changes nothing
                            two.insert(two.begin(), logits.begin(), logits.end());
                            return two;
                          }())},
                          [&](NodeBuilder& n) { n.attr("sample_size", samples).attr("seed", 5.f).attr("dtype", int64_t{7}); });
  ASSERT_EQ(y.shape(), (Shape{2, samples}));
  ASSERT_EQ(y.dtype(), DType::Int64);
  for (int64_t row = 0; row < 2; ++row) {
    std::vector<double> count(5, 0);
    for (int64_t s = 0; s < samples; ++s) count.at(static_cast<size_t>(y.get_as_double(row * samples + s))) += 1;
    EXPECT_EQ(count[4], 0) << "a -inf class is never drawn";
    double chi2 = 0;
    for (int c = 0; c < 4; ++c) chi2 += std::pow(count[c] - samples * p[c], 2) / (samples * p[c]);
    // 3 degrees of freedom: P(chi2 > 25) is about 1.6e-5.
    EXPECT_LT(chi2, 25.0) << "row " << row;
  }
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_NE(op_error(22, "Multinomial", {Tensor::from_vector<float>({1, 2}, {-inf, -inf})}).find("row 0 has no finite log-probability"),
            std::string::npos);
  EXPECT_NE(op_error(22, "Multinomial", {Tensor::from_vector<float>({3}, {0, 0, 0})}).find("want [batch_size, class_size]"),
            std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
