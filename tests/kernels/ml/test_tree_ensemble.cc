// TreeEnsembleRegressor / TreeEnsembleClassifier / TreeEnsemble: hand-walked
// trees (every mode, NaN routing, aggregates, base values, binary rules), fast
// (threaded row blocks) against reference (serial), and the model errors: every
// malformed attribute fails at session creation naming the node, and a cycle
// is an error, never a hang.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// One-output regressor (or two-output classifier) on X [-1, features].
struct TreeModelBuilder {
  ModelBuilder mb{13};
  NodeBuilder node{nullptr};
  TreeModelBuilder(const std::string& op, int64_t features, int ml_opset = 3) {
    mb.import_domain("ai.onnx.ml", ml_opset);
    mb.input("X", DType::Float32, {-1, features});
    if (op == "TreeEnsembleClassifier") {
      node = mb.node(op, {"X"}, {"label", "scores"});
      mb.output("label", DType::Int64, {-1});
      mb.output("scores", DType::Float32, {-1, -1});
    } else {
      node = mb.node(op, {"X"}, {"Y"});
      mb.output("Y", DType::Float32, {-1, -1});
    }
    node.domain("ai.onnx.ml").name("trees");
  }
};

// Tree 0: x0 <= 1 ? (x1 < 0 ? leaf A : leaf B) : leaf C.  Tree 1: x1 >= 2 ? D : E.
// Leaf weights (target 0): A=1, B=2, C=4, D=10, E=20.
void two_trees(NodeBuilder& n) {
  n.attr("nodes_treeids", std::vector<int64_t>{0, 0, 0, 0, 0, 1, 1, 1})
      .attr("nodes_nodeids", std::vector<int64_t>{0, 1, 2, 3, 4, 0, 1, 2})
      .attr("nodes_featureids", std::vector<int64_t>{0, 1, 0, 0, 0, 1, 0, 0})
      .attr("nodes_modes", std::vector<std::string>{"BRANCH_LEQ", "BRANCH_LT", "LEAF", "LEAF", "LEAF", "BRANCH_GTE",
                                                    "LEAF", "LEAF"})
      .attr("nodes_values", std::vector<float>{1, 0, 0, 0, 0, 2, 0, 0})
      .attr("nodes_truenodeids", std::vector<int64_t>{1, 2, 0, 0, 0, 1, 0, 0})
      .attr("nodes_falsenodeids", std::vector<int64_t>{4, 3, 0, 0, 0, 2, 0, 0})
      .attr("nodes_missing_value_tracks_true", std::vector<int64_t>{1, 0, 0, 0, 0, 0, 0, 0})
      .attr("target_treeids", std::vector<int64_t>{0, 0, 0, 1, 1})
      .attr("target_nodeids", std::vector<int64_t>{2, 3, 4, 1, 2})
      .attr("target_ids", std::vector<int64_t>{0, 0, 0, 0, 0})
      .attr("target_weights", std::vector<float>{1, 2, 4, 10, 20});
}

// The two trees walked by hand for one row.
float walk_two_trees(float x0, float x1) {
  float t0 = (x0 <= 1 || std::isnan(x0)) ? (x1 < 0 ? 1.0f : 2.0f) : 4.0f;
  float t1 = x1 >= 2 ? 10.0f : 20.0f;
  return t0 + t1;
}

TEST(MlTreeEnsembleRegressor, WalksTreesSumsAndRoutesNaN) {
  TreeModelBuilder m("TreeEnsembleRegressor", 2);
  two_trees(m.node);
  m.node.attr("base_values", std::vector<float>{0.5f});
  const std::vector<float> xs = {0, -1, 0, 5, 3, 1, kNaN, -2, kNaN, kNaN, 1, 2};
  std::vector<float> expected;
  for (size_t r = 0; r < xs.size() / 2; ++r) {
    // NaN x1: every comparison is false (x1 < 0 false -> B, x1 >= 2 false -> E).
    expected.push_back(walk_two_trees(xs[2 * r], xs[2 * r + 1]) + 0.5f);
  }
  Tensor x = Tensor::from_vector<float>({6, 2}, xs);
  for (auto mode : {KernelMode::Fast, KernelMode::Reference}) {
    Tensor y = run_single(*m.mb.session(options_for(mode)), {{"X", x}});
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({6, 1}, expected), 0, 0));
  }
}

TEST(MlTreeEnsembleRegressor, Aggregates) {
  const std::vector<std::pair<std::string, float>> cases = {
      {"SUM", 1 + 20}, {"AVERAGE", (1 + 20) / 2.0f}, {"MIN", 1}, {"MAX", 20}};
  for (const auto& [agg, want] : cases) {
    TreeModelBuilder m("TreeEnsembleRegressor", 2);
    two_trees(m.node);
    m.node.attr("aggregate_function", agg);
    Tensor y = run_single(*m.mb.session(), {{"X", Tensor::from_vector<float>({1, 2}, {0, -1})}});
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({1, 1}, {want}), 0, 0)) << agg;
  }
}

TEST(MlTreeEnsembleRegressor, ManyRowsFastMatchesReference) {
  TreeModelBuilder m("TreeEnsembleRegressor", 2);
  two_trees(m.node);
  const int64_t rows = 5000;
  std::vector<float> xs(rows * 2);
  for (int64_t i = 0; i < rows * 2; ++i) xs[i] = static_cast<float>((i * 37) % 11) - 4.5f;
  Tensor x = Tensor::from_vector<float>({rows, 2}, xs);
  Tensor fast = run_single(*m.mb.session(options_for(KernelMode::Fast)), {{"X", x}});
  Tensor ref = run_single(*m.mb.session(options_for(KernelMode::Reference)), {{"X", x}});
  EXPECT_TRUE(tensors_near(fast, ref, 0, 0));
  for (int64_t r = 0; r < rows; r += 997)
    EXPECT_EQ(fast.data<float>()[r], walk_two_trees(xs[2 * r], xs[2 * r + 1]));
}

TEST(MlTreeEnsembleClassifier, MulticlassArgmaxAndSoftmax) {
  TreeModelBuilder m("TreeEnsembleClassifier", 1);
  // One stump: x0 <= 0 -> leaf 1 (class weights 0.7, 0.2, 0.1), else leaf 2 (0.1, 0.3, 0.6).
  m.node.attr("nodes_treeids", std::vector<int64_t>{0, 0, 0})
      .attr("nodes_nodeids", std::vector<int64_t>{0, 1, 2})
      .attr("nodes_featureids", std::vector<int64_t>{0, 0, 0})
      .attr("nodes_modes", std::vector<std::string>{"BRANCH_LEQ", "LEAF", "LEAF"})
      .attr("nodes_values", std::vector<float>{0, 0, 0})
      .attr("nodes_truenodeids", std::vector<int64_t>{1, 0, 0})
      .attr("nodes_falsenodeids", std::vector<int64_t>{2, 0, 0})
      .attr("class_treeids", std::vector<int64_t>{0, 0, 0, 0, 0, 0})
      .attr("class_nodeids", std::vector<int64_t>{1, 1, 1, 2, 2, 2})
      .attr("class_ids", std::vector<int64_t>{0, 1, 2, 0, 1, 2})
      .attr("class_weights", std::vector<float>{0.7f, 0.2f, 0.1f, 0.1f, 0.3f, 0.6f})
      .attr("classlabels_int64s", std::vector<int64_t>{5, 6, 7})
      .attr("post_transform", "SOFTMAX");
  auto outs = run_all(*m.mb.session(), {{"X", Tensor::from_vector<float>({2, 1}, {-1, 1})}});
  EXPECT_EQ(outs.at(0).to_int64_vector(), (std::vector<int64_t>{5, 7}));
  auto softmax = [](std::vector<double> v) {
    double z = 0;
    for (double& e : v) z += (e = std::exp(e));
    std::vector<float> out;
    for (double e : v) out.push_back(static_cast<float>(e / z));
    return out;
  };
  std::vector<float> want = softmax({0.7, 0.2, 0.1});
  for (float f : softmax({0.1, 0.3, 0.6})) want.push_back(f);
  EXPECT_TRUE(tensors_near(outs.at(1), Tensor::from_vector<float>({2, 3}, want), 1e-6, 0));
}

TEST(MlTreeEnsembleClassifier, BinaryWithOneClassWeightLogistic) {
  // Gradient-boosting style: only class 0 carries (signed) weights, one base value.
  TreeModelBuilder m("TreeEnsembleClassifier", 1);
  m.node.attr("nodes_treeids", std::vector<int64_t>{0, 0, 0})
      .attr("nodes_nodeids", std::vector<int64_t>{0, 1, 2})
      .attr("nodes_featureids", std::vector<int64_t>{0, 0, 0})
      .attr("nodes_modes", std::vector<std::string>{"BRANCH_LEQ", "LEAF", "LEAF"})
      .attr("nodes_values", std::vector<float>{0, 0, 0})
      .attr("nodes_truenodeids", std::vector<int64_t>{1, 0, 0})
      .attr("nodes_falsenodeids", std::vector<int64_t>{2, 0, 0})
      .attr("class_treeids", std::vector<int64_t>{0, 0})
      .attr("class_nodeids", std::vector<int64_t>{1, 2})
      .attr("class_ids", std::vector<int64_t>{0, 0})
      .attr("class_weights", std::vector<float>{-1.5f, 0.75f})
      .attr("base_values", std::vector<float>{0.25f})
      .attr("classlabels_int64s", std::vector<int64_t>{0, 1})
      .attr("post_transform", "LOGISTIC");
  auto outs = run_all(*m.mb.session(), {{"X", Tensor::from_vector<float>({2, 1}, {-1, 1})}});
  EXPECT_EQ(outs.at(0).to_int64_vector(), (std::vector<int64_t>{0, 1}));
  auto sig = [](double s) { return static_cast<float>(1 / (1 + std::exp(-s))); };
  const double s0 = -1.5 + 0.25, s1 = 0.75 + 0.25;
  EXPECT_TRUE(tensors_near(outs.at(1), Tensor::from_vector<float>({2, 2}, {sig(-s0), sig(s0), sig(-s1), sig(s1)}),
                           1e-6, 0));
}

// --------------------------------------------------------------- errors

std::string creation_error(TreeModelBuilder& m) {
  return error_message([&] { m.mb.session(); });
}

void expect_error(const std::string& msg, const std::string& fragment) {
  EXPECT_NE(msg.find("'trees'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
}

TEST(MlTreeEnsembleErrors, MismatchedAttributeLengths) {
  TreeModelBuilder m("TreeEnsembleRegressor", 2);
  two_trees(m.node);
  m.node.attr("nodes_values", std::vector<float>{1, 0, 0});
  expect_error(creation_error(m), "nodes_values has 3 values but nodes_nodeids has 8");
}

TEST(MlTreeEnsembleErrors, ChildIdNotInTree) {
  TreeModelBuilder m("TreeEnsembleRegressor", 2);
  two_trees(m.node);
  m.node.attr("nodes_falsenodeids", std::vector<int64_t>{4, 3, 0, 0, 0, 9, 0, 0});
  expect_error(creation_error(m), "false child 9, which is not a node of tree 1");
}

TEST(MlTreeEnsembleErrors, WeightOnMissingNodeOrBadTarget) {
  TreeModelBuilder m("TreeEnsembleRegressor", 2);
  two_trees(m.node);
  m.node.attr("target_nodeids", std::vector<int64_t>{2, 3, 4, 1, 7});
  expect_error(creation_error(m), "target_nodeids[4] names node (tree 1, id 7), which does not exist");
  TreeModelBuilder m2("TreeEnsembleRegressor", 2);
  two_trees(m2.node);
  m2.node.attr("target_ids", std::vector<int64_t>{0, 0, 0, 0, 3});
  expect_error(creation_error(m2), "target_ids[4] is 3; expected 0 <= id < 1");
}

TEST(MlTreeEnsembleErrors, CycleIsAnErrorNotAHang) {
  TreeModelBuilder m("TreeEnsembleRegressor", 1);
  // node 1's true child is node 0: 0 -> 1 -> 0 -> ...
  m.node.attr("nodes_treeids", std::vector<int64_t>{0, 0, 0})
      .attr("nodes_nodeids", std::vector<int64_t>{0, 1, 2})
      .attr("nodes_featureids", std::vector<int64_t>{0, 0, 0})
      .attr("nodes_modes", std::vector<std::string>{"BRANCH_LEQ", "BRANCH_LEQ", "LEAF"})
      .attr("nodes_values", std::vector<float>{0, 0, 0})
      .attr("nodes_truenodeids", std::vector<int64_t>{1, 0, 0})
      .attr("nodes_falsenodeids", std::vector<int64_t>{2, 2, 0})
      .attr("target_treeids", std::vector<int64_t>{0})
      .attr("target_nodeids", std::vector<int64_t>{2})
      .attr("target_ids", std::vector<int64_t>{0})
      .attr("target_weights", std::vector<float>{1});
  expect_error(creation_error(m), "reaches branch node #0 twice");
}

TEST(MlTreeEnsembleErrors, DuplicateNodeAndBadModeAndFeatureOutOfRange) {
  TreeModelBuilder m("TreeEnsembleRegressor", 2);
  two_trees(m.node);
  m.node.attr("nodes_nodeids", std::vector<int64_t>{0, 1, 2, 3, 3, 0, 1, 2});
  expect_error(creation_error(m), "node (tree 0, id 3) appears twice");

  TreeModelBuilder m2("TreeEnsembleRegressor", 2);
  two_trees(m2.node);
  m2.node.attr("nodes_modes", std::vector<std::string>{"BRANCH_LEQ", "BRANCH_SOMETIMES", "LEAF", "LEAF", "LEAF",
                                                       "BRANCH_GTE", "LEAF", "LEAF"});
  expect_error(creation_error(m2), "nodes_modes[1] is 'BRANCH_SOMETIMES'");

  // Feature 1 read by the trees but the input has one column: a run-time error.
  TreeModelBuilder m3("TreeEnsembleRegressor", 1);
  two_trees(m3.node);
  auto s = m3.mb.session();
  std::string msg = error_message([&] { run_single(*s, {{"X", Tensor::from_vector<float>({1, 1}, {0})}}); });
  expect_error(msg, "input has 1 features but the trees read feature 1");
}

// TreeEnsemble (ai.onnx.ml 5), one tree of 2 nodes and 3 leaves, with the given
// true-branch arrays and roots; node 1 is BRANCH_MEMBER when `member` (its set
// comes from `members`). Returns the session-creation error ("" for none).
std::string v5_error(std::vector<int64_t> true_ids, std::vector<int64_t> true_leafs, std::vector<int64_t> roots,
                     bool member = false, std::vector<float> members = {}) {
  TreeModelBuilder m("TreeEnsemble", 2, 5);
  m.node.attr("tree_roots", roots)
      .attr("nodes_featureids", std::vector<int64_t>{0, 1})
      .attr("nodes_splits", Tensor::from_vector<float>({2}, {0, 1}))
      .attr("nodes_modes", Tensor::from_vector<uint8_t>({2}, {0, member ? uint8_t{6} : uint8_t{0}}))
      .attr("nodes_truenodeids", true_ids)
      .attr("nodes_trueleafs", true_leafs)
      .attr("nodes_falsenodeids", std::vector<int64_t>{0, 2})
      .attr("nodes_falseleafs", std::vector<int64_t>{1, 1})
      .attr("leaf_targetids", std::vector<int64_t>{0, 0, 0})
      .attr("leaf_weights", Tensor::from_vector<float>({3}, {1, 2, 3}));
  if (!members.empty())
    m.node.attr("membership_values", Tensor::from_vector<float>({static_cast<int64_t>(members.size())}, members));
  return creation_error(m);
}

TEST(MlTreeEnsembleV5, ErrorsNameTheNode) {
  EXPECT_EQ(v5_error({1, 1}, {0, 1}, {0}), "");
  expect_error(v5_error({1, 5}, {0, 1}, {0}), "node 1 has true leaf 5, out of range [0, 3)");
  expect_error(v5_error({1, 1}, {0, 1}, {2}), "tree_roots[0] is 2, out of range [0, 2)");
  // node 1's true child is node 0, its parent: a cycle.
  expect_error(v5_error({1, 0}, {0, 0}, {0}), "reaches branch node #0 twice");
  EXPECT_EQ(v5_error({1, 1}, {0, 1}, {0}, true, {1, 2}), "");
  expect_error(v5_error({1, 1}, {0, 1}, {0}, true), "node 1 is BRANCH_MEMBER but membership_values has only 0 set(s)");
}

TEST(MlTreeEnsembleV5, MemberSetsAndDoubleOutput) {
  ModelBuilder mb{13};
  mb.import_domain("ai.onnx.ml", 5);
  mb.input("X", DType::Float64, {-1, 1});
  mb.output("Y", DType::Float64, {-1, 1});
  // x in {2, 4, 8} ? 0.1 : (x != 3 ? 0.2 : 0.3)
  mb.node("TreeEnsemble", {"X"}, {"Y"})
      .domain("ai.onnx.ml")
      .attr("tree_roots", std::vector<int64_t>{0})
      .attr("nodes_featureids", std::vector<int64_t>{0, 0})
      .attr("nodes_splits", Tensor::from_vector<double>({2}, {0, 3}))
      .attr("nodes_modes", Tensor::from_vector<uint8_t>({2}, {6, 5}))
      .attr("nodes_truenodeids", std::vector<int64_t>{0, 1})
      .attr("nodes_trueleafs", std::vector<int64_t>{1, 1})
      .attr("nodes_falsenodeids", std::vector<int64_t>{1, 2})
      .attr("nodes_falseleafs", std::vector<int64_t>{0, 1})
      .attr("membership_values", Tensor::from_vector<double>({3}, {8, 2, 4}))
      .attr("leaf_targetids", std::vector<int64_t>{0, 0, 0})
      .attr("leaf_weights", Tensor::from_vector<double>({3}, {0.1, 0.2, 0.3}));
  Tensor y = run_single(*mb.session(), {{"X", Tensor::from_vector<double>({5, 1}, {2, 3, 4, 5, 8})}});
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<double>({5, 1}, {0.1, 0.3, 0.1, 0.2, 0.1}), 0, 0));
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
