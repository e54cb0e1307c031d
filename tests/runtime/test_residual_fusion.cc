// The conv_add rule (runtime/graph_fusion_residual.h): Conv -> Add(Z) [-> activation]
// becomes one Conv adding Z in its epilogue, with either operand order, through fixed
// declared shapes and through shape classes (symbolic shapes: a ResNet block); the fused
// graph equals the unfused one (fast and reference kernels). Near-misses stay unfused: a
// broadcasting Add (bias-like constant, a [1, 1, H, W] input), a Conv output with a second
// reader, a Conv with an activation already fused, a strided Conv or a channel change that
// the shape classes cannot prove. A model saved after the rule holds com.microsoft FusedConv
// with Z and loads back to the same outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

std::vector<std::string> rules_applied(const ModelBuilder& mb) {
  std::vector<std::string> r;
  auto session = mb.session(opts(ORT_ENABLE_ALL));
  for (const GraphRewrite& w : session->graph_rewrites()) r.push_back(w.rule);
  return r;
}
size_t count(const std::vector<std::string>& v, const std::string& s) { return std::count(v.begin(), v.end(), s); }

const std::vector<int64_t> kPad1{1, 1, 1, 1};

// X [1, 8, 10, 12] -> Conv 3x3 (8 -> 8, pad 1) -> Add(C, X) or Add(X, C) -> act.
ModelBuilder residual_model(bool conv_first, const std::string& act) {
  ModelBuilder mb(14);
  mb.input("X", DType::Float32, {1, 8, 10, 12});
  mb.initializer("W", random_tensor(DType::Float32, {8, 8, 3, 3}, 1));
  mb.initializer("B", random_tensor(DType::Float32, {8}, 2));
  mb.node("Conv", {"X", "W", "B"}, {"C"}).name("c0").attr("pads", kPad1);
  mb.node("Add", conv_first ? std::vector<std::string>{"C", "X"} : std::vector<std::string>{"X", "C"},
          {act.empty() ? "Y" : "S"})
      .name("add");
  if (act == "PRelu") {
    mb.initializer("slope", random_tensor(DType::Float32, {8, 1, 1}, 3, 0.0, 0.5));
    mb.node("PRelu", {"S", "slope"}, {"Y"}).name("act");
  } else if (!act.empty()) {
    mb.node(act, {"S"}, {"Y"}).name("act");
  }
  mb.output("Y");
  return mb;
}

TEST(ResidualFusion, ConvAddActivationIsOneNodeEitherOrder) {
  const Tensor x = random_tensor(DType::Float32, {1, 8, 10, 12}, 9);
  for (bool conv_first : {true, false})
    for (const std::string act : {"", "Relu", "Sigmoid", "HardSwish", "PRelu"}) {
      const ModelBuilder mb = residual_model(conv_first, act);
      EXPECT_EQ(check_fusion(mb, {{"X", x}}, 8 * 9 + 1), 1u) << act << " conv_first=" << conv_first;
      EXPECT_EQ(check_fusion(mb, {{"X", x}}, 8 * 9 + 1, 2), 1u) << act << ", 2 threads";
      EXPECT_EQ(count(rules_applied(mb), "conv_add"), 1u) << act;
    }
}

// Two ResNet basic blocks on an input of unknown spatial size: conv -> relu -> conv -> add(x)
// -> relu, twice. The shape classes prove Z's shape (same root, channels from the filters).
ModelBuilder resnet_blocks(int64_t out_channels_last = 8, int64_t stride_last = 1) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 8, -1, -1});
  std::string in = "X";
  for (int b = 0; b < 2; ++b) {
    const std::string p = "b" + std::to_string(b) + "_";
    const bool last = b == 1;
    const int64_t m = last ? out_channels_last : 8, s = last ? stride_last : 1;
    mb.initializer(p + "W1", random_tensor(DType::Float32, {8, 8, 3, 3}, 10 + b, -0.3, 0.3));
    mb.initializer(p + "W2", random_tensor(DType::Float32, {m, 8, 3, 3}, 20 + b, -0.3, 0.3));
    mb.node("Conv", {in, p + "W1"}, {p + "c1"}).name(p + "conv1").attr("pads", kPad1);
    mb.node("Relu", {p + "c1"}, {p + "r1"}).name(p + "relu1");
    mb.node("Conv", {p + "r1", p + "W2"}, {p + "c2"}).name(p + "conv2").attr("pads", kPad1)
        .attr("strides", std::vector<int64_t>{s, s});
    mb.node("Add", {p + "c2", in}, {p + "sum"}).name(p + "add");
    mb.node("Relu", {p + "sum"}, {p + "out"}).name(p + "relu2");
    in = p + "out";
  }
  mb.output(in);
  return mb;
}

TEST(ResidualFusion, ResNetBlocksWithSymbolicShapes) {
  const ModelBuilder mb = resnet_blocks();
  const Tensor x = random_tensor(DType::Float32, {1, 8, 11, 14}, 9);
  EXPECT_EQ(check_fusion(mb, {{"X", x}}, 8 * 9 + 1), 4u);  // 4 Convs, each Relu and Add fused
  EXPECT_EQ(count(rules_applied(mb), "conv_add"), 2u);
}

// A MobileNetV3 block on an input of unknown spatial size: expand 1x1 -> depthwise 3x3 ->
// squeeze-and-excitation (GlobalAveragePool -> 1x1 -> Add([1, C, 1, 1] bias) -> Relu -> 1x1 ->
// HardSigmoid -> Mul with the features) -> project 1x1 -> Add(X). The SE Mul keeps the features'
// shape ([N, C, 1, 1] broadcast onto [N, C, H, W] of the same root), so the residual is proven.
ModelBuilder mobilenet_v3_block(int64_t se_channels = 16) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 8, -1, -1});
  mb.initializer("We", random_tensor(DType::Float32, {16, 8, 1, 1}, 1, -0.5, 0.5));
  mb.initializer("Wd", random_tensor(DType::Float32, {16, 1, 3, 3}, 2, -0.5, 0.5));
  mb.initializer("Ws1", random_tensor(DType::Float32, {4, 16, 1, 1}, 3, -0.5, 0.5));
  mb.initializer("bs1", random_tensor(DType::Float32, {1, 4, 1, 1}, 4));
  mb.initializer("Ws2", random_tensor(DType::Float32, {se_channels, 4, 1, 1}, 5, -0.5, 0.5));
  mb.initializer("Wp", random_tensor(DType::Float32, {8, 16, 1, 1}, 6, -0.5, 0.5));
  mb.node("Conv", {"X", "We"}, {"e"}).name("expand");
  mb.node("Relu", {"e"}, {"er"}).name("expand_relu");
  mb.node("Conv", {"er", "Wd"}, {"d"}).name("dw").attr("group", int64_t{16}).attr("pads", kPad1);
  mb.node("GlobalAveragePool", {"d"}, {"p"}).name("pool");
  mb.node("Conv", {"p", "Ws1"}, {"s1"}).name("se1");
  mb.node("Add", {"s1", "bs1"}, {"s1b"}).name("se1_bias");
  mb.node("Relu", {"s1b"}, {"s1r"}).name("se1_relu");
  mb.node("Conv", {"s1r", "Ws2"}, {"s2"}).name("se2");
  mb.node("HardSigmoid", {"s2"}, {"sg"}).name("se_gate");
  mb.node("Mul", {"d", "sg"}, {"dse"}).name("se_mul");
  mb.node("Conv", {"dse", "Wp"}, {"proj"}).name("project");
  mb.node("Add", {"proj", "X"}, {"Y"}).name("residual");
  mb.output("Y");
  return mb;
}

TEST(ResidualFusion, MobileNetV3BlockWithSqueezeExcitation) {
  const ModelBuilder mb = mobilenet_v3_block();
  // The SE bias folds into se1's B (conv_scale_shift, before conv_add), the residual is Z.
  EXPECT_EQ(count(rules_applied(mb), "conv_scale_shift"), 1u);
  EXPECT_EQ(count(rules_applied(mb), "conv_add"), 1u);
  const Tensor x = random_tensor(DType::Float32, {1, 8, 9, 13}, 9);
  check_fusion(mb, {{"X", x}}, 16 + 1);
  // An SE gate of 1 channel broadcasts over 16: still X's shape, but not provable here.
  EXPECT_EQ(count(rules_applied(mobilenet_v3_block(1)), "conv_add"), 0u);
  EXPECT_EQ(count(rules_applied(mobilenet_v3_block(1)), "conv_scale_shift"), 1u);  // the SE bias only
}

TEST(ResidualFusion, UnprovableShapesStayUnfused) {
  // 16 output channels against X's 8, and a stride-2 Conv: not provably Z's shape.
  EXPECT_EQ(count(rules_applied(resnet_blocks(16, 1)), "conv_add"), 1u);
  EXPECT_EQ(count(rules_applied(resnet_blocks(8, 2)), "conv_add"), 1u);
}

// A Conv [1, 8, 10, 12] output plus constant V of `shape`.
ModelBuilder conv_plus_constant(const Shape& shape, bool bias) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 8, 10, 12});
  mb.initializer("W", random_tensor(DType::Float32, {8, 8, 3, 3}, 1));
  mb.initializer("V", random_tensor(DType::Float32, shape, 2));
  std::vector<std::string> in{"X", "W"};
  if (bias) mb.initializer("B", random_tensor(DType::Float32, {8}, 3)), in.push_back("B");
  mb.node("Conv", in, {"C"}).name("c0").attr("pads", kPad1);
  mb.node("Add", {"V", "C"}, {"Y"}).name("add");
  mb.output("Y");
  return mb;
}

TEST(ResidualFusion, BiasLikeConstantsFoldIntoB) {
  const Tensor x = random_tensor(DType::Float32, {1, 8, 10, 12}, 9);
  for (const Shape& shape : {Shape{8, 1, 1}, Shape{1, 8, 1, 1}, Shape{1}, Shape{}})
    for (bool bias : {false, true}) {
      const ModelBuilder mb = conv_plus_constant(shape, bias);
      // conv_scale_shift (before conv_add) takes a constant of one value per channel.
      EXPECT_EQ(count(rules_applied(mb), "conv_scale_shift"), 1u) << shape_to_string(shape);
      EXPECT_EQ(check_fusion(mb, {{"X", x}}, 8 * 9 + 2), 1u) << shape_to_string(shape);
    }
}

TEST(ResidualFusion, BroadcastingAddsAreNotResiduals) {
  // Constants that vary along a spatial axis, or that expand the output (batch 2): neither a
  // bias nor provably Y's shape.
  const Tensor x = random_tensor(DType::Float32, {1, 8, 10, 12}, 9);
  for (const Shape& shape : {Shape{1, 1, 1, 12}, Shape{10, 1}, Shape{2, 8, 1, 1}}) {
    const ModelBuilder mb = conv_plus_constant(shape, true);
    EXPECT_EQ(count(rules_applied(mb), "conv_add"), 0u) << shape_to_string(shape);
    EXPECT_EQ(check_fusion(mb, {{"X", x}}, 8 * 9 + 2), 2u) << shape_to_string(shape);
  }
  // A [1, 1, H, W] graph input broadcast over the channels.
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 8, 10, 12});
  mb.input("Z", DType::Float32, {1, 1, 10, 12});
  mb.initializer("W", random_tensor(DType::Float32, {8, 8, 3, 3}, 1));
  mb.node("Conv", {"X", "W"}, {"C"}).name("c0").attr("pads", kPad1);
  mb.node("Add", {"Z", "C"}, {"Y"}).name("add");
  mb.output("Y");
  EXPECT_EQ(count(rules_applied(mb), "conv_add"), 0u);
  const Tensor z = random_tensor(DType::Float32, {1, 1, 10, 12}, 8);
  EXPECT_EQ(check_fusion(mb, {{"X", x}, {"Z", z}}, 8 * 9 + 1), 2u);
}

TEST(ResidualFusion, ConvOutputWithASecondReaderStaysUnfused) {
  ModelBuilder mb = residual_model(true, "");
  mb.output("C");  // the Conv output is also a graph output
  EXPECT_EQ(count(rules_applied(mb), "conv_add"), 0u);
  ModelBuilder mb2(13);
  mb2.input("X", DType::Float32, {1, 8, 10, 12});
  mb2.initializer("W", random_tensor(DType::Float32, {8, 8, 3, 3}, 1));
  mb2.node("Conv", {"X", "W"}, {"C"}).name("c0").attr("pads", kPad1);
  mb2.node("Add", {"C", "X"}, {"Y"}).name("add");
  mb2.node("Sigmoid", {"C"}, {"Y2"}).name("other_reader");
  mb2.output("Y"), mb2.output("Y2");
  EXPECT_EQ(count(rules_applied(mb2), "conv_add"), 0u);
}

TEST(ResidualFusion, ConvWithAnActivationAlreadyFusedStaysUnfused) {
  ModelBuilder mb(13);
  mb.import_domain("com.microsoft", 1);
  mb.input("X", DType::Float32, {1, 8, 10, 12});
  mb.initializer("W", random_tensor(DType::Float32, {8, 8, 3, 3}, 1));
  mb.node("FusedConv", {"X", "W"}, {"C"}).name("fc").domain("com.microsoft").attr("pads", kPad1).attr("activation", "Relu");
  mb.node("Add", {"C", "X"}, {"Y"}).name("add");
  mb.output("Y");
  EXPECT_EQ(count(rules_applied(mb), "conv_add"), 0u);
  const Tensor x = random_tensor(DType::Float32, {1, 8, 10, 12}, 9);
  EXPECT_EQ(check_fusion(mb, {{"X", x}}, 8 * 9 + 1), 2u);
}

TEST(ResidualFusion, SavedAsFusedConvWithZAndLoadedBack) {
  const ModelBuilder mb = resnet_blocks();
  SessionOptions o = opts(ORT_ENABLE_ALL);
  o.optimized_model_filepath = ::testing::TempDir() + "residual_fusion_saved.onnx";
  auto optimized = mb.session(o);
  auto reloaded = Session::load(o.optimized_model_filepath, opts(ORT_DISABLE_ALL));
  const ModelDescription d = reloaded->describe();
  ASSERT_EQ(d.nodes.size(), 4u);
  size_t with_z = 0;
  for (const auto& n : d.nodes) with_z += n.inputs.size() == 4;  // conv2 of each block: X, W, (no B), Z
  EXPECT_EQ(with_z, 2u);
  const Tensor x = random_tensor(DType::Float32, {1, 8, 11, 14}, 9);
  const Tensor a = run_all(*optimized, {{"X", x}}).at(0), b = run_all(*reloaded, {{"X", x}}).at(0);
  EXPECT_TRUE(tensors_near(a, b, 1e-5, 1e-5));
  std::remove(o.optimized_model_filepath.c_str());
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
