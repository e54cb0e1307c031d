// sink_reshape_bias (runtime/graph_sinking.h): Add(Reshape(x, s), bias) [-> activation]
// with s keeping x's last dim N and bias varying along the last axis becomes
// Add(x, bias [N]) [-> activation] -> Reshape(s): bit for bit at level 1, and at level 2 the
// MatMul then meets its bias (matmul_add_gemm / gemm_activation). The Keras Dense form
// (tf2onnx's Tensordot: Reshape to rows, MatMul, Reshape back through
// Cast(Concat(Gather(Shape(x)), [N]))) and near-misses; and gemm_activation's MatMul(A 3-D)
// + Add(bias) with no activation (the bias alone into the MatMul epilogue).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

std::vector<std::string> rules_of(const Session& s) {
  std::vector<std::string> out;
  for (const GraphRewrite& r : s.graph_rewrites()) out.push_back(r.rule);
  return out;
}

std::vector<std::string> ops_of(const Session& s) {
  std::vector<std::string> out;
  for (const NodeDescription& n : s.describe().nodes) out.push_back(n.op_type);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Level 1 against level 0, bit for bit; returns the level-1 session.
std::unique_ptr<Session> level1_bit_exact(const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  auto plain = mb.session(opts(ORT_DISABLE_ALL));
  auto basic = mb.session(opts(ORT_ENABLE_BASIC));
  const auto a = run_all(*plain, feeds), b = run_all(*basic, feeds);
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    EXPECT_EQ(a[i].shape(), b[i].shape()) << "output " << i;
    if (a[i].shape() == b[i].shape() && a[i].dtype() == b[i].dtype())
      EXPECT_EQ(std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()), 0) << "output " << i << " not bit-exact";
  }
  return basic;
}

// Keras Dense on [batch (symbolic), 5, 16]: Reshape(X, [-1, 16]) -> MatMul(W [16, 24]) ->
// Reshape(Cast(Concat(Gather(Cast(Shape(X)), [0, 1]), [24]))) -> Add(bias) [-> `act`].
ModelBuilder keras_dense(const std::string& act, const Shape& bias_shape = {24}, int64_t last_entry = 24) {
  ModelBuilder mb(14);
  mb.input("X", DType::Float32, {-1, 5, 16});
  mb.initializer("rows", Tensor::from_vector<int64_t>({2}, {-1, 16}));
  mb.initializer("W", random_tensor(DType::Float32, {16, 24}, 1, -1.0, 1.0));
  mb.initializer("lead", Tensor::from_vector<int64_t>({2}, {0, 1}));
  mb.initializer("n", Tensor::from_vector<int32_t>({1}, {static_cast<int32_t>(last_entry)}));
  mb.initializer("bias", random_tensor(DType::Float32, bias_shape, 2));
  mb.node("Reshape", {"X", "rows"}, {"R"}).name("to_rows");
  mb.node("MatMul", {"R", "W"}, {"M"}).name("dense");
  mb.node("Shape", {"X"}, {"sh"}).name("shape");
  mb.node("Cast", {"sh"}, {"sh32"}).name("cast32").attr("to", int64_t{6});
  mb.node("Gather", {"sh32", "lead"}, {"bs"}).name("gather");
  mb.node("Concat", {"bs", "n"}, {"s32"}).name("concat").attr("axis", int64_t{0});
  mb.node("Cast", {"s32"}, {"s"}).name("cast64").attr("to", int64_t{7});
  mb.node("Reshape", {"M", "s"}, {"T"}).name("back_to_3d");
  mb.node("Add", {"T", "bias"}, {act.empty() ? "Y" : "A"}).name("bias_add");
  if (!act.empty()) mb.node(act, {"A"}, {"Y"}).name("act");
  mb.output("Y");
  return mb;
}

const Tensor kX = random_tensor(DType::Float32, {3, 5, 16}, 7, -2.0, 2.0);

TEST(ReshapeBiasSinking, KerasDenseReluBecomesOneGemm) {
  for (const Shape& bias_shape : {Shape{24}, Shape{1, 24}, Shape{1, 1, 24}}) {
    const ModelBuilder mb = keras_dense("Relu", bias_shape);
    auto basic = level1_bit_exact(mb, {{"X", kX}});
    EXPECT_TRUE(has(rules_of(*basic), "sink_reshape_bias")) << bias_shape.size();
    const auto ops = ops_of(*basic);
    ASSERT_FALSE(ops.empty());
    EXPECT_EQ(ops.back(), "Reshape") << "the Reshape moves below the Relu";
    // Level 2: MatMul(2-D rows) + Add -> Gemm (matmul_add_gemm), then Relu into its epilogue.
    check_fusion(mb, {{"X", kX}}, 16);
    auto all = mb.session(opts(ORT_ENABLE_ALL));
    const auto rules = rules_of(*all), fused_ops = ops_of(*all);
    EXPECT_TRUE(has(rules, "matmul_add_gemm")) << bias_shape.size();
    EXPECT_TRUE(has(rules, "gemm_activation")) << bias_shape.size();
    EXPECT_FALSE(has(fused_ops, "Add"));
    EXPECT_FALSE(has(fused_ops, "Relu"));
    EXPECT_FALSE(has(fused_ops, "MatMul"));
  }
}

TEST(ReshapeBiasSinking, WithoutActivationTheAddStillMoves) {
  const ModelBuilder mb = keras_dense("");
  auto basic = level1_bit_exact(mb, {{"X", kX}});
  EXPECT_TRUE(has(rules_of(*basic), "sink_reshape_bias"));
  auto all = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_TRUE(has(rules_of(*all), "matmul_add_gemm"));
  EXPECT_FALSE(has(ops_of(*all), "Add"));
  check_fusion(mb, {{"X", kX}}, 16);
}

// A constant s: MatMul [2, 6, 16] x [16, 24] -> Reshape [12, 24] -> Add(bias) -> Sigmoid -> Tanh.
// Both unary ops move above the Reshape; the 3-D MatMul takes bias and Sigmoid (gemm_activation).
TEST(ReshapeBiasSinking, ConstantShapeAndAUnaryChain) {
  ModelBuilder mb(14);
  mb.input("X", DType::Float32, {2, 6, 16});
  mb.initializer("W", random_tensor(DType::Float32, {16, 24}, 1, -1.0, 1.0));
  mb.initializer("s", Tensor::from_vector<int64_t>({2}, {12, 24}));
  mb.initializer("bias", random_tensor(DType::Float32, {24}, 2));
  mb.node("MatMul", {"X", "W"}, {"M"}).name("mm");
  mb.node("Reshape", {"M", "s"}, {"T"}).name("flatten");
  mb.node("Add", {"bias", "T"}, {"A"}).name("bias_add");  // the bias first
  mb.node("Sigmoid", {"A"}, {"G"}).name("sigmoid");
  mb.node("Tanh", {"G"}, {"Y"}).name("tanh");
  mb.output("Y", DType::Float32, {12, 24}, true);
  const auto x = random_tensor(DType::Float32, {2, 6, 16}, 3, -2.0, 2.0);
  auto basic = level1_bit_exact(mb, {{"X", x}});
  EXPECT_EQ(ops_of(*basic), (std::vector<std::string>{"MatMul", "Add", "Sigmoid", "Tanh", "Reshape"}));
  EXPECT_EQ(basic->describe().outputs.at(0).name, "Y");
  EXPECT_EQ(check_fusion(mb, {{"X", x}}, 16), 3u);  // MatMul(bias, Sigmoid) -> Tanh -> Reshape
}

struct NearMiss {
  const char* why;
  Shape x_shape;        // X of MatMul(X, W [16, 24]) unless x_is_input
  std::vector<int64_t> s;
  Shape bias_shape;
  bool x_is_input = false;      // X fed straight to the Reshape: its last dim from the declaration only
  bool second_reader = false;   // the Reshape's output is also a graph output
};

TEST(ReshapeBiasSinking, NearMissesStay) {
  const std::vector<NearMiss> cases = {
      {"the Reshape changes the last axis", {2, 6, 16}, {12, 6, 4}, {4}},
      {"the bias varies along another axis", {2, 6, 16}, {2, 6, 24}, {6, 24}},
      {"the bias has a higher rank than the Reshape's output", {2, 6, 16}, {12, 24}, {1, 1, 24}},
      {"the Reshape's output has a second reader", {2, 6, 16}, {12, 24}, {24}, false, true},
      {"X's last dim is not known", {2, 6, -1}, {12, 24}, {24}, true},
  };
  for (const NearMiss& c : cases) {
    ModelBuilder mb(14);
    mb.input("X", DType::Float32, c.x_shape);
    mb.initializer("W", random_tensor(DType::Float32, {16, 24}, 1, -1.0, 1.0));
    mb.initializer("s", Tensor::from_vector<int64_t>({static_cast<int64_t>(c.s.size())}, c.s));
    mb.initializer("bias", random_tensor(DType::Float32, c.bias_shape, 2));
    if (!c.x_is_input) mb.node("MatMul", {"X", "W"}, {"M"}).name("mm");
    mb.node("Reshape", {c.x_is_input ? "X" : "M", "s"}, {"T"}).name("reshape");
    mb.node("Add", {"T", "bias"}, {"A"}).name("bias_add");
    mb.node("Relu", {"A"}, {"Y"}).name("relu");
    mb.output("Y");
    if (c.second_reader) mb.output("T");
    Shape actual = c.x_is_input ? Shape{2, 6, 24} : c.x_shape;
    auto basic = level1_bit_exact(mb, {{"X", random_tensor(DType::Float32, actual, 3)}});
    EXPECT_FALSE(has(rules_of(*basic), "sink_reshape_bias")) << c.why;
    EXPECT_EQ(ops_of(*basic).back(), "Relu") << c.why;
  }
}

// MatMul(A 3-D) + Add(bias) with nothing fusable after it: matmul_add_gemm needs A 2-D, so
// gemm_activation puts the bias alone into the MatMul epilogue (one node).
TEST(ReshapeBiasSinking, MatMul3dBiasWithoutActivationIsOneNode) {
  for (const Shape& bias_shape : {Shape{24}, Shape{1, 1, 24}}) {
    ModelBuilder mb(14);
    mb.input("X", DType::Float32, {2, 9, 16});
    mb.input("R", DType::Float32, {2, 9, 24});
    mb.initializer("W", random_tensor(DType::Float32, {16, 24}, 1, -1.0, 1.0));
    mb.initializer("bias", random_tensor(DType::Float32, bias_shape, 2));
    mb.node("MatMul", {"X", "W"}, {"M"}).name("mm");
    mb.node("Add", {"M", "bias"}, {"A"}).name("bias_add");
    mb.node("Add", {"A", "R"}, {"Y"}).name("residual");
    mb.output("Y");
    const std::vector<std::pair<std::string, Tensor>> feeds = {
        {"X", random_tensor(DType::Float32, {2, 9, 16}, 3, -2.0, 2.0)}, {"R", random_tensor(DType::Float32, {2, 9, 24}, 4)}};
    EXPECT_EQ(check_fusion(mb, feeds, 16), 2u) << bias_shape.size();
    EXPECT_EQ(check_fusion(mb, feeds, 16, 2), 2u) << bias_shape.size() << ", 2 threads";
    auto all = mb.session(opts(ORT_ENABLE_ALL));
    EXPECT_EQ(rules_of(*all), std::vector<std::string>{"gemm_activation"});
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
