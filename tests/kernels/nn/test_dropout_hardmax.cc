// Dropout: inference is the identity with an all-true mask (opset 10+) or an
// all-ones mask (before); training mode with a seed is deterministic, drops a
// fraction of elements close to the ratio (binomial bound), scales the kept
// ones by 1 / (1 - ratio), and handles ratio 0 and 1. Hardmax: against a
// reference written here for the opset 13 (single axis) and pre-13 (flattened)
// semantics, ties going to the first maximum.
#include <cmath>

#include "tests/common/node_runner.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

Tensor bool_scalar(bool v) { return Tensor::scalar<bool>(v); }

TEST(Dropout, InferenceIsIdentityWithTrueMask) {
  Tensor x = random_tensor(DType::Float32, {3, 7}, 1);
  auto out = run_node("Dropout", 13, {x, Tensor::scalar<float>(0.5f)}, nullptr, 2, KernelMode::Fast);
  EXPECT_TRUE(tensors_near(out[0], x, 0, 0));
  ASSERT_EQ(out[1].dtype(), DType::Bool);
  for (int64_t i = 0; i < out[1].numel(); ++i) EXPECT_TRUE(out[1].data<bool>()[i]);
  out = run_node("Dropout", 7, {x}, nullptr, 2, KernelMode::Fast);  // mask of the input type before opset 10
  EXPECT_TRUE(tensors_near(out[0], x, 0, 0));
  EXPECT_EQ(values_of(out[1]), std::vector<double>(21, 1.0));
}

TEST(Dropout, TrainingModeSeededFractionAndScale) {
  const int64_t n = 20000;
  Tensor x = random_tensor(DType::Float32, {n}, 2, 0.5, 1.5);
  for (float ratio : {0.25f, 0.5f, 0.9f}) {
    auto seeded = [](NodeBuilder& nb) { nb.attr("seed", int64_t{42}); };
    auto a = run_node("Dropout", 13, {x, Tensor::scalar<float>(ratio), bool_scalar(true)}, seeded, 2, KernelMode::Fast);
    auto b = run_node("Dropout", 13, {x, Tensor::scalar<float>(ratio), bool_scalar(true)}, seeded, 2, KernelMode::Fast);
    EXPECT_TRUE(tensors_near(a[0], b[0], 0, 0)) << "the same seed gives the same result";
    int64_t dropped = 0;
    for (int64_t i = 0; i < n; ++i) {
      const bool kept = a[1].data<bool>()[i];
      dropped += kept ? 0 : 1;
      const float want = kept ? x.data<float>()[i] / (1.f - ratio) : 0.f;
      ASSERT_NEAR(a[0].data<float>()[i], want, 1e-6f * std::fabs(want)) << "element " << i;
    }
    // Binomial(n, ratio): 5 standard deviations.
    const double sd = std::sqrt(n * ratio * (1 - ratio));
    EXPECT_NEAR(static_cast<double>(dropped), n * ratio, 5 * sd) << "ratio " << ratio;
  }
}

TEST(Dropout, RatioZeroAndOne) {
  Tensor x = random_tensor(DType::Float64, {50}, 3);
  auto keep_all = run_node("Dropout", 13, {x, Tensor::scalar<double>(0.0), bool_scalar(true)}, nullptr, 2,
                           KernelMode::Fast);
  EXPECT_TRUE(tensors_near(keep_all[0], x, 0, 0));
  for (int64_t i = 0; i < 50; ++i) EXPECT_TRUE(keep_all[1].data<bool>()[i]);
  auto drop_all = run_node("Dropout", 13, {x, Tensor::scalar<double>(1.0), bool_scalar(true)}, nullptr, 2,
                           KernelMode::Fast);
  for (int64_t i = 0; i < 50; ++i) {
    EXPECT_EQ(drop_all[0].data<double>()[i], 0.0);
    EXPECT_FALSE(drop_all[1].data<bool>()[i]);
  }
  auto msg = node_error("Dropout", 13, {x, Tensor::scalar<double>(1.5), bool_scalar(true)}, nullptr);
  EXPECT_NE(msg.find("Dropout 'n1': ratio 1.5 is outside [0, 1]"), std::string::npos) << msg;
}

// Reference hardmax over (outer, len, inner).
std::vector<double> hardmax_reference(const std::vector<double>& x, int64_t outer, int64_t len, int64_t inner) {
  std::vector<double> y(x.size(), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < len; ++j)
        if (x[(o * len + j) * inner + i] > x[(o * len + best) * inner + i]) best = j;
      y[(o * len + best) * inner + i] = 1.0;
    }
  return y;
}

TEST(Hardmax, Opset13AxisAndOldFlattening) {
  Tensor x = random_values(DType::Float32, {3, 4, 5}, 9, -2, 2);  // integers: many ties
  auto y = run_node("Hardmax", 13, {x}, [](NodeBuilder& n) { n.attr("axis", 1); }, 1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), hardmax_reference(values_of(x), 3, 4, 5));
  y = run_node("Hardmax", 11, {x}, nullptr, 1, KernelMode::Fast)[0];  // default axis 1: rows of 20
  EXPECT_EQ(values_of(y), hardmax_reference(values_of(x), 3, 20, 1));
  y = run_node("Hardmax", 13, {random_values(DType::Float16, {4, 6}, 4)}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.dtype(), DType::Float16);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
