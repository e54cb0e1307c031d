// Swish with a slope in the producer epilogues (runtime/graph_fusion.cc): QuickGelu written
// out, Mul(x, Sigmoid(Mul(x, c))) with c a one-element float32 constant (operand orders
// free), and the opset-24 Swish op with alpha, after a Conv (dense and depthwise, rule
// conv_activation_extra), a Gemm and a MatMul + bias (gemm_activation). The fused graph
// equals the unfused one (fast and reference kernels, 1 and 2 threads); near-misses
// (c not one element or of rank > 1, x with a third reader, the Sigmoid over another
// tensor, an intermediate read twice) stay unfused.
#include <gtest/gtest.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct QuickGelu {
  float alpha = 1.702f;
  Shape c_shape = {};         // the constant's shape (one element unless a near-miss)
  bool c_first = false;       // Mul(c, x) instead of Mul(x, c)
  bool gate_first = false;    // Mul(s, x) instead of Mul(x, s)
  std::string scaled = "";    // the tensor the inner Mul scales ("": the producer's output)
  bool op = false;            // the opset-24 Swish op instead of the written-out form
};

// Adds the activation reading `in`, writing "Y".
void add_quick_gelu(ModelBuilder& mb, const QuickGelu& q, const std::string& in) {
  if (q.op) {
    mb.node("Swish", {in}, {"Y"}).name("swish").attr("alpha", q.alpha);
    return;
  }
  int64_t n = 1;
  for (int64_t d : q.c_shape) n *= d;
  mb.initializer("c", Tensor::from_vector<float>(q.c_shape, std::vector<float>(n, q.alpha)));
  const std::string x = q.scaled.empty() ? in : q.scaled;
  mb.node("Mul", q.c_first ? std::vector<std::string>{"c", x} : std::vector<std::string>{x, "c"}, {"T"}).name("scale");
  mb.node("Sigmoid", {"T"}, {"S"}).name("sig");
  mb.node("Mul", q.gate_first ? std::vector<std::string>{"S", in} : std::vector<std::string>{in, "S"}, {"Y"})
      .name("gate");
}

int opset(const QuickGelu& q) { return q.op ? 24 : 14; }

ModelBuilder conv_model(const QuickGelu& q, bool depthwise) {
  ModelBuilder mb(opset(q));
  const int64_t C = depthwise ? 8 : 4, Cin = depthwise ? 8 : 3;
  mb.input("X", DType::Float32, {1, Cin, 9, 40});
  if (!q.scaled.empty()) mb.input(q.scaled, DType::Float32, {1, C, 9, 40});
  mb.initializer("W", random_tensor(DType::Float32, {C, depthwise ? 1 : Cin, 3, 3}, 1, -2.0, 2.0));
  mb.initializer("B", random_tensor(DType::Float32, {C}, 2));
  auto conv = mb.node("Conv", {"X", "W", "B"}, {"C"}).name("c0").attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  if (depthwise) conv.attr("group", C);
  add_quick_gelu(mb, q, "C");
  mb.output("Y");
  return mb;
}

ModelBuilder gemm_model(const QuickGelu& q) {
  ModelBuilder mb(opset(q));
  mb.input("X", DType::Float32, {37, 20});
  mb.initializer("W", random_tensor(DType::Float32, {50, 20}, 1, -2.0, 2.0));
  mb.initializer("B", random_tensor(DType::Float32, {50}, 2));
  mb.node("Gemm", {"X", "W", "B"}, {"G"}).name("g0").attr("transB", 1);
  add_quick_gelu(mb, q, "G");
  mb.output("Y");
  return mb;
}

// ppocr_v4_rec's MLP: MatMul [2, 9, 24] x [24, 48] -> Add(bias) -> QuickGelu.
ModelBuilder matmul_model(const QuickGelu& q) {
  ModelBuilder mb(opset(q));
  mb.input("X", DType::Float32, {2, 9, 24});
  mb.initializer("W", random_tensor(DType::Float32, {24, 48}, 1, -1.0, 1.0));
  mb.initializer("bias", random_tensor(DType::Float32, {48}, 2));
  mb.node("MatMul", {"X", "W"}, {"M"}).name("mm");
  mb.node("Add", {"M", "bias"}, {"A"}).name("add");
  add_quick_gelu(mb, q, "A");
  mb.output("Y");
  return mb;
}

Tensor conv_x(int64_t cin) { return random_tensor(DType::Float32, {1, cin, 9, 40}, 9, -2.0, 2.0); }

// The written-out forms in every operand order, c a scalar or [1], and the Swish op.
std::vector<QuickGelu> fusable() {
  std::vector<QuickGelu> v;
  for (bool c_first : {false, true})
    for (bool gate_first : {false, true}) {
      QuickGelu q;
      q.c_first = c_first, q.gate_first = gate_first;
      v.push_back(q);
    }
  QuickGelu rank1;
  rank1.c_shape = {1}, rank1.alpha = -0.75f;
  v.push_back(rank1);
  QuickGelu op;
  op.op = true;
  v.push_back(op);
  return v;
}

TEST(SwishAlphaFusion, ConvFusesIntoOneNode) {
  for (const QuickGelu& q : fusable()) {
    EXPECT_EQ(check_fusion(conv_model(q, false), {{"X", conv_x(3)}}, 27), 1u) << "op=" << q.op;
    EXPECT_EQ(check_fusion(conv_model(q, false), {{"X", conv_x(3)}}, 27, 2), 1u) << "op=" << q.op << ", 2 threads";
  }
}

TEST(SwishAlphaFusion, DepthwiseConvFusesIntoOneNode) {
  for (const QuickGelu& q : fusable()) EXPECT_EQ(check_fusion(conv_model(q, true), {{"X", conv_x(8)}}, 9), 1u);
}

TEST(SwishAlphaFusion, GemmFusesIntoOneNode) {
  const auto x = random_tensor(DType::Float32, {37, 20}, 3, -2.0, 2.0);
  for (const QuickGelu& q : fusable()) EXPECT_EQ(check_fusion(gemm_model(q), {{"X", x}}, 20), 1u) << "op=" << q.op;
}

TEST(SwishAlphaFusion, MatMulBiasFusesIntoOneNode) {
  const auto x = random_tensor(DType::Float32, {2, 9, 24}, 3, -2.0, 2.0);
  for (const QuickGelu& q : fusable()) {
    EXPECT_EQ(check_fusion(matmul_model(q), {{"X", x}}, 24), 1u) << "op=" << q.op;
    EXPECT_EQ(check_fusion(matmul_model(q), {{"X", x}}, 24, 2), 1u) << "op=" << q.op << ", 2 threads";
  }
}

TEST(SwishAlphaFusion, ConstantOfSeveralElementsIsNotSwish) {
  QuickGelu q;
  q.c_shape = {4, 1, 1};  // one slope per channel: not one alpha
  EXPECT_EQ(check_fusion(conv_model(q, false), {{"X", conv_x(3)}}, 27), 4u);
}

TEST(SwishAlphaFusion, OneElementConstantOfHighRankIsNotSwish) {
  QuickGelu q;
  q.c_shape = {1, 1, 1};  // would broadcast a rank-2 Gemm output to rank 3
  EXPECT_EQ(check_fusion(gemm_model(q), {{"X", random_tensor(DType::Float32, {37, 20}, 3)}}, 20), 4u);
}

TEST(SwishAlphaFusion, InputWithAThirdReaderIsNotSwish) {
  ModelBuilder mb = gemm_model(QuickGelu{});
  mb.output("G");  // the Gemm's output is also a graph output
  EXPECT_EQ(check_fusion(mb, {{"X", random_tensor(DType::Float32, {37, 20}, 3)}}, 20), 4u);
  ModelBuilder mm = matmul_model(QuickGelu{});
  mm.output("A");  // the biased MatMul output too: only MatMul + Add fuse
  EXPECT_EQ(check_fusion(mm, {{"X", random_tensor(DType::Float32, {2, 9, 24}, 3)}}, 24), 4u);
}

TEST(SwishAlphaFusion, IntermediateReadTwiceIsNotSwish) {
  ModelBuilder mb = conv_model(QuickGelu{}, false);
  mb.output("T");  // the scaled input is also a graph output
  EXPECT_EQ(check_fusion(mb, {{"X", conv_x(3)}}, 27), 4u);
}

TEST(SwishAlphaFusion, SigmoidOfAnotherScaledTensorIsNotSwish) {
  // Mul(C, Sigmoid(Mul(X2, c))): the gate is not the Conv's own output.
  QuickGelu q;
  q.scaled = "X2";
  EXPECT_EQ(check_fusion(conv_model(q, false), {{"X", conv_x(3)}, {"X2", conv_x(4)}}, 27), 4u);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
