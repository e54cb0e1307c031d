// LabelEncoder, OneHotEncoder, CategoryMapper, Imputer, FeatureVectorizer,
// DictVectorizer: table lookups checked element by element against the
// attribute tables, defaults, and the errors naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {
namespace {

struct OneNode {
  ModelBuilder mb{13};
  NodeBuilder node{nullptr};
  OneNode(const std::string& op, DType in, DType out, int ml_opset = 2, Shape in_shape = {-1}) {
    mb.import_domain("ai.onnx.ml", ml_opset);
    mb.input("X", in, in_shape);
    node = mb.node(op, {"X"}, {"Y"});
    mb.output("Y", out, {});
    node.domain("ai.onnx.ml").name("enc");
  }
};

TEST(MlLabelEncoder, StringsToInt64WithDefault) {
  OneNode m("LabelEncoder", DType::String, DType::Int64);
  m.node.attr("keys_strings", std::vector<std::string>{"a", "b", "c"})
      .attr("values_int64s", std::vector<int64_t>{10, 20, 30}).attr("default_int64", int64_t{-9});
  Tensor y = run_single(*m.mb.session(),
                        {{"X", Tensor::from_vector<std::string>({4}, {"c", "zz", "a", "b"})}});
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{30, -9, 10, 20}));
}

TEST(MlLabelEncoder, FloatKeysNaNAndDefaultFloat) {
  OneNode m("LabelEncoder", DType::Float32, DType::Float32);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  m.node.attr("keys_floats", std::vector<float>{1.5f, nan}).attr("values_floats", std::vector<float>{7, 8});
  Tensor y = run_single(*m.mb.session(), {{"X", Tensor::from_vector<float>({3}, {nan, 1.5f, 2})}});
  ASSERT_EQ(y.numel(), 3);
  EXPECT_EQ(y.data<float>()[0], 8);
  EXPECT_EQ(y.data<float>()[1], 7);
  EXPECT_EQ(y.data<float>()[2], 0.0f);  // default_float is -0.0
  EXPECT_TRUE(std::signbit(y.data<float>()[2]));
}

TEST(MlLabelEncoder, Opset1BothDirections) {
  OneNode m("LabelEncoder", DType::String, DType::Int64, 1);
  m.node.attr("classes_strings", std::vector<std::string>{"x", "y"});
  Tensor y = run_single(*m.mb.session(), {{"X", Tensor::from_vector<std::string>({3}, {"y", "q", "x"})}});
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{1, -1, 0}));
  OneNode back("LabelEncoder", DType::Int64, DType::String, 1);
  back.node.attr("classes_strings", std::vector<std::string>{"x", "y"}).attr("default_string", "none");
  Tensor s = run_single(*back.mb.session(), {{"X", Tensor::from_vector<int64_t>({3}, {1, 5, 0})}});
  EXPECT_EQ(s.data<std::string>()[0], "y");
  EXPECT_EQ(s.data<std::string>()[1], "none");
  EXPECT_EQ(s.data<std::string>()[2], "x");
}

TEST(MlLabelEncoder, Errors) {
  OneNode m("LabelEncoder", DType::String, DType::Int64);
  m.node.attr("keys_strings", std::vector<std::string>{"a", "b"}).attr("values_int64s", std::vector<int64_t>{1});
  std::string msg = error_message([&] { m.mb.session(); });
  EXPECT_NE(msg.find("LabelEncoder 'enc'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("has 2 keys but 1 values"), std::string::npos) << msg;
  OneNode w("LabelEncoder", DType::Int64, DType::Int64);
  w.node.attr("keys_strings", std::vector<std::string>{"a"}).attr("values_int64s", std::vector<int64_t>{1});
  auto s = w.mb.session();
  msg = error_message([&] { run_single(*s, {{"X", Tensor::from_vector<int64_t>({1}, {0})}}); });
  EXPECT_NE(msg.find("input has dtype int64 but the keys are string"), std::string::npos) << msg;
}

TEST(MlOneHotEncoder, RowsPerElementAndUnknowns) {
  OneNode m("OneHotEncoder", DType::Int64, DType::Float32, 1, {-1, 2});
  m.node.attr("cats_int64s", std::vector<int64_t>{4, 2, 9});
  Tensor y = run_single(*m.mb.session(), {{"X", Tensor::from_vector<int64_t>({2, 2}, {9, 4, 5, 2})}});
  ASSERT_EQ(y.shape(), (Shape{2, 2, 3}));
  const std::vector<float> want = {0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(y.data<float>()[i], want[i]) << i;
  m.node.attr("zeros", int64_t{0});
  auto s = m.mb.session();
  std::string msg = error_message([&] { run_single(*s, {{"X", Tensor::from_vector<int64_t>({1, 2}, {9, 5})}}); });
  EXPECT_NE(msg.find("input element 1 (5) is not a category and zeros is 0"), std::string::npos) << msg;
}

TEST(MlCategoryMapper, MismatchedListsAreAnError) {
  OneNode m("CategoryMapper", DType::String, DType::Int64, 1);
  m.node.attr("cats_int64s", std::vector<int64_t>{1, 2}).attr("cats_strings", std::vector<std::string>{"a"});
  std::string msg = error_message([&] { m.mb.session(); });
  EXPECT_NE(msg.find("CategoryMapper 'enc'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cats_int64s has 2 values but cats_strings has 1"), std::string::npos) << msg;
}

TEST(MlImputer, PerFeatureValuesAndCountCheck) {
  OneNode m("Imputer", DType::Int64, DType::Int64, 1, {-1, 2});
  m.node.attr("imputed_value_int64s", std::vector<int64_t>{100, 200}).attr("replaced_value_int64", int64_t{-1});
  Tensor y = run_single(*m.mb.session(), {{"X", Tensor::from_vector<int64_t>({2, 2}, {-1, 5, 6, -1})}});
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{100, 5, 6, 200}));
  OneNode bad("Imputer", DType::Float32, DType::Float32, 1, {-1, 3});
  bad.node.attr("imputed_value_floats", std::vector<float>{1, 2});
  auto s = bad.mb.session();
  std::string msg = error_message([&] { run_single(*s, {{"X", Tensor::from_vector<float>({1, 3}, {0, 1, 2})}}); });
  EXPECT_NE(msg.find("input has 3 features but 2 imputed values are given"), std::string::npos) << msg;
}

TEST(MlFeatureVectorizer, TruncatesAndPads) {
  ModelBuilder mb{13};
  mb.import_domain("ai.onnx.ml", 1);
  mb.input("A", DType::Float32, {-1, 3});
  mb.input("B", DType::Int64, {-1, 1});
  mb.node("FeatureVectorizer", {"A", "B"}, {"Y"}).domain("ai.onnx.ml").attr("inputdimensions",
                                                                           std::vector<int64_t>{2, 2});
  mb.output("Y", DType::Float32, {-1, 4});
  Tensor y = run_single(*mb.session(), {{"A", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                                         {"B", Tensor::from_vector<int64_t>({2, 1}, {7, 8})}});
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({2, 4}, {1, 2, 7, 0, 4, 5, 8, 0}), 0, 0));
}

TEST(MlFeatureVectorizer, HostileDimensionsAreAnError) {
  ModelBuilder mb{13};
  mb.import_domain("ai.onnx.ml", 1);
  mb.input("A", DType::Float32, {-1, 1});
  mb.input("B", DType::Float32, {-1, 1});
  mb.node("FeatureVectorizer", {"A", "B"}, {"Y"}).domain("ai.onnx.ml").name("fv").attr(
      "inputdimensions", std::vector<int64_t>{std::numeric_limits<int64_t>::max(), 1});
  mb.output("Y", DType::Float32, {-1, -1});
  std::string msg = error_message([&] { mb.session(); });
  EXPECT_NE(msg.find("FeatureVectorizer 'fv'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("inputdimensions sum overflows int64 at index 1"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
