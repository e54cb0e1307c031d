// Normalizer, Scaler, Binarizer, ArrayFeatureExtractor: hand-computed values,
// fast vs reference, and error cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {
namespace {

// One ai.onnx.ml node X -> Y (plus optional extra inputs), input declared with unknown shape.
struct OneNode {
  ModelBuilder mb{13};
  NodeBuilder node{nullptr};
  OneNode(const std::string& op, DType in, std::vector<std::string> inputs = {"X"}) {
    mb.import_domain("ai.onnx.ml", 1);
    mb.input("X", in, {}, false);
    if (inputs.size() > 1) mb.input(inputs[1], DType::Int64, {}, false);
    node = mb.node(op, inputs, {"Y"});
    node.domain("ai.onnx.ml").name("n1");
    mb.output("Y");
  }
  Tensor run(const std::vector<std::pair<std::string, Tensor>>& feeds, KernelMode mode = KernelMode::Fast) {
    return run_single(*mb.session(options_for(mode)), feeds);
  }
};

TEST(MlNormalizer, MaxL1L2) {
  Tensor x = Tensor::from_vector<float>({3, 3}, {1, -2, 2, -2, -1, -4, 0, 0, 0});
  struct Case {
    const char* norm;
    std::vector<float> want;
  };
  const std::vector<Case> cases = {
      // MAX divides by the largest signed value: row 2's max is -1 (sign flips); a zero row is copied.
      {"MAX", {0.5f, -1, 1, 2, 1, 4, 0, 0, 0}},
      {"L1", {0.2f, -0.4f, 0.4f, -2 / 7.f, -1 / 7.f, -4 / 7.f, 0, 0, 0}},
      {"L2", {1 / 3.f, -2 / 3.f, 2 / 3.f, float(-2 / std::sqrt(21.0)), float(-1 / std::sqrt(21.0)),
              float(-4 / std::sqrt(21.0)), 0, 0, 0}},
  };
  for (const auto& c : cases)
    for (auto mode : {KernelMode::Fast, KernelMode::Reference}) {
      OneNode m("Normalizer", DType::Float32);
      m.node.attr("norm", c.norm);
      EXPECT_TRUE(tensors_near(m.run({{"X", x}}, mode), Tensor::from_vector<float>({3, 3}, c.want), 1e-6, 1e-6))
          << c.norm;
    }
}

TEST(MlNormalizer, IntegerInputGivesFloat) {
  OneNode m("Normalizer", DType::Int64);
  m.node.attr("norm", "L1");
  Tensor y = m.run({{"X", Tensor::from_vector<int64_t>({1, 4}, {1, -1, 2, 0})}});
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({1, 4}, {0.25f, -0.25f, 0.5f, 0}), 1e-7, 0));
}

TEST(MlNormalizer, Rank3IsAnError) {
  OneNode m("Normalizer", DType::Float32);
  m.node.attr("norm", "L2");
  std::string msg = error_message([&] { m.run({{"X", Tensor(DType::Float32, {2, 2, 2})}}); });
  EXPECT_NE(msg.find("Normalizer 'n1'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 3"), std::string::npos) << msg;
}

TEST(MlScaler, PerFeatureAndScalar) {
  Tensor x = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  {
    OneNode m("Scaler", DType::Float32);
    m.node.attr("offset", std::vector<float>{1, 2}).attr("scale", std::vector<float>{2, -1});
    for (auto mode : {KernelMode::Fast, KernelMode::Reference})
      EXPECT_TRUE(tensors_near(m.run({{"X", x}}, mode), Tensor::from_vector<float>({2, 2}, {0, 0, 4, -2}), 0, 0));
  }
  {
    OneNode m("Scaler", DType::Int32);
    m.node.attr("offset", std::vector<float>{0.5f}).attr("scale", std::vector<float>{2});
    Tensor y = m.run({{"X", Tensor::from_vector<int32_t>({3}, {0, 1, 2})}});
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({3}, {-1, 1, 3}), 0, 0));
  }
}

TEST(MlScaler, WrongParameterCountIsAnError) {
  OneNode m("Scaler", DType::Float32);
  m.node.attr("offset", std::vector<float>{1, 2, 3}).attr("scale", std::vector<float>{1, 1, 1});
  std::string msg = error_message([&] { m.run({{"X", Tensor::from_vector<float>({1, 2}, {1, 2})}}); });
  EXPECT_NE(msg.find("Scaler 'n1': scale and offset have 3 values; expected 1 or one per feature (2)"),
            std::string::npos)
      << msg;
}

TEST(MlBinarizer, ThresholdAndTypes) {
  {
    OneNode m("Binarizer", DType::Float32);
    m.node.attr("threshold", 0.5f);
    Tensor y = m.run({{"X", Tensor::from_vector<float>({2, 2, 1}, {0.5f, 0.6f, -1, 3})}});
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({2, 2, 1}, {0, 1, 0, 1}), 0, 0));
  }
  {
    OneNode m("Binarizer", DType::Int64);  // default threshold 0; -0.5 keeps 0 -> 1
    m.node.attr("threshold", -0.5f);
    Tensor y = m.run({{"X", Tensor::from_vector<int64_t>({3}, {-1, 0, 5})}}, KernelMode::Reference);
    EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{0, 1, 1}));
  }
}

TEST(MlBinarizer, NaNIsAnError) {
  OneNode m("Binarizer", DType::Float32);
  std::string msg = error_message(
      [&] { m.run({{"X", Tensor::from_vector<float>({2}, {1, std::numeric_limits<float>::quiet_NaN()})}}); });
  EXPECT_NE(msg.find("Binarizer 'n1': input element 1 is NaN"), std::string::npos) << msg;
}

TEST(MlArrayFeatureExtractor, ShapesAndDtypes) {
  Tensor idx = Tensor::from_vector<int64_t>({2}, {2, 0});
  {
    OneNode m("ArrayFeatureExtractor", DType::Float32, {"X", "I"});
    Tensor x = Tensor::from_vector<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6});
    for (auto mode : {KernelMode::Fast, KernelMode::Reference})
      EXPECT_TRUE(tensors_near(m.run({{"X", x}, {"I", idx}}, mode),
                               Tensor::from_vector<float>({2, 1, 2}, {3, 1, 6, 4}), 0, 0));
    // A 1-D input gives [1, len(indices)].
    Tensor y = m.run({{"X", Tensor::from_vector<float>({3}, {7, 8, 9})}, {"I", idx}});
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({1, 2}, {9, 7}), 0, 0));
  }
  {
    OneNode m("ArrayFeatureExtractor", DType::String, {"X", "I"});
    Tensor y = m.run({{"X", Tensor::from_vector<std::string>({1, 3}, {"a", "b", "c"})}, {"I", idx}});
    ASSERT_EQ(y.shape(), (Shape{1, 2}));
    EXPECT_EQ(y.data<std::string>()[0], "c");
    EXPECT_EQ(y.data<std::string>()[1], "a");
  }
}

TEST(MlArrayFeatureExtractor, IndexOutOfRangeIsAnError) {
  OneNode m("ArrayFeatureExtractor", DType::Float32, {"X", "I"});
  for (int64_t bad : {3, -1}) {
    std::string msg = error_message([&] {
      m.run({{"X", Tensor::from_vector<float>({1, 3}, {1, 2, 3})}, {"I", Tensor::from_vector<int64_t>({2}, {0, bad})}});
    });
    EXPECT_NE(msg.find("ArrayFeatureExtractor 'n1': index Y[1] = " + std::to_string(bad) + " is out of range [0, 3)"),
              std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
