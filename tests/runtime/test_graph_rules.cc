// The optimizer's rule table (runtime/graph_optimizer.h): each basic rule on its
// pattern (the node disappears, outputs equal the unoptimized graph's bit for bit) and
// on near-misses that must stay as they are; the levels (which rules each applies);
// MatMul + Add -> Gemm. The fusions' own tests are in test_graph_fusion.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

// Runs `mb` at level 0 and at `level`; outputs must be bit-identical. Returns the
// optimized session's rewrites' rule names.
std::vector<std::string> rules_applied(const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds,
                                       size_t* nodes_after = nullptr, int level = ORT_ENABLE_BASIC) {
  auto plain = mb.session(opts(ORT_DISABLE_ALL));
  auto optimized = mb.session(opts(level));
  const auto a = run_all(*plain, feeds), b = run_all(*optimized, feeds);
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    EXPECT_EQ(a[i].shape(), b[i].shape()) << "output " << i;
    EXPECT_EQ(a[i].dtype(), b[i].dtype()) << "output " << i;
    if (a[i].shape() == b[i].shape() && a[i].dtype() == b[i].dtype()) {
      EXPECT_EQ(std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()), 0) << "output " << i << " not bit-exact";
    }
  }
  if (nodes_after) *nodes_after = optimized->describe().nodes.size();
  std::vector<std::string> names;
  for (const GraphRewrite& r : optimized->graph_rewrites()) names.push_back(r.rule);
  return names;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

const Tensor kX = random_tensor(DType::Float32, {2, 3, 4}, 1);

TEST(GraphRules, IdentityEliminated) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4});
  mb.node("Identity", {"X"}, {"I"}).name("id");
  mb.node("Relu", {"I"}, {"Y"}).name("relu");
  mb.output("Y");
  size_t nodes = 0;
  EXPECT_TRUE(has(rules_applied(mb, {{"X", kX}}, &nodes), "eliminate_identity"));
  EXPECT_EQ(nodes, 1u);
}

TEST(GraphRules, IdentityBetweenGraphInputAndOutputKept) {
  // Y must still be produced under its own name, and X is a graph input: nothing can take Y's name.
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4});
  mb.node("Identity", {"X"}, {"Y"}).name("id");
  mb.output("Y");
  size_t nodes = 0;
  EXPECT_FALSE(has(rules_applied(mb, {{"X", kX}}, &nodes), "eliminate_identity"));
  EXPECT_EQ(nodes, 1u);
}

TEST(GraphRules, IdentityIntoGraphOutputRenamesProducer) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4});
  mb.node("Relu", {"X"}, {"R"}).name("relu");
  mb.node("Identity", {"R"}, {"Y"}).name("id");
  mb.output("Y");
  size_t nodes = 0;
  EXPECT_TRUE(has(rules_applied(mb, {{"X", kX}}, &nodes), "eliminate_identity"));
  EXPECT_EQ(nodes, 1u);
}

// A Dropout that the rule leaves in place stays a node of the session (Dropout + Neg).
bool dropout_kept(const ModelBuilder& mb) { return mb.session(opts(ORT_ENABLE_ALL))->describe().nodes.size() == 2; }

TEST(GraphRules, DropoutInInference) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4});
  mb.initializer("ratio", Tensor::scalar<float>(0.5f));
  mb.node("Dropout", {"X", "ratio"}, {"D"}).name("drop");
  mb.node("Neg", {"D"}, {"Y"}).name("neg");
  mb.output("Y");
  auto s = mb.session(opts(ORT_ENABLE_BASIC));
  ASSERT_EQ(s->describe().nodes.size(), 1u);
  EXPECT_EQ(s->graph_rewrites().at(0).rule, "eliminate_dropout");
  const Tensor y = run_single(*s, {{"X", kX}});
  for (int64_t i = 0; i < kX.numel(); ++i) EXPECT_EQ(y.data<float>()[i], -kX.data<float>()[i]);
}

TEST(GraphRules, DropoutNearMisses) {
  // The mask is read, or training_mode is a graph input (it may be true): kept.
  ModelBuilder mask(13);
  mask.input("X", DType::Float32, {2, 3, 4});
  mask.node("Dropout", {"X"}, {"D", "M"}).name("drop");
  mask.node("Neg", {"D"}, {"Y"}).name("neg");
  mask.output("Y");
  mask.output("M");
  EXPECT_TRUE(dropout_kept(mask));
  ModelBuilder training(13);
  training.input("X", DType::Float32, {2, 3, 4});
  training.input("T", DType::Bool, {});
  training.node("Dropout", {"X", "", "T"}, {"D"}).name("drop");
  training.node("Neg", {"D"}, {"Y"}).name("neg");
  training.output("Y");
  EXPECT_TRUE(dropout_kept(training));
}

ModelBuilder cast_model(DType to) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4});
  mb.node("Cast", {"X"}, {"C"}).name("cast").attr("to", static_cast<int64_t>(to));
  mb.node("Neg", {"C"}, {"Y"}).name("neg");
  mb.output("Y");
  return mb;
}

TEST(GraphRules, NoOpCast) {
  size_t nodes = 0;
  EXPECT_TRUE(has(rules_applied(cast_model(DType::Float32), {{"X", kX}}, &nodes), "eliminate_noop_cast"));
  EXPECT_EQ(nodes, 1u);
  EXPECT_FALSE(has(rules_applied(cast_model(DType::Float64), {{"X", kX}}, &nodes), "eliminate_noop_cast"));
  EXPECT_EQ(nodes, 2u);
}

ModelBuilder reshape_model(const std::vector<int64_t>& shape, bool symbolic_input = false) {
  ModelBuilder mb(14);
  mb.input("X", DType::Float32, symbolic_input ? Shape{-1, 3, 4} : Shape{2, 3, 4});
  mb.initializer("s", Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size())}, shape));
  mb.node("Reshape", {"X", "s"}, {"R"}).name("reshape");
  mb.node("Neg", {"R"}, {"Y"}).name("neg");
  mb.output("Y");
  return mb;
}

TEST(GraphRules, NoOpReshape) {
  size_t nodes = 0;
  EXPECT_TRUE(has(rules_applied(reshape_model({2, 3, 4}), {{"X", kX}}, &nodes), "eliminate_noop_reshape"));
  EXPECT_EQ(nodes, 1u);
  EXPECT_TRUE(has(rules_applied(reshape_model({0, 3, 4}), {{"X", kX}}, &nodes), "eliminate_noop_reshape"));
  // Near-misses: another shape; -1 (left to the kernel); the input's shape not fixed.
  EXPECT_FALSE(has(rules_applied(reshape_model({2, 12}), {{"X", kX}}, &nodes), "eliminate_noop_reshape"));
  EXPECT_FALSE(has(rules_applied(reshape_model({2, -1, 4}), {{"X", kX}}), "eliminate_noop_reshape"));
  EXPECT_FALSE(has(rules_applied(reshape_model({2, 3, 4}, true), {{"X", kX}}), "eliminate_noop_reshape"));
}

ModelBuilder two_reshapes(const std::vector<int64_t>& outer) {
  ModelBuilder mb(14);
  mb.input("X", DType::Float32, {-1, 3, 4});
  mb.initializer("s1", Tensor::from_vector<int64_t>({2}, {6, 4}));
  mb.initializer("s2", Tensor::from_vector<int64_t>({static_cast<int64_t>(outer.size())}, outer));
  mb.node("Reshape", {"X", "s1"}, {"R1"}).name("r1");
  mb.node("Reshape", {"R1", "s2"}, {"Y"}).name("r2");
  mb.output("Y");
  return mb;
}

TEST(GraphRules, CollapseReshapes) {
  size_t nodes = 0;
  EXPECT_TRUE(has(rules_applied(two_reshapes({4, -1}), {{"X", kX}}, &nodes), "collapse_reshapes"));
  EXPECT_EQ(nodes, 1u);
  // A 0 copies a dimension of the intermediate [6, 4]: not the same from X [2, 3, 4].
  EXPECT_FALSE(has(rules_applied(two_reshapes({0, 4}), {{"X", kX}}, &nodes), "collapse_reshapes"));
  EXPECT_EQ(nodes, 2u);
}

ModelBuilder two_transposes(const std::vector<int64_t>& p1, const std::vector<int64_t>& p2, bool share = false) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4});
  mb.node("Transpose", {"X"}, {"T1"}).name("t1").attr("perm", p1);
  mb.node("Transpose", {"T1"}, {"T2"}).name("t2").attr("perm", p2);
  mb.node("Neg", {"T2"}, {"Y"}).name("neg");
  mb.output("Y");
  if (share) {
    mb.node("Abs", {"T1"}, {"Z"}).name("abs");
    mb.output("Z");
  }
  return mb;
}

TEST(GraphRules, TransposePairs) {
  size_t nodes = 0;
  EXPECT_TRUE(has(rules_applied(two_transposes({0, 2, 1}, {0, 2, 1}), {{"X", kX}}, &nodes), "cancel_transposes"));
  EXPECT_EQ(nodes, 1u);  // both gone
  EXPECT_TRUE(has(rules_applied(two_transposes({1, 0, 2}, {0, 2, 1}), {{"X", kX}}, &nodes), "cancel_transposes"));
  EXPECT_EQ(nodes, 2u);  // one composed Transpose
  // The first Transpose has another reader: it stays, the second reads X directly.
  EXPECT_TRUE(has(rules_applied(two_transposes({0, 2, 1}, {0, 2, 1}, true), {{"X", kX}}, &nodes), "cancel_transposes"));
  EXPECT_EQ(nodes, 3u);
}

ModelBuilder shape_model(bool fixed) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, fixed ? Shape{2, 3, 4} : Shape{-1, 3, 4});
  mb.input("Z", DType::Float32, {24});
  mb.node("Shape", {"X"}, {"S"}).name("shape");
  mb.node("Reshape", {"Z", "S"}, {"Y"}).name("reshape");
  mb.output("Y");
  return mb;
}

TEST(GraphRules, ShapeOfFixedShapeFolded) {
  const Tensor z = random_tensor(DType::Float32, {24}, 2);
  size_t nodes = 0;
  EXPECT_TRUE(has(rules_applied(shape_model(true), {{"X", kX}, {"Z", z}}, &nodes), "fold_known_shapes"));
  EXPECT_EQ(nodes, 1u);
  EXPECT_FALSE(has(rules_applied(shape_model(false), {{"X", kX}, {"Z", z}}, &nodes), "fold_known_shapes"));
  EXPECT_EQ(nodes, 2u);
}

TEST(GraphRules, DeadNodesRemoved) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4});
  mb.node("Abs", {"X"}, {"A"}).name("unused_abs");
  mb.node("Neg", {"A"}, {"B"}).name("unused_neg");
  mb.node("Relu", {"X"}, {"Y"}).name("relu");
  mb.output("Y");
  size_t nodes = 0;
  const auto r = rules_applied(mb, {{"X", kX}}, &nodes);
  EXPECT_EQ(std::count(r.begin(), r.end(), "eliminate_dead_nodes"), 2);
  EXPECT_EQ(nodes, 1u);
}

ModelBuilder matmul_add(const Shape& x_shape, const Shape& c_shape) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, x_shape);
  mb.initializer("W", random_tensor(DType::Float32, {8, 5}, 3));
  mb.initializer("C", random_tensor(DType::Float32, c_shape, 4));
  mb.node("MatMul", {"X", "W"}, {"M"}).name("mm");
  mb.node("Add", {"M", "C"}, {"Y"}).name("add");
  mb.output("Y");
  return mb;
}

TEST(GraphRules, MatMulAddBecomesGemm) {
  const Tensor x = random_tensor(DType::Float32, {4, 8}, 5);
  for (const Shape& c : {Shape{5}, Shape{1, 5}, Shape{1}}) {
    auto s = matmul_add({4, 8}, c).session(opts(ORT_ENABLE_EXTENDED));
    ASSERT_EQ(s->describe().nodes.size(), 1u);
    EXPECT_EQ(s->describe().nodes[0].op_type, "Gemm");
    EXPECT_EQ(check_fusion(matmul_add({4, 8}, c), {{"X", x}}, 8), 1u);
  }
  // Near-misses: X not known to be 2-D (Gemm needs 2-D A: gemm_activation puts the bias
  // into the MatMul instead); C varies along rows.
  const auto not_2d = matmul_add({-1, 4, 8}, {5}).session(opts(ORT_ENABLE_ALL))->describe();
  ASSERT_EQ(not_2d.nodes.size(), 1u);
  EXPECT_EQ(not_2d.nodes[0].op_type, "MatMul");
  EXPECT_EQ(matmul_add({4, 8}, {4, 5}).session(opts(ORT_ENABLE_ALL))->describe().nodes.size(), 2u);
  // Level 1 applies no fusion.
  EXPECT_EQ(matmul_add({4, 8}, {5}).session(opts(ORT_ENABLE_BASIC))->describe().nodes.size(), 2u);
}

// ReduceMean and ReduceMax of X (CBAM's channel pooling, as in small.onnx), then Concat.
ModelBuilder mean_max(const Shape& x, int64_t mean_axis, int64_t max_axis, int64_t keep_max = 1, int opset = 13) {
  ModelBuilder mb(opset);
  mb.input("X", DType::Float32, x);
  if (opset >= 18) {
    mb.initializer("a_mean", Tensor::from_vector<int64_t>({1}, {mean_axis}));
    mb.initializer("a_max", Tensor::from_vector<int64_t>({1}, {max_axis}));
    mb.node("ReduceMax", {"X", "a_max"}, {"MX"}).name("rmax").attr("keepdims", keep_max);
    mb.node("ReduceMean", {"X", "a_mean"}, {"ME"}).name("rmean");
  } else {
    mb.node("ReduceMax", {"X"}, {"MX"}).name("rmax").attr("axes", std::vector<int64_t>{max_axis}).attr("keepdims", keep_max);
    mb.node("ReduceMean", {"X"}, {"ME"}).name("rmean").attr("axes", std::vector<int64_t>{mean_axis});
  }
  mb.output("ME");
  mb.output("MX");
  return mb;
}

TEST(GraphRules, ReduceMeanAndMaxInOnePass) {
  for (const Shape& x : {Shape{2, 64, 7, 9}, Shape{3, 300, 5}, Shape{4, 200}}) {
    const auto feed = random_tensor(DType::Float32, x, 12);
    for (int64_t axis : {int64_t{1}, int64_t{-1}})
      for (int opset : {13, 18}) {
        const int64_t n = axis == 1 ? x[1] : x.back();
        EXPECT_EQ(check_fusion(mean_max(x, axis, axis, 1, opset), {{"X", feed}}, n), 1u)
            << shape_to_string(x) << " axis " << axis << " opset " << opset;
        auto s = mean_max(x, axis, axis, 1, opset).session(opts(ORT_ENABLE_ALL, KernelMode::Fast, 2));
        EXPECT_EQ(s->describe().nodes.at(0).op_type, "ReduceMeanMax");
      }
  }
  // Near-misses: other axes, other keepdims, a rank unknown for a negative axis.
  const auto feed = random_tensor(DType::Float32, {2, 6, 5}, 13);
  EXPECT_EQ(check_fusion(mean_max({2, 6, 5}, 1, 2), {{"X", feed}}, 6), 2u);
  EXPECT_EQ(check_fusion(mean_max({2, 6, 5}, 1, 1, 0), {{"X", feed}}, 6), 2u);
  ModelBuilder unknown_rank(13);
  unknown_rank.input("X", DType::Float32, {}, false);
  unknown_rank.node("ReduceMax", {"X"}, {"MX"}).name("rmax").attr("axes", std::vector<int64_t>{-1});
  unknown_rank.node("ReduceMean", {"X"}, {"ME"}).name("rmean").attr("axes", std::vector<int64_t>{-1});
  unknown_rank.output("ME");
  unknown_rank.output("MX");
  EXPECT_EQ(unknown_rank.session(opts(ORT_ENABLE_ALL))->describe().nodes.size(), 2u);
}

TEST(GraphRules, ReduceMeanMaxPropagatesNaNAsReduceMax) {
  Tensor x = random_tensor(DType::Float32, {1, 4, 3}, 14);
  x.mutable_data<float>()[5] = std::numeric_limits<float>::quiet_NaN();  // column (0, 1, 2) of axis 1
  auto plain = mean_max({1, 4, 3}, 1, 1).session(opts(ORT_DISABLE_ALL));
  auto fused = mean_max({1, 4, 3}, 1, 1).session(opts(ORT_ENABLE_ALL));
  const auto a = run_all(*plain, {{"X", x}}), b = run_all(*fused, {{"X", x}});
  for (size_t k = 0; k < 2; ++k)
    for (int64_t i = 0; i < 3; ++i) {
      const float u = a[k].data<float>()[i], v = b[k].data<float>()[i];
      EXPECT_TRUE((std::isnan(u) && std::isnan(v)) || u == v) << k << " " << i << ": " << u << " vs " << v;
    }
}

TEST(GraphRules, LevelsMatchTheTable) {
  // Every rule has a level of onnxruntime's enum, basic rules come before extended ones,
  // and rules saved as ONNX come before those that are not.
  const auto rules = graph_optimization_rules();
  ASSERT_FALSE(rules.empty());
  int last_level = 0;
  bool seen_private = false;
  for (const auto& r : rules) {
    EXPECT_TRUE(r.level == ORT_ENABLE_BASIC || r.level == ORT_ENABLE_EXTENDED || r.level == ORT_ENABLE_LAYOUT) << r.name;
    EXPECT_GE(r.level, last_level) << r.name;
    last_level = r.level;
    EXPECT_FALSE(seen_private && r.saved_as_onnx) << r.name << " comes after an onnxmini-only rule";
    seen_private = seen_private || !r.saved_as_onnx;
    EXPECT_FALSE(r.pattern.empty()) << r.name;
  }
  EXPECT_EQ(SessionOptions{}.graph_optimization_level, ORT_ENABLE_ALL);  // onnxruntime's default
}

TEST(GraphRules, NegativeLevelRejected) {
  SessionOptions o;
  o.graph_optimization_level = -1;
  try {
    cast_model(DType::Float32).session(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("graph_optimization_level -1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
