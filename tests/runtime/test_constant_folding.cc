// Constant folding (runtime/constant_folding.cc) at graph_optimization_level 1:
// nodes on constants only are evaluated once at session creation; nodes that
// read a feed or an overridable initializer are kept; a node whose
// kernel fails on its constants is kept and fails, naming itself, at run time.
#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

TEST(ConstantFolding, ConcatOfWeightsFeedingGemm) {
  // The seed's "Concat + Gemm": both Concats fold, leaving one Gemm on a constant B.
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {5, 8});
  mb.initializer("W1", random_tensor(DType::Float32, {8, 3}, 1));
  mb.initializer("W2", random_tensor(DType::Float32, {8, 4}, 2));
  mb.initializer("B1", random_tensor(DType::Float32, {3}, 3));
  mb.initializer("B2", random_tensor(DType::Float32, {4}, 4));
  mb.node("Concat", {"W1", "W2"}, {"W"}).name("cw").attr("axis", int64_t(1));
  mb.node("Concat", {"B1", "B2"}, {"B"}).name("cb").attr("axis", int64_t(0));
  mb.node("Gemm", {"X", "W", "B"}, {"Y"}).name("g");
  mb.output("Y");
  EXPECT_EQ(check_fusion(mb, {{"X", random_tensor(DType::Float32, {5, 8}, 5)}}, 8), 1u);
  // W1, W2, B1, B2 are no longer read once W and B are constants: they are dropped,
  // and the session's weights are the folded W (8 x 7) and B (7) alone.
  auto plain = mb.session(opts(0)), folded = mb.session(opts(1));
  EXPECT_EQ(plain->weight_bytes(), (8 * 3 + 8 * 4 + 3 + 4) * sizeof(float));
  EXPECT_EQ(folded->weight_bytes(), (8 * 7 + 7) * sizeof(float));
  std::vector<std::string> names;
  for (const auto& init : folded->describe().initializers) names.push_back(init.name);
  EXPECT_EQ(names, (std::vector<std::string>{"W", "B"}));
}

TEST(ConstantFolding, ChainsFoldAndGraphOutputsMayBecomeConstant) {
  // Shape -> Gather -> Reshape on constants folds completely; the folded
  // value is also a graph output, returned as before.
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 6});
  mb.initializer("C", random_tensor(DType::Float32, {3, 4}, 1));
  mb.initializer("shape", Tensor::from_vector<int64_t>({2}, {2, 6}));
  mb.node("Reshape", {"C", "shape"}, {"R"}).name("reshape");
  mb.node("Neg", {"R"}, {"N"}).name("neg");
  mb.node("Add", {"X", "N"}, {"Y"}).name("add");
  mb.output("Y").output("N");
  const size_t n = check_fusion(mb, {{"X", random_tensor(DType::Float32, {2, 6}, 2)}}, 1);
  EXPECT_EQ(n, 1u);
}

TEST(ConstantFolding, KeepsNodesOnFeedsAndOverridableInitializers) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {3});
  mb.initializer("C", random_tensor(DType::Float32, {3}, 1));
  mb.input("D", DType::Float32, {3});  // also an initializer: feeds may replace it
  mb.initializer("D", random_tensor(DType::Float32, {3}, 2));
  mb.node("Neg", {"D"}, {"ND"}).name("neg_overridable");
  mb.node("Neg", {"C"}, {"NC"}).name("neg_constant");
  mb.node("Add", {"X", "ND"}, {"S"}).name("add");
  mb.node("Add", {"S", "NC"}, {"Y"}).name("add2");
  mb.output("Y");
  auto s = mb.session(opts(1));
  const auto nodes = s->describe().nodes;
  auto has = [&](const std::string& name) {
    for (const auto& n : nodes)
      if (n.name == name) return true;
    return false;
  };
  EXPECT_TRUE(has("neg_overridable"));
  EXPECT_FALSE(has("neg_constant"));
  EXPECT_TRUE(has("add"));
  EXPECT_TRUE(has("add2"));
}

TEST(ConstantFolding, FailingNodeIsKeptAndReportsAtRunTime) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 6});
  mb.initializer("C", random_tensor(DType::Float32, {3, 4}, 1));
  mb.initializer("shape", Tensor::from_vector<int64_t>({2}, {5, 5}));  // 12 elements cannot be 5 x 5
  mb.node("Reshape", {"C", "shape"}, {"R"}).name("bad_reshape");
  mb.node("Add", {"X", "R"}, {"Y"}).name("add");
  mb.output("Y");
  auto s = mb.session(opts(1));
  EXPECT_EQ(s->describe().nodes.size(), 2u);
  try {
    run_all(*s, {{"X", random_tensor(DType::Float32, {2, 6}, 2)}});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad_reshape"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
