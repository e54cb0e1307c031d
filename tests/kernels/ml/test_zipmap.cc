// ZipMap: the sequence-of-maps structure (sorted keys, as onnxruntime's
// std::map gives), and models/logistic_regression.onnx against its
// zipmap=False twin (the pytest compares that twin with onnxruntime).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {
namespace {

std::vector<Value> run_values(Session& s, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  std::vector<std::pair<std::string, Value>> f;
  for (const auto& kv : feeds) f.emplace_back(kv.first, Value(kv.second));
  return s.run(f);
}

std::unique_ptr<Session> zipmap_session(const std::string& attr_name, bool strings, KernelMode mode) {
  ModelBuilder mb(13);
  mb.import_domain("ai.onnx.ml", 1);
  mb.input("X", DType::Float32, {-1, -1});
  auto n = mb.node("ZipMap", {"X"}, {"Z"});
  n.domain("ai.onnx.ml").name("zm");
  if (strings) n.attr(attr_name, std::vector<std::string>{"cat", "ant", "bee"});
  else n.attr(attr_name, std::vector<int64_t>{30, 10, 20});
  mb.output("Z");
  return mb.session(options_for(mode));
}

TEST(MlZipMap, IntKeysSortedOneMapPerRow) {
  for (auto mode : {KernelMode::Fast, KernelMode::Reference}) {
    auto s = zipmap_session("classlabels_int64s", false, mode);
    auto outs = run_values(*s, {{"X", Tensor::from_vector<float>({2, 3}, {0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f})}});
    ASSERT_TRUE(outs.at(0).is_sequence());
    const auto& maps = outs[0].sequence_items();
    ASSERT_EQ(maps.size(), 2u);
    EXPECT_EQ(outs[0].type_string(), "seq(map(int64,tensor(float)))");
    // Keys ascending: 10 (column 1), 20 (column 2), 30 (column 0).
    const Map& m0 = maps[0].map_value();
    EXPECT_EQ(m0.keys.to_int64_vector(), (std::vector<int64_t>{10, 20, 30}));
    EXPECT_TRUE(tensors_near(m0.values, Tensor::from_vector<float>({3}, {0.2f, 0.7f, 0.1f}), 0, 0));
    EXPECT_TRUE(tensors_near(maps[1].map_value().values, Tensor::from_vector<float>({3}, {0.25f, 0.25f, 0.5f}), 0, 0));
  }
}

TEST(MlZipMap, StringKeys) {
  auto s = zipmap_session("classlabels_strings", true, KernelMode::Fast);
  auto outs = run_values(*s, {{"X", Tensor::from_vector<float>({1, 3}, {1, 2, 3})}});
  const Map& m = outs.at(0).sequence_items().at(0).map_value();
  ASSERT_EQ(m.keys.numel(), 3);
  EXPECT_EQ(m.keys.data<std::string>()[0], "ant");
  EXPECT_EQ(m.keys.data<std::string>()[1], "bee");
  EXPECT_EQ(m.keys.data<std::string>()[2], "cat");
  EXPECT_TRUE(tensors_near(m.values, Tensor::from_vector<float>({3}, {2, 3, 1}), 0, 0));
}

TEST(MlZipMap, ColumnCountMismatchIsAnError) {
  auto s = zipmap_session("classlabels_int64s", false, KernelMode::Fast);
  std::string msg = error_message([&] { run_values(*s, {{"X", Tensor::from_vector<float>({1, 2}, {1, 2})}}); });
  EXPECT_NE(msg.find("ZipMap 'zm': input has 2 columns but there are 3 class labels"), std::string::npos) << msg;
}

TEST(MlZipMap, NeedsExactlyOneLabelAttribute) {
  ModelBuilder mb(13);
  mb.import_domain("ai.onnx.ml", 1);
  mb.input("X", DType::Float32, {-1, 3});
  mb.node("ZipMap", {"X"}, {"Z"}).domain("ai.onnx.ml").name("zm");
  mb.output("Z");
  std::string msg = error_message([&] { mb.session(); });
  EXPECT_NE(msg.find("exactly one of classlabels_int64s and classlabels_strings"), std::string::npos) << msg;
}

// The committed sklearn model through ZipMap gives, row by row, the probabilities of
// its zipmap=False twin.
TEST(MlZipMap, LogisticRegressionModelMatchesTwin) {
  const std::string dir = std::string(ONNXMINI_SOURCE_DIR) + "/models/";
  if (!std::filesystem::exists(dir + "logistic_regression.onnx")) GTEST_SKIP() << "models/ not generated";
  auto zip = Session::load(dir + "logistic_regression.onnx");
  auto twin = Session::load(dir + "logistic_regression_nozipmap.onnx");
  Tensor x = random_tensor(DType::Float32, {20, 4}, 11, 0.0, 7.0);
  auto zo = run_values(*zip, {{"input", x}});
  auto to = run_values(*twin, {{"input", x}});
  EXPECT_EQ(zo.at(0).tensor().to_int64_vector(), to.at(0).tensor().to_int64_vector());
  const Tensor& probs = to.at(1).tensor();
  const auto& maps = zo.at(1).sequence_items();
  ASSERT_EQ(static_cast<int64_t>(maps.size()), 20);
  for (int64_t r = 0; r < 20; ++r) {
    const Map& m = maps[r].map_value();
    EXPECT_EQ(m.keys.to_int64_vector(), (std::vector<int64_t>{0, 1, 2}));
    for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(m.values.data<float>()[c], probs.data<float>()[r * 3 + c]) << r;
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
