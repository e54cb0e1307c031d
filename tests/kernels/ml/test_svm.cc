// SVMRegressor / SVMClassifier: decision values computed here from the
// kernel definitions (an independent double-precision reference), the
// label rules, fast (GEMM) against reference, and the attribute errors.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {
namespace {

struct SvmModel {
  ModelBuilder mb{13};
  NodeBuilder node{nullptr};
  SvmModel(const std::string& op, int64_t features) {
    mb.import_domain("ai.onnx.ml", 1);
    mb.input("X", DType::Float32, {-1, features});
    if (op == "SVMClassifier") {
      node = mb.node(op, {"X"}, {"label", "scores"});
      mb.output("label", DType::Int64, {-1});
      mb.output("scores", DType::Float32, {-1, -1});
    } else {
      node = mb.node(op, {"X"}, {"Y"});
      mb.output("Y", DType::Float32, {-1, 1});
    }
    node.domain("ai.onnx.ml").name("svm");
  }
};

const std::vector<float> kSupport = {1, 0, 0, 1, -1, -1};  // 3 vectors x 2 features
const std::vector<float> kCoef = {0.5f, -1.25f, 2.0f};

double kernel_value(const std::string& type, const float* x, const float* sv, double gamma, double coef0,
                    double degree) {
  double dot = 0, dist = 0;
  for (int f = 0; f < 2; ++f) {
    dot += double(x[f]) * sv[f];
    dist += (double(x[f]) - sv[f]) * (double(x[f]) - sv[f]);
  }
  if (type == "LINEAR") return dot;
  if (type == "POLY") return std::pow(gamma * dot + coef0, degree);
  if (type == "RBF") return std::exp(-gamma * dist);
  return std::tanh(gamma * dot + coef0);
}

TEST(MlSvmRegressor, EveryKernelMatchesTheDefinition) {
  const std::vector<float> xs = {0.5f, 2, -1, 0.25f, 3, -2, 0, 0};
  for (const std::string type : {"LINEAR", "POLY", "RBF", "SIGMOID"}) {
    SvmModel m("SVMRegressor", 2);
    m.node.attr("kernel_type", type).attr("kernel_params", std::vector<float>{0.5f, 1.0f, 3.0f})
        .attr("support_vectors", kSupport).attr("coefficients", kCoef).attr("rho", std::vector<float>{0.25f})
        .attr("n_supports", int64_t{3});
    std::vector<float> want;
    for (int r = 0; r < 4; ++r) {
      double s = 0.25;
      for (int v = 0; v < 3; ++v) s += kCoef[v] * kernel_value(type, &xs[2 * r], &kSupport[2 * v], 0.5, 1.0, 3.0);
      want.push_back(static_cast<float>(s));
    }
    for (auto mode : {KernelMode::Fast, KernelMode::Reference}) {
      Tensor y = run_single(*m.mb.session(options_for(mode)), {{"X", Tensor::from_vector<float>({4, 2}, xs)}});
      EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({4, 1}, want), 1e-5, 1e-5)) << type;
    }
  }
}

TEST(MlSvmRegressor, OneClassGivesSigns) {
  SvmModel m("SVMRegressor", 2);
  m.node.attr("kernel_type", "LINEAR").attr("support_vectors", kSupport).attr("coefficients", kCoef)
      .attr("rho", std::vector<float>{-0.5f}).attr("n_supports", int64_t{3}).attr("one_class", int64_t{1});
  // decision = 0.5 x0 - 1.25 x1 + 2 (-x0 - x1) - 0.5
  Tensor y = run_single(*m.mb.session(), {{"X", Tensor::from_vector<float>({2, 2}, {-1, 0, 1, 1})}});
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({2, 1}, {1, -1}), 0, 0));
}

TEST(MlSvmClassifier, ThreeClassVotesAndPairScores) {
  // One support vector per class; pair (i, j) uses coefficient row j-1 for i's vector, row i for j's.
  SvmModel m("SVMClassifier", 2);
  const std::vector<float> coef = {1, -1, 0.5f, 0.25f, 1, -2};  // 2 rows x 3 vectors
  const std::vector<float> rho = {0.1f, -0.2f, 0.3f};
  m.node.attr("kernel_type", "RBF").attr("kernel_params", std::vector<float>{0.7f, 0, 0})
      .attr("support_vectors", kSupport).attr("coefficients", coef).attr("rho", rho)
      .attr("vectors_per_class", std::vector<int64_t>{1, 1, 1}).attr("classlabels_ints", std::vector<int64_t>{7, 8, 9});
  const std::vector<float> xs = {0.9f, 0.1f, 0.1f, 0.8f, -0.7f, -1.2f};
  Tensor x = Tensor::from_vector<float>({3, 2}, xs);
  std::vector<float> want_scores;
  std::vector<int64_t> want_labels;
  for (int r = 0; r < 3; ++r) {
    double k[3];
    for (int v = 0; v < 3; ++v) k[v] = kernel_value("RBF", &xs[2 * r], &kSupport[2 * v], 0.7, 0, 0);
    int votes[3] = {0, 0, 0}, idx = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = i + 1; j < 3; ++j, ++idx) {
        const double d = coef[(j - 1) * 3 + i] * k[i] + coef[i * 3 + j] * k[j] + rho[idx];
        want_scores.push_back(static_cast<float>(d));
        ++votes[d > 0 ? i : j];
      }
    int best = 0;
    for (int c = 1; c < 3; ++c)
      if (votes[c] > votes[best]) best = c;
    want_labels.push_back(7 + best);
  }
  for (auto mode : {KernelMode::Fast, KernelMode::Reference}) {
    auto outs = run_all(*m.mb.session(options_for(mode)), {{"X", x}});
    EXPECT_EQ(outs.at(0).to_int64_vector(), want_labels);
    EXPECT_TRUE(tensors_near(outs.at(1), Tensor::from_vector<float>({3, 3}, want_scores), 1e-6, 1e-6));
  }
}

TEST(MlSvmClassifier, ProbabilitiesSumToOne) {
  SvmModel m("SVMClassifier", 2);
  m.node.attr("kernel_type", "RBF").attr("kernel_params", std::vector<float>{0.7f, 0, 0})
      .attr("support_vectors", kSupport).attr("coefficients", std::vector<float>{1, -1, 0.5f, 0.25f, 1, -2})
      .attr("rho", std::vector<float>{0.1f, -0.2f, 0.3f}).attr("prob_a", std::vector<float>{-2, -1.5f, -3})
      .attr("prob_b", std::vector<float>{0.1f, 0, -0.2f}).attr("vectors_per_class", std::vector<int64_t>{1, 1, 1})
      .attr("classlabels_ints", std::vector<int64_t>{0, 1, 2});
  auto outs = run_all(*m.mb.session(), {{"X", Tensor::from_vector<float>({2, 2}, {0.9f, 0.1f, -0.7f, -1.2f})}});
  const float* p = outs.at(1).data<float>();
  ASSERT_EQ(outs.at(1).shape(), (Shape{2, 3}));
  for (int r = 0; r < 2; ++r) {
    // The coupling stops once its error is below 0.005 / classes.
    EXPECT_NEAR(p[3 * r] + p[3 * r + 1] + p[3 * r + 2], 1.0, 0.005 / 3 + 1e-6);
    for (int c = 0; c < 3; ++c) EXPECT_TRUE(p[3 * r + c] > 0 && p[3 * r + c] < 1);
  }
}

std::string creation_error(SvmModel& m) { return error_message([&] { m.mb.session(); }); }

TEST(MlSvmErrors, AttributeMismatchesNameTheNode) {
  SvmModel a("SVMClassifier", 2);
  a.node.attr("support_vectors", kSupport).attr("coefficients", std::vector<float>{1, 2, 3})
      .attr("rho", std::vector<float>{0, 0, 0}).attr("vectors_per_class", std::vector<int64_t>{1, 1, 1})
      .attr("classlabels_ints", std::vector<int64_t>{0, 1, 2});
  std::string msg = creation_error(a);
  EXPECT_NE(msg.find("SVMClassifier 'svm'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("coefficients has 3 values; expected (classes - 1) x support vectors = 6"), std::string::npos)
      << msg;

  SvmModel b("SVMClassifier", 2);
  b.node.attr("support_vectors", kSupport).attr("coefficients", std::vector<float>{1, 2, 3, 4, 5, 6})
      .attr("rho", std::vector<float>{0, 0, 0}).attr("vectors_per_class", std::vector<int64_t>{1, 2})
      .attr("classlabels_ints", std::vector<int64_t>{0, 1, 2});
  msg = creation_error(b);
  EXPECT_NE(msg.find("vectors_per_class has 2 values but there are 3 classes"), std::string::npos) << msg;

  SvmModel c("SVMRegressor", 2);
  c.node.attr("support_vectors", kSupport).attr("coefficients", kCoef).attr("rho", std::vector<float>{0})
      .attr("n_supports", int64_t{4});
  msg = creation_error(c);
  EXPECT_NE(msg.find("support_vectors has 6 values, not a multiple of n_supports (4)"), std::string::npos) << msg;

  SvmModel d("SVMRegressor", 2);
  d.node.attr("support_vectors", kSupport).attr("coefficients", kCoef).attr("rho", std::vector<float>{0})
      .attr("n_supports", int64_t{3}).attr("kernel_type", "CUBIC");
  msg = creation_error(d);
  EXPECT_NE(msg.find("kernel_type 'CUBIC'"), std::string::npos) << msg;

  SvmModel e("SVMRegressor", 3);  // the vectors have 2 features
  e.node.attr("support_vectors", kSupport).attr("coefficients", kCoef).attr("rho", std::vector<float>{0})
      .attr("n_supports", int64_t{3});
  auto s = e.mb.session();
  msg = error_message([&] { run_single(*s, {{"X", Tensor::from_vector<float>({1, 3}, {1, 2, 3})}}); });
  EXPECT_NE(msg.find("input has 3 features; the model expects 2"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
