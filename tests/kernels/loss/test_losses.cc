// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against a reference
// written out here in float64 (every reduction, with and without weights and
// ignore_index, 2-D and N-D inputs, float32 / float64 / float16), and the error
// cases (targets out of range, INT64_MIN, shape and weight mismatches).
#include <cmath>
#include <optional>

#include "core/shape_util.h"
#include "tests/common/node_runner.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct LossCase {
  Shape shape;  // [N, C, d1..dk]
  std::string reduction;
  bool weighted;
  std::optional<int64_t> ignore_index;
};

// Targets in [0, C), with every 5th one set to ignore_index when there is one.
Tensor make_targets(const Shape& unreduced, int64_t c, std::optional<int64_t> ignore, uint32_t seed) {
  Tensor t(DType::Int64, unreduced);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.mutable_data<int64_t>()[i] = (ignore && i % 5 == 2) ? *ignore : std::uniform_int_distribution<int64_t>(0, c - 1)(rng);
  return t;
}

// The reference: log_softmax over axis 1 (SCE only), then NLL, all in float64.
// Returns the unreduced loss (reduction none) or a one-element vector.
std::vector<double> reference_loss(const std::vector<double>& x, const Shape& shape, const std::vector<int64_t>& target,
                                   const std::vector<double>* weight, const LossCase& lc, bool softmax,
                                   std::vector<double>* log_prob = nullptr) {
  const int64_t n = shape[0], c = shape[1], d = shape_product(shape, 2, shape.size());
  std::vector<double> lp = x;
  if (softmax)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < d; ++k) {
        double mx = -INFINITY, s = 0;
        for (int64_t j = 0; j < c; ++j) mx = std::max(mx, x[(i * c + j) * d + k]);
        for (int64_t j = 0; j < c; ++j) s += std::exp(x[(i * c + j) * d + k] - mx);
        for (int64_t j = 0; j < c; ++j) lp[(i * c + j) * d + k] = x[(i * c + j) * d + k] - mx - std::log(s);
      }
  if (log_prob) *log_prob = lp;
  std::vector<double> loss(static_cast<size_t>(n * d));
  double total = 0, wsum = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < d; ++k) {
      const int64_t t = target[i * d + k];
      if (lc.ignore_index && t == *lc.ignore_index) continue;
      const double w = weight ? (*weight)[t] : 1.0;
      loss[i * d + k] = -lp[(i * c + t) * d + k] * w;
      total += loss[i * d + k];
      wsum += w;
    }
  if (lc.reduction == "none") return loss;
  return {lc.reduction == "sum" ? total : total / wsum};
}

void check_case(const std::string& op, int opset, DType dtype, const LossCase& lc, uint32_t seed) {
  SCOPED_TRACE(op + " " + dtype_name(dtype) + " " + shape_to_string(lc.shape) + " " + lc.reduction);
  const bool softmax = op == "SoftmaxCrossEntropyLoss";
  Tensor x = random_values(dtype, lc.shape, seed, softmax ? -3.0 : -4.0, softmax ? 3.0 : 0.0);
  Shape unreduced = {lc.shape[0]};
  unreduced.insert(unreduced.end(), lc.shape.begin() + 2, lc.shape.end());
  Tensor target = make_targets(unreduced, lc.shape[1], lc.ignore_index, seed + 1);
  Tensor weight = lc.weighted ? random_values(dtype, {lc.shape[1]}, seed + 2, 0.2, 2.0) : Tensor();
  auto attrs = [&](NodeBuilder& nb) {
    nb.attr("reduction", lc.reduction);
    if (lc.ignore_index) nb.attr("ignore_index", *lc.ignore_index);
  };
  const size_t outs = softmax ? 2 : 1;
  auto got = run_node(op, opset, {x, target, weight}, attrs, outs, KernelMode::Fast);
  std::vector<double> w = lc.weighted ? values_of(weight) : std::vector<double>();
  std::vector<double> log_prob;
  auto want = reference_loss(values_of(x), lc.shape, target.to_int64_vector(), lc.weighted ? &w : nullptr, lc,
                             softmax, &log_prob);
  // float32 sums of up to a few hundred terms; float16 rounds each output to 11 bits.
  const double rtol = dtype == DType::Float64 ? 1e-12 : dtype == DType::Float32 ? 1e-5 : 2e-3;
  EXPECT_EQ(got[0].shape(), lc.reduction == "none" ? unreduced : Shape{});
  const std::vector<double> g = values_of(got[0]);
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], rtol * (1 + std::fabs(want[i]))) << "element " << i;
  if (softmax) {
    const std::vector<double> lp = values_of(got[1]);
    ASSERT_EQ(got[1].shape(), lc.shape);
    for (size_t i = 0; i < lp.size(); ++i) EXPECT_NEAR(lp[i], log_prob[i], rtol * (1 + std::fabs(log_prob[i])));
  }
}

TEST(Losses, MatchReferenceEveryReduction) {
  const std::vector<LossCase> cases = {
      {{6, 5}, "none", false, std::nullopt},     {{6, 5}, "sum", true, std::nullopt},
      {{6, 5}, "mean", true, std::nullopt},      {{4, 7, 3}, "mean", false, 2},
      {{4, 7, 3, 2}, "none", true, -3},          {{3, 4, 5, 2, 2}, "mean", true, 1},
      {{8, 3, 2}, "sum", false, -100},
  };
  uint32_t seed = 10;
  for (const std::string op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"})
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16})
      for (const LossCase& lc : cases) check_case(op, 13, dt, lc, seed++);
  check_case("NegativeLogLikelihoodLoss", 22, DType::BFloat16, {{4, 3}, "mean", true, std::nullopt}, 99);
}

// The float32 2-D fast path (SIMD max / exp / sum per row, rows on 4 threads) against
// the reference loops: fast_expf is within a few ulp, so log_prob agrees to ~1e-6
// absolute for |log_prob| up to ~10 and the mean loss to the same relative order.
TEST(Losses, SoftmaxFastPathMatchesReference) {
  for (int64_t c : {3, 17, 1000}) {
    Tensor x = random_values(DType::Float32, {37, c}, static_cast<uint32_t>(c), -5, 5);
    Tensor t = make_targets({37}, c, std::nullopt, 3);
    EXPECT_TRUE(fast_matches_reference("SoftmaxCrossEntropyLoss", 13, {x, t}, nullptr, 2, 2e-5, 2e-6)) << "C = " << c;
  }
}

TEST(Losses, TargetOutOfRangeNamesNodeAndValue) {
  Tensor x = random_values(DType::Float32, {2, 3}, 1);
  for (int64_t bad : {int64_t{3}, int64_t{-1}, INT64_MIN}) {
    auto msg = node_error("NegativeLogLikelihoodLoss", 13, {x, i64({0, bad})}, nullptr);
    EXPECT_NE(msg.find("NegativeLogLikelihoodLoss 'n1': target " + std::to_string(bad) +
                       " at position 1 is out of range [0, 3)"),
              std::string::npos)
        << msg;
  }
  auto msg = node_error("SoftmaxCrossEntropyLoss", 13, {x, i64({0, 7})}, [](NodeBuilder& n) { n.attr("ignore_index", 7); });
  EXPECT_EQ(msg, "") << "an ignored target may be anything";
}

TEST(Losses, ShapeAndWeightMismatches) {
  Tensor x = random_values(DType::Float32, {2, 3, 4}, 1);
  auto msg = node_error("NegativeLogLikelihoodLoss", 13, {x, i64({0, 1})}, nullptr);
  EXPECT_NE(msg.find("target shape 2 does not match input shape 2x3x4 (want 2x4)"), std::string::npos) << msg;
  Tensor t = Tensor::from_vector<int64_t>({2, 4}, {0, 1, 2, 0, 1, 2, 0, 1});
  msg = node_error("SoftmaxCrossEntropyLoss", 13, {x, t, random_values(DType::Float32, {4}, 2)}, nullptr);
  EXPECT_NE(msg.find("weight must be 1-D of length C = 3, got shape 4"), std::string::npos) << msg;
  msg = node_error("NegativeLogLikelihoodLoss", 13, {x, t}, [](NodeBuilder& n) { n.attr("reduction", "max"); });
  EXPECT_NE(msg.find("reduction 'max' is not one of none, sum, mean"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
