// conv_scale_shift, scale_shift_conv and hard_swish(_before_opset14) (runtime/graph_fusion_affine.cc):
// the fused graph equals the unfused one (fast and reference kernels, 1 and 2 threads), the
// node counts show what fused, and near-misses stay unfused.
#include <gtest/gtest.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

Tensor scalar(float v) { return Tensor::from_vector<float>({1}, {v}); }
Tensor values(const Shape& shape, uint32_t seed) { return random_tensor(DType::Float32, shape, seed, 0.5, 2.0); }

// X [1, 3, 9, 12] -> Conv 3x3 pad 1 (M = 8 outputs) -> "C".
ModelBuilder conv_base(int64_t opset = 14) {
  ModelBuilder mb(opset);
  mb.input("X", DType::Float32, {1, 3, 9, 12});
  mb.initializer("W", random_tensor(DType::Float32, {8, 3, 3, 3}, 1));
  mb.initializer("B", random_tensor(DType::Float32, {8}, 2));
  mb.node("Conv", {"X", "W", "B"}, {"C"}).name("c0").attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  return mb;
}

const std::vector<std::pair<std::string, Tensor>> feeds() {
  return {{"X", random_tensor(DType::Float32, {1, 3, 9, 12}, 9, -3.0, 3.0)}};
}

TEST(ConvScaleShift, ScalarAndPerChannelConstantsFoldIntoTheConv) {
  ModelBuilder mb = conv_base();
  mb.initializer("s", scalar(1.7f));
  mb.initializer("d", values({1, 8, 1, 1}, 3));
  mb.initializer("s2", values({8, 1, 1}, 4));
  mb.initializer("e", scalar(0.25f));
  mb.node("Mul", {"s", "C"}, {"m"}).name("mul");  // constant first
  mb.node("Add", {"m", "d"}, {"a"}).name("add");
  mb.node("Mul", {"a", "s2"}, {"m2"}).name("mul2");
  mb.node("Sub", {"m2", "e"}, {"Y"}).name("sub");
  mb.output("Y");
  EXPECT_EQ(check_fusion(mb, feeds(), 27), 1u);
  EXPECT_EQ(check_fusion(mb, feeds(), 27, 2), 1u);
}

TEST(ConvScaleShift, NearMissesStay) {
  {  // a constant along the width: not one value per channel
    ModelBuilder mb = conv_base();
    mb.initializer("s", values({1, 1, 1, 12}, 3));
    mb.node("Mul", {"C", "s"}, {"Y"}).name("mul");
    mb.output("Y");
    EXPECT_EQ(check_fusion(mb, feeds(), 27), 2u);
  }
  {  // a constant of higher rank widens the output
    ModelBuilder mb = conv_base();
    mb.initializer("s", values({1, 1, 8, 1, 1}, 3));
    mb.node("Mul", {"C", "s"}, {"Y"}).name("mul");
    mb.output("Y");
    EXPECT_EQ(check_fusion(mb, feeds(), 27), 2u);
  }
  {  // d - C: the Conv is the subtrahend
    ModelBuilder mb = conv_base();
    mb.initializer("d", scalar(0.5f));
    mb.node("Sub", {"d", "C"}, {"Y"}).name("sub");
    mb.output("Y");
    EXPECT_EQ(check_fusion(mb, feeds(), 27), 2u);
  }
  {  // the Conv's output has a second reader
    ModelBuilder mb = conv_base();
    mb.initializer("s", scalar(2.0f));
    mb.node("Mul", {"C", "s"}, {"Y"}).name("mul");
    mb.output("Y");
    mb.output("C");
    EXPECT_EQ(check_fusion(mb, feeds(), 27), 2u);
  }
  {  // a Mul by a graph input
    ModelBuilder mb = conv_base();
    mb.input("S", DType::Float32, {1});
    mb.node("Mul", {"C", "S"}, {"Y"}).name("mul");
    mb.output("Y");
    auto f = feeds();
    f.push_back({"S", scalar(3.0f)});
    EXPECT_EQ(check_fusion(mb, f, 27), 2u);
  }
}

// X -> Mul(s) -> Add(d) -> Conv KxK (pads as given, `group`) -> Y; X has 8 channels.
ModelBuilder affine_then_conv(int64_t k, int64_t pad, int64_t group) {
  ModelBuilder mb(14);
  mb.input("X", DType::Float32, {1, 8, 9, 12});
  mb.initializer("s", scalar(0.37f));
  mb.initializer("d", scalar(-1.25f));
  mb.initializer("W", random_tensor(DType::Float32, {8, 8 / group, k, k}, 1));
  mb.initializer("B", random_tensor(DType::Float32, {8}, 2));
  mb.node("Mul", {"X", "s"}, {"m"}).name("mul");
  mb.node("Add", {"d", "m"}, {"a"}).name("add");  // constant first
  mb.node("Conv", {"a", "W", "B"}, {"Y"})
      .name("c0")
      .attr("group", group)
      .attr("pads", std::vector<int64_t>{pad, pad, pad, pad});
  mb.output("Y");
  return mb;
}

TEST(ScaleShiftConv, ScalarAffineFoldsIntoAnUnpaddedConv) {
  const std::vector<std::pair<std::string, Tensor>> f = {{"X", random_tensor(DType::Float32, {1, 8, 9, 12}, 9, -3.0, 3.0)}};
  EXPECT_EQ(check_fusion(affine_then_conv(1, 0, 1), f, 8), 1u) << "1x1";
  EXPECT_EQ(check_fusion(affine_then_conv(3, 0, 8), f, 9), 1u) << "depthwise 3x3, no padding";
  EXPECT_EQ(check_fusion(affine_then_conv(3, 0, 2), f, 36, 2), 1u) << "grouped 3x3, 2 threads";
  // Padding: the Conv's zeros would meet d in the unfused graph.
  EXPECT_EQ(check_fusion(affine_then_conv(3, 1, 8), f, 9), 3u) << "depthwise 3x3, padded";
}

// The hard-swish pattern on X in one of its groupings; Clip's bounds and the constants as given.
ModelBuilder hard_swish_model(int64_t opset, int grouping, float three = 3.0f, float hi = 6.0f, float six = 6.0f) {
  ModelBuilder mb(opset);
  mb.input("X", DType::Float32, {2, 8, 5, 7});
  mb.initializer("three", scalar(three));
  mb.initializer("six", scalar(six));
  mb.initializer("sixth", scalar(1.0f / six));
  mb.initializer("lo", Tensor::from_vector<float>({}, {0.0f}));
  mb.initializer("hi", Tensor::from_vector<float>({}, {hi}));
  mb.node("Add", {grouping % 2 ? "three" : "X", grouping % 2 ? "X" : "three"}, {"a"}).name("add");
  mb.node("Clip", {"a", "lo", "hi"}, {"c"}).name("clip");
  switch (grouping) {
    case 0:  // (x * clip) / 6
      mb.node("Mul", {"X", "c"}, {"p"}).name("mul");
      mb.node("Div", {"p", "six"}, {"Y"}).name("div");
      break;
    case 1:  // (clip * x) * (1/6)
      mb.node("Mul", {"c", "X"}, {"p"}).name("mul");
      mb.node("Mul", {"sixth", "p"}, {"Y"}).name("mul6");
      break;
    case 2:  // x * (clip / 6)
      mb.node("Div", {"c", "six"}, {"q"}).name("div");
      mb.node("Mul", {"X", "q"}, {"Y"}).name("mul");
      break;
    default:  // (clip * (1/6)) * x
      mb.node("Mul", {"c", "sixth"}, {"q"}).name("mul6");
      mb.node("Mul", {"q", "X"}, {"Y"}).name("mul");
  }
  mb.output("Y");
  return mb;
}

TEST(HardSwishFusion, EveryGroupingBecomesOneNode) {
  const std::vector<std::pair<std::string, Tensor>> f = {{"X", random_tensor(DType::Float32, {2, 8, 5, 7}, 9, -5.0, 5.0)}};
  for (int opset : {12, 14})
    for (int grouping = 0; grouping < 4; ++grouping) {
      const ModelBuilder mb = hard_swish_model(opset, grouping);
      EXPECT_EQ(check_fusion(mb, f, 1), 1u) << "opset " << opset << " grouping " << grouping;
      auto s = mb.session(opts(ORT_ENABLE_ALL));
      EXPECT_EQ(s->describe().nodes.at(0).op_type, "HardSwish");
    }
}

TEST(HardSwishFusion, NearMissesStay) {
  const std::vector<std::pair<std::string, Tensor>> f = {{"X", random_tensor(DType::Float32, {2, 8, 5, 7}, 9, -5.0, 5.0)}};
  EXPECT_EQ(check_fusion(hard_swish_model(14, 0, 3.5f), f, 1), 4u) << "x + 3.5";
  EXPECT_EQ(check_fusion(hard_swish_model(14, 0, 3.0f, 6.5f), f, 1), 4u) << "Clip(., 0, 6.5)";
  EXPECT_EQ(check_fusion(hard_swish_model(14, 0, 3.0f, 6.0f, 5.0f), f, 1), 4u) << "/ 5";
  ModelBuilder two_readers = hard_swish_model(14, 0);
  two_readers.output("c");  // the Clip's output is also a graph output
  EXPECT_EQ(check_fusion(two_readers, f, 1), 4u) << "Clip read twice";
}

// PP-LCNetV3 as Paddle2ONNX writes it: Conv -> Mul(s) -> Add(b) -> hard-swish (4 nodes) ->
// Mul(s2) -> Add(b2) -> Conv 1x1. Everything folds into the two Convs.
TEST(AffineFusion, LearnableAffineBlockBecomesTwoConvs) {
  ModelBuilder mb = conv_base(12);
  mb.initializer("s", scalar(1.38f));
  mb.initializer("b", scalar(0.59f));
  mb.initializer("s2", scalar(0.17f));
  mb.initializer("b2", scalar(3.5e-5f));
  mb.initializer("three", scalar(3.0f));
  mb.initializer("six", scalar(6.0f));
  mb.initializer("lo", Tensor::from_vector<float>({}, {0.0f}));
  mb.initializer("hi", Tensor::from_vector<float>({}, {6.0f}));
  mb.initializer("W2", random_tensor(DType::Float32, {16, 8, 1, 1}, 5));
  mb.initializer("B2", random_tensor(DType::Float32, {16}, 6));
  mb.node("Mul", {"s", "C"}, {"m"}).name("lab_mul");
  mb.node("Add", {"m", "b"}, {"x"}).name("lab_add");
  mb.node("Add", {"x", "three"}, {"a"}).name("hs_add");
  mb.node("Clip", {"a", "lo", "hi"}, {"c"}).name("hs_clip");
  mb.node("Mul", {"x", "c"}, {"p"}).name("hs_mul");
  mb.node("Div", {"p", "six"}, {"h"}).name("hs_div");
  mb.node("Mul", {"s2", "h"}, {"m2"}).name("lab2_mul");
  mb.node("Add", {"m2", "b2"}, {"x2"}).name("lab2_add");
  mb.node("Conv", {"x2", "W2", "B2"}, {"Y"}).name("c1");
  mb.output("Y");
  EXPECT_EQ(check_fusion(mb, feeds(), 27 + 8), 2u);
  EXPECT_EQ(check_fusion(mb, feeds(), 27 + 8, 2), 2u);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
