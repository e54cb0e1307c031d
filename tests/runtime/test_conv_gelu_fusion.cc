// The conv_gelu rule (runtime/graph_fusion.cc): Conv -> Gelu (approximate none or tanh,
// opset 20, or the opset-20 node the gelu*_before_opset20 rules make from an older model's
// pattern) becomes one Conv with Gelu in its epilogue. The fused graph equals the unfused
// one (fast and reference kernels, 1 and 2 threads; per-path accuracy against float64 is
// tests/kernels/nn/test_conv_gelu.cc); near-misses stay unfused.
#include <gtest/gtest.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

constexpr int64_t kTaps = 3 * 3 * 3;

void add_conv(ModelBuilder& mb, const std::string& out) {
  mb.input("X", DType::Float32, {1, 3, 9, 40});
  mb.initializer("W", random_tensor(DType::Float32, {4, 3, 3, 3}, 1));
  mb.initializer("B", random_tensor(DType::Float32, {4}, 2));
  mb.node("Conv", {"X", "W", "B"}, {out}).name("c0").attr("pads", std::vector<int64_t>{1, 1, 1, 1});
}

// Conv 3x3 (3 -> 4 channels) -> Gelu(approx), opset `opset` (20 unless testing a near-miss).
ModelBuilder conv_gelu_model(const std::string& approx, int64_t opset = 20) {
  ModelBuilder mb(opset);
  add_conv(mb, "C");
  mb.node("Gelu", {"C"}, {"Y"}).name("gelu").attr("approximate", approx);
  mb.output("Y");
  return mb;
}

// Opset 14: Conv then 0.5 * C * (1 + Erf(C / sqrt 2)).
ModelBuilder conv_erf_pattern_model() {
  ModelBuilder mb(14);
  add_conv(mb, "C");
  mb.initializer("half", Tensor::from_vector<float>({}, {0.5f}));
  mb.initializer("one", Tensor::from_vector<float>({}, {1.0f}));
  mb.initializer("k", Tensor::from_vector<float>({}, {1.41421356f}));
  mb.node("Div", {"C", "k"}, {"u"}).name("scale");
  mb.node("Erf", {"u"}, {"e"}).name("erf");
  mb.node("Add", {"one", "e"}, {"a"}).name("add_one");
  mb.node("Mul", {"C", "a"}, {"m"}).name("mul_x");
  mb.node("Mul", {"m", "half"}, {"Y"}).name("mul_half");
  mb.output("Y");
  return mb;
}

// Opset 15: Conv then 0.5 * C * (1 + Tanh(sqrt(2/pi) * (C + 0.044715 * C^3))).
ModelBuilder conv_tanh_pattern_model() {
  ModelBuilder mb(15);
  add_conv(mb, "C");
  mb.initializer("three", Tensor::from_vector<float>({}, {3.0f}));
  mb.initializer("c", Tensor::from_vector<float>({}, {0.044715f}));
  mb.initializer("k", Tensor::from_vector<float>({}, {0.7978845608f}));
  mb.initializer("one", Tensor::from_vector<float>({}, {1.0f}));
  mb.initializer("half", Tensor::from_vector<float>({}, {0.5f}));
  mb.node("Pow", {"C", "three"}, {"p"}).name("cube");
  mb.node("Mul", {"p", "c"}, {"pc"}).name("cube_scale");
  mb.node("Add", {"C", "pc"}, {"inner"}).name("inner");
  mb.node("Mul", {"inner", "k"}, {"u"}).name("scale");
  mb.node("Tanh", {"u"}, {"t"}).name("tanh");
  mb.node("Add", {"t", "one"}, {"a"}).name("add_one");
  mb.node("Mul", {"C", "a"}, {"m"}).name("mul_x");
  mb.node("Mul", {"m", "half"}, {"Y"}).name("mul_half");
  mb.output("Y");
  return mb;
}

std::vector<std::string> rules_of(const ModelBuilder& mb) {
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  std::vector<std::string> rules;
  for (const auto& r : s->graph_rewrites()) rules.push_back(r.rule);
  return rules;
}

Tensor input() { return random_tensor(DType::Float32, {1, 3, 9, 40}, 3, -2.0, 2.0); }

TEST(ConvGeluFusion, ConvGeluFusesIntoOneNode) {
  for (const char* approx : {"none", "tanh"}) {
    EXPECT_EQ(check_fusion(conv_gelu_model(approx), {{"X", input()}}, kTaps), 1u) << approx;
    EXPECT_EQ(check_fusion(conv_gelu_model(approx), {{"X", input()}}, kTaps, 2), 1u) << approx << ", 2 threads";
    EXPECT_EQ(rules_of(conv_gelu_model(approx)), std::vector<std::string>{"conv_gelu"}) << approx;
  }
}

TEST(ConvGeluFusion, OlderModelsPatternsFuseThroughTheGeluRules) {
  EXPECT_EQ(check_fusion(conv_erf_pattern_model(), {{"X", input()}}, kTaps), 1u);
  EXPECT_EQ(rules_of(conv_erf_pattern_model()), (std::vector<std::string>{"gelu_before_opset20", "conv_gelu"}));
  EXPECT_EQ(check_fusion(conv_tanh_pattern_model(), {{"X", input()}}, kTaps), 1u);
  EXPECT_EQ(rules_of(conv_tanh_pattern_model()), (std::vector<std::string>{"gelu_tanh_before_opset20", "conv_gelu"}));
}

TEST(ConvGeluFusion, ConvOutputWithASecondReaderIsNotFused) {
  ModelBuilder mb = conv_gelu_model("none");
  mb.output("C");  // the Conv's output is also a graph output
  EXPECT_EQ(check_fusion(mb, {{"X", input()}}, kTaps), 2u);
  // Read twice by two Gelus: neither may take it.
  ModelBuilder two(20);
  add_conv(two, "C");
  two.node("Gelu", {"C"}, {"Y"}).name("gelu").attr("approximate", "none");
  two.node("Gelu", {"C"}, {"Y2"}).name("gelu2").attr("approximate", "tanh");
  two.output("Y");
  two.output("Y2");
  EXPECT_EQ(check_fusion(two, {{"X", input()}}, kTaps), 3u);
}

TEST(ConvGeluFusion, ConvWithAnActivationAlreadyKeepsTheGelu) {
  ModelBuilder mb(20);
  add_conv(mb, "C");
  mb.node("Relu", {"C"}, {"R"}).name("relu");
  mb.node("Gelu", {"R"}, {"Y"}).name("gelu").attr("approximate", "none");
  mb.output("Y");
  EXPECT_EQ(check_fusion(mb, {{"X", input()}}, kTaps), 2u);
  EXPECT_EQ(rules_of(mb), std::vector<std::string>{"conv_activation"});
}

TEST(ConvGeluFusion, NonConstantFilterIsNotFused) {
  ModelBuilder mb(20);
  mb.input("X", DType::Float32, {1, 3, 9, 40});
  mb.input("W", DType::Float32, {4, 3, 3, 3});
  mb.node("Conv", {"X", "W"}, {"C"}).name("c0");
  mb.node("Gelu", {"C"}, {"Y"}).name("gelu");
  mb.output("Y");
  EXPECT_EQ(check_fusion(mb, {{"X", input()}, {"W", random_tensor(DType::Float32, {4, 3, 3, 3}, 7)}}, kTaps), 2u);
}

// An approximate value other than none / tanh is not taken into the Conv (which would
// hide the bad attribute): the Gelu kernel still rejects it, naming the node and the value.
TEST(ConvGeluFusion, UnknownApproximateIsLeftToTheGeluKernel) {
  const std::string err = error_message([&] { conv_gelu_model("fast").session(opts(ORT_ENABLE_ALL)); });
  EXPECT_NE(err.find("'fast'"), std::string::npos) << err;
  EXPECT_NE(err.find("gelu"), std::string::npos) << err;
}

// A Gelu in a model importing opset 18 (no such op there) is not one our rules made: the
// rule leaves it, and loading still fails as it does unoptimized.
TEST(ConvGeluFusion, GeluBeforeOpset20NotMadeByOurRuleIsNotFused) {
  const std::string err = error_message([&] { conv_gelu_model("none", 18).session(opts(ORT_ENABLE_ALL)); });
  EXPECT_NE(err.find("op 'Gelu'"), std::string::npos) << err;
  EXPECT_NE(err.find("opset 18"), std::string::npos) << err;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
