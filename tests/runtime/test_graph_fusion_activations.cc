// conv_activation_extra and gemm_activation with HardSigmoid, HardSwish and SiLU
// written as Mul(x, Sigmoid(x)) (runtime/graph_fusion.cc): the fused graph equals
// the unfused one (fast and reference kernels, 1 and 2 threads) on a dense Conv,
// a depthwise Conv (its post-pass) and a Gemm; near-misses stay unfused.
#include <gtest/gtest.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

// Adds `act` reading `in`, writing "Y". "SiLU" / "SiLU_swapped": Mul(in, Sigmoid(in))
// with the operands in either order.
void add_activation(ModelBuilder& mb, const std::string& act, const std::string& in) {
  if (act == "SiLU" || act == "SiLU_swapped") {
    mb.node("Sigmoid", {in}, {"S"}).name("sig");
    if (act == "SiLU") mb.node("Mul", {in, "S"}, {"Y"}).name("mul");
    else mb.node("Mul", {"S", in}, {"Y"}).name("mul");
  } else if (act == "HardSigmoid") {
    mb.node("HardSigmoid", {in}, {"Y"}).name("a0").attr("alpha", 0.3f).attr("beta", 0.4f);
  } else {
    mb.node(act, {in}, {"Y"}).name("a0");
  }
}

// Conv with C output channels; depthwise: group = C input channels = C.
ModelBuilder conv_model(const std::string& act, bool depthwise) {
  ModelBuilder mb(14);  // HardSwish is opset 14
  const int64_t C = depthwise ? 8 : 4, Cin = depthwise ? 8 : 3;
  mb.input("X", DType::Float32, {1, Cin, 9, 40});
  mb.initializer("W", random_tensor(DType::Float32, {C, depthwise ? 1 : Cin, 3, 3}, 1, -2.0, 2.0));
  mb.initializer("B", random_tensor(DType::Float32, {C}, 2));
  auto conv = mb.node("Conv", {"X", "W", "B"}, {"C"}).name("c0").attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  if (depthwise) conv.attr("group", C);
  add_activation(mb, act, "C");
  mb.output("Y");
  return mb;
}

ModelBuilder gemm_model(const std::string& act) {
  ModelBuilder mb(14);
  mb.input("X", DType::Float32, {37, 20});
  mb.initializer("W", random_tensor(DType::Float32, {50, 20}, 1, -2.0, 2.0));
  mb.initializer("B", random_tensor(DType::Float32, {50}, 2));
  mb.node("Gemm", {"X", "W", "B"}, {"G"}).name("g0").attr("transB", 1);
  add_activation(mb, act, "G");
  mb.output("Y");
  return mb;
}

const char* const kActs[] = {"HardSigmoid", "HardSwish", "SiLU", "SiLU_swapped"};

TEST(GraphFusionActivations, ConvFusesIntoOneNode) {
  const auto x = random_tensor(DType::Float32, {1, 3, 9, 40}, 9);
  for (const char* act : kActs) {
    EXPECT_EQ(check_fusion(conv_model(act, false), {{"X", x}}, 27), 1u) << act;
    EXPECT_EQ(check_fusion(conv_model(act, false), {{"X", x}}, 27, 2), 1u) << act << ", 2 threads";
  }
}

TEST(GraphFusionActivations, DepthwiseConvFusesIntoOneNode) {
  const auto x = random_tensor(DType::Float32, {1, 8, 9, 40}, 9);
  for (const char* act : kActs) EXPECT_EQ(check_fusion(conv_model(act, true), {{"X", x}}, 9), 1u) << act;
}

TEST(GraphFusionActivations, GemmFusesIntoOneNode) {
  const auto x = random_tensor(DType::Float32, {37, 20}, 3);
  for (const char* act : kActs) EXPECT_EQ(check_fusion(gemm_model(act), {{"X", x}}, 20), 1u) << act;
}

TEST(GraphFusionActivations, SigmoidWithASecondReaderIsNotSwish) {
  ModelBuilder mb = conv_model("SiLU", false);
  mb.output("S");  // the Sigmoid's output is also a graph output
  EXPECT_EQ(check_fusion(mb, {{"X", random_tensor(DType::Float32, {1, 3, 9, 40}, 9)}}, 27), 3u);
}

TEST(GraphFusionActivations, SigmoidOfAnotherTensorIsNotSwish) {
  // Mul(C, Sigmoid(X2)): the gate is not the Conv's own output.
  ModelBuilder mb(14);
  mb.input("X", DType::Float32, {1, 3, 9, 40});
  mb.input("X2", DType::Float32, {1, 4, 9, 40});
  mb.initializer("W", random_tensor(DType::Float32, {4, 3, 3, 3}, 1));
  mb.node("Conv", {"X", "W"}, {"C"}).name("c0").attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  mb.node("Sigmoid", {"X2"}, {"S"}).name("sig");
  mb.node("Mul", {"C", "S"}, {"Y"}).name("mul");
  mb.output("Y");
  EXPECT_EQ(check_fusion(mb, {{"X", random_tensor(DType::Float32, {1, 3, 9, 40}, 9)},
                              {"X2", random_tensor(DType::Float32, {1, 4, 9, 40}, 10)}},
                         27),
            3u);
}

TEST(GraphFusionActivations, HardSwishOnAnotherTensorIsNotFused) {
  // The Conv output is read by HardSwish's sibling only through an Add: nothing to fuse.
  ModelBuilder mb(14);
  mb.input("X", DType::Float32, {1, 3, 9, 40});
  mb.input("X2", DType::Float32, {1, 4, 9, 40});
  mb.initializer("W", random_tensor(DType::Float32, {4, 3, 3, 3}, 1));
  mb.node("Conv", {"X", "W"}, {"C"}).name("c0").attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  mb.node("HardSwish", {"X2"}, {"H"}).name("hs");
  mb.node("Add", {"C", "H"}, {"Y"}).name("add");
  mb.output("Y");
  EXPECT_EQ(check_fusion(mb, {{"X", random_tensor(DType::Float32, {1, 3, 9, 40}, 9)},
                              {"X2", random_tensor(DType::Float32, {1, 4, 9, 40}, 10)}},
                         27),
            3u);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
