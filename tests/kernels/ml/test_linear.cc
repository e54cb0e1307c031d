// LinearRegressor / LinearClassifier: hand-computed cases, post-transforms,
// labels, fast (GEMM) vs reference, and the errors for malformed models.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {
namespace {

struct LinearModel {
  ModelBuilder mb{13};
  NodeBuilder node;
  explicit LinearModel(const std::string& op, int64_t features, bool classifier, bool string_labels = false)
      : node(nullptr) {
    mb.import_domain("ai.onnx.ml", 1);
    mb.input("X", DType::Float32, {-1, features});
    if (classifier) {
      node = mb.node(op, {"X"}, {"label", "scores"});
      mb.output("label", string_labels ? DType::String : DType::Int64, {-1});
      mb.output("scores", DType::Float32, {-1, -1});
    } else {
      node = mb.node(op, {"X"}, {"Y"});
      mb.output("Y", DType::Float32, {-1, -1});
    }
    node.domain("ai.onnx.ml").name("lin");
  }
};

Tensor run_label_scores(const LinearModel& m, const Tensor& x, KernelMode mode, Tensor* scores) {
  auto s = m.mb.session(options_for(mode));
  auto outs = run_all(*s, {{"X", x}});
  if (scores) *scores = outs.at(1);
  return outs.at(0);
}

TEST(MlLinearRegressor, HandComputed) {
  LinearModel m("LinearRegressor", 3, false);
  // Two targets: y0 = x0 + 2 x1 + 3 x2 + 0.5, y1 = -x2 - 1.
  m.node.attr("coefficients", std::vector<float>{1, 2, 3, 0, 0, -1}).attr("intercepts", std::vector<float>{0.5f, -1})
      .attr("targets", int64_t{2});
  Tensor x = Tensor::from_vector<float>({2, 3}, {1, 1, 1, 2, 0, -1});
  for (auto mode : {KernelMode::Fast, KernelMode::Reference}) {
    Tensor y = run_single(*m.mb.session(options_for(mode)), {{"X", x}});
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({2, 2}, {6.5f, -2, -0.5f, 0}), 1e-6, 0));
  }
}

TEST(MlLinearRegressor, OneDimensionalInputIsOneRow) {
  LinearModel m("LinearRegressor", 2, false);
  m.node.attr("coefficients", std::vector<float>{2, -1});
  m.mb.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  Tensor y = run_single(*m.mb.session(), {{"X", Tensor::from_vector<float>({2}, {3, 1})}});
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({1, 1}, {5}), 0, 0));
}

TEST(MlLinearRegressor, FeatureMismatchIsAnError) {
  LinearModel m("LinearRegressor", 4, false);
  m.node.attr("coefficients", std::vector<float>{1, 2, 3});
  auto s = m.mb.session();
  std::string msg = error_message([&] { run_single(*s, {{"X", Tensor::from_vector<float>({1, 4}, {1, 2, 3, 4})}}); });
  EXPECT_NE(msg.find("LinearRegressor 'lin'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("4 features"), std::string::npos) << msg;
}

TEST(MlLinearClassifier, SoftmaxLabelsAndScores) {
  LinearModel m("LinearClassifier", 2, true);
  m.node.attr("coefficients", std::vector<float>{1, 0, 0, 1, -1, -1}).attr("intercepts", std::vector<float>{0, 0, 1})
      .attr("classlabels_ints", std::vector<int64_t>{10, 20, 30}).attr("post_transform", "SOFTMAX");
  Tensor x = Tensor::from_vector<float>({2, 2}, {2, 1, -3, -3});  // raw: [2,1,-2], [-3,-3,7]
  for (auto mode : {KernelMode::Fast, KernelMode::Reference}) {
    Tensor scores;
    Tensor label = run_label_scores(m, x, mode, &scores);
    EXPECT_EQ(label.to_int64_vector(), (std::vector<int64_t>{10, 30}));
    const double e0 = std::exp(2.0), e1 = std::exp(1.0), e2 = std::exp(-2.0), z = e0 + e1 + e2;
    const double f = std::exp(-10.0), zz = 2 * f + 1;
    EXPECT_TRUE(tensors_near(scores, Tensor::from_vector<float>({2, 3}, {float(e0 / z), float(e1 / z), float(e2 / z),
                                                                          float(f / zz), float(f / zz), float(1 / zz)}),
                             1e-6, 1e-5));
  }
}

TEST(MlLinearClassifier, FirstMaximumWinsTies) {
  LinearModel m("LinearClassifier", 1, true);
  m.node.attr("coefficients", std::vector<float>{1, 1, 0}).attr("intercepts", std::vector<float>{0, 0, 0})
      .attr("classlabels_ints", std::vector<int64_t>{7, 8, 9});
  Tensor label = run_label_scores(m, Tensor::from_vector<float>({2, 1}, {1, -1}), KernelMode::Fast, nullptr);
  EXPECT_EQ(label.to_int64_vector(), (std::vector<int64_t>{7, 9}));  // [1,1,0] -> 7; [-1,-1,0] -> 9
}

TEST(MlLinearClassifier, LogisticAndSoftmaxZero) {
  Tensor x = Tensor::from_vector<float>({1, 1}, {2});
  {
    LinearModel m("LinearClassifier", 1, true);
    m.node.attr("coefficients", std::vector<float>{1, -1}).attr("intercepts", std::vector<float>{0, 0})
        .attr("classlabels_ints", std::vector<int64_t>{0, 1}).attr("post_transform", "LOGISTIC");
    Tensor scores;
    run_label_scores(m, x, KernelMode::Fast, &scores);
    const float p = float(1 / (1 + std::exp(-2.0)));
    EXPECT_TRUE(tensors_near(scores, Tensor::from_vector<float>({1, 2}, {p, 1 - p}), 1e-6, 1e-6));
  }
  {
    // SOFTMAX_ZERO: a zero score stays zero; the others share the mass.
    LinearModel m("LinearClassifier", 1, true);
    m.node.attr("coefficients", std::vector<float>{1, 0, 1}).attr("intercepts", std::vector<float>{0, 0, -1})
        .attr("classlabels_ints", std::vector<int64_t>{0, 1, 2}).attr("post_transform", "SOFTMAX_ZERO");
    Tensor scores;
    run_label_scores(m, x, KernelMode::Reference, &scores);  // raw [2, 0, 1]
    const double a = 1, c = std::exp(-1.0);
    EXPECT_TRUE(tensors_near(scores, Tensor::from_vector<float>({1, 3}, {float(a / (a + c)), 0, float(c / (a + c))}),
                             1e-6, 1e-5));
  }
}

TEST(MlLinearClassifier, ProbitIsTheNormalQuantile) {
  LinearModel m("LinearClassifier", 1, true);
  m.node.attr("coefficients", std::vector<float>{0, 0}).attr("intercepts", std::vector<float>{0.5f, 0.8413447f})
      .attr("classlabels_ints", std::vector<int64_t>{0, 1}).attr("post_transform", "PROBIT");
  Tensor scores;
  run_label_scores(m, Tensor::from_vector<float>({1, 1}, {0}), KernelMode::Fast, &scores);
  // Phi^-1(0.5) = 0, Phi^-1(0.8413) = 1; the erfinv approximation onnxruntime uses is within 2e-3.
  EXPECT_NEAR(scores.data<float>()[0], 0.0f, 1e-6);
  EXPECT_NEAR(scores.data<float>()[1], 1.0f, 2e-3);
}

TEST(MlLinearClassifier, BinaryOneRowTwoLabels) {
  LinearModel m("LinearClassifier", 2, true, true);
  m.node.attr("coefficients", std::vector<float>{1, -1}).attr("intercepts", std::vector<float>{0.25f})
      .attr("classlabels_strings", std::vector<std::string>{"no", "yes"});
  Tensor scores;
  Tensor label = run_label_scores(m, Tensor::from_vector<float>({2, 2}, {1, 0, 0, 1}), KernelMode::Fast, &scores);
  EXPECT_EQ(label.data<std::string>()[0], "yes");  // s = 1.25 > 0
  EXPECT_EQ(label.data<std::string>()[1], "no");   // s = -0.75
  // Two columns [1 - s, s] of the raw score (post_transform NONE).
  EXPECT_TRUE(tensors_near(scores, Tensor::from_vector<float>({2, 2}, {-0.25f, 1.25f, 1.75f, -0.75f}), 1e-6, 0));
}

TEST(MlLinearClassifier, FastMatchesReference) {
  const int64_t rows = 37, features = 19, classes = 5;
  Tensor w = random_tensor(DType::Float32, {classes * features}, 3);
  Tensor b = random_tensor(DType::Float32, {classes}, 4);
  std::vector<float> wv(w.data<float>(), w.data<float>() + w.numel()), bv(b.data<float>(), b.data<float>() + classes);
  for (const char* post : {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO"}) {
    LinearModel m("LinearClassifier", features, true);
    m.node.attr("coefficients", wv).attr("intercepts", bv).attr("post_transform", post)
        .attr("classlabels_ints", std::vector<int64_t>{1, 2, 3, 4, 5});
    Tensor x = random_tensor(DType::Float32, {rows, features}, 5);
    Tensor sf, sr;
    Tensor lf = run_label_scores(m, x, KernelMode::Fast, &sf);
    Tensor lr = run_label_scores(m, x, KernelMode::Reference, &sr);
    EXPECT_EQ(lf.to_int64_vector(), lr.to_int64_vector()) << post;
    EXPECT_TRUE(tensors_near(sf, sr, 1e-5, 1e-4)) << post;
  }
}

TEST(MlLinearClassifier, MalformedModelsFailAtLoad) {
  {
    LinearModel m("LinearClassifier", 2, true);
    m.node.attr("coefficients", std::vector<float>{1, 2, 3, 4}).attr("intercepts", std::vector<float>{0, 0})
        .attr("classlabels_ints", std::vector<int64_t>{1, 2, 3});
    std::string msg = error_message([&] { m.mb.session(); });
    EXPECT_NE(msg.find("2 coefficient rows but 3 class labels"), std::string::npos) << msg;
  }
  {
    LinearModel m("LinearClassifier", 2, true);
    m.node.attr("coefficients", std::vector<float>{1, 2}).attr("intercepts", std::vector<float>{0})
        .attr("post_transform", "SIGMOID");
    std::string msg = error_message([&] { m.mb.session(); });
    EXPECT_NE(msg.find("post_transform 'SIGMOID'"), std::string::npos) << msg;
  }
  {
    LinearModel m("LinearClassifier", 3, true);
    m.node.attr("coefficients", std::vector<float>{1, 2, 3, 4}).attr("intercepts", std::vector<float>{0, 0})
        .attr("classlabels_ints", std::vector<int64_t>{1, 2});
    auto s = m.mb.session();
    std::string msg = error_message([&] { run_all(*s, {{"X", Tensor::from_vector<float>({1, 3}, {1, 2, 3})}}); });
    EXPECT_NE(msg.find("LinearClassifier 'lin': input has 3 features"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
