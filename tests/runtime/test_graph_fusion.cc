// Graph fusions (runtime/graph_fusion.cc): each pattern gives the same outputs
// as the unfused graph (level 1 vs level 0, fast and reference kernels), the
// fused nodes really disappear, and patterns whose intermediate has another
// consumer are left alone. Also the implicit-GEMM Conv path on shapes like
// small.onnx's (prepacked constant filters, 1 and 2 threads).
#include <gtest/gtest.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

ModelBuilder conv_act(const std::string& act, bool second_use = false, const Shape& slope_shape = {4, 1, 1}) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 3, 9, 40});
  mb.initializer("W", random_tensor(DType::Float32, {4, 3, 3, 3}, 1));
  mb.initializer("B", random_tensor(DType::Float32, {4}, 2));
  mb.node("Conv", {"X", "W", "B"}, {"C"}).name("c0").attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  if (act == "PRelu") {
    mb.initializer("S", random_tensor(DType::Float32, slope_shape, 3, 0.0, 0.5));
    mb.node("PRelu", {"C", "S"}, {"Y"}).name("a0");
  } else if (act == "Clip") {
    mb.initializer("lo", Tensor::from_vector<float>({}, {-0.2f}));
    mb.initializer("hi", Tensor::from_vector<float>({}, {0.3f}));
    mb.node("Clip", {"C", "lo", "hi"}, {"Y"}).name("a0");
  } else {
    mb.node(act, {"C"}, {"Y"}).name("a0");
  }
  mb.output("Y");
  if (second_use) {
    mb.node("Neg", {"C"}, {"Z"}).name("neg");
    mb.output("Z");
  }
  return mb;
}

TEST(GraphFusion, ConvActivations) {
  const auto x = random_tensor(DType::Float32, {1, 3, 9, 40}, 9);
  for (const char* act : {"Relu", "Sigmoid", "Clip", "PRelu"})
    EXPECT_EQ(check_fusion(conv_act(act), {{"X", x}}, 27), 1u) << act;
  EXPECT_EQ(check_fusion(conv_act("PRelu", false, {1}), {{"X", x}}, 27), 1u) << "scalar slope";
  EXPECT_EQ(check_fusion(conv_act("PRelu", false, {4, 1, 1}), {{"X", x}}, 27, 2), 1u) << "2 threads";
}

TEST(GraphFusion, NotFusedWhenIntermediateIsShared) {
  const auto x = random_tensor(DType::Float32, {1, 3, 9, 40}, 9);
  EXPECT_EQ(check_fusion(conv_act("Relu", true), {{"X", x}}, 27), 3u);
  // A slope varying along W cannot move into a per-channel epilogue.
  EXPECT_EQ(check_fusion(conv_act("PRelu", false, {1, 40}), {{"X", x}}, 27), 2u);
}

ModelBuilder bn_model(bool bn_first) {
  ModelBuilder mb(13);
  const int64_t C = bn_first ? 5 : 6;
  mb.input("X", DType::Float32, {2, 5, 11, 37});
  mb.initializer("W", random_tensor(DType::Float32, {6, 5, 3, 3}, 4));
  mb.initializer("B", random_tensor(DType::Float32, {6}, 5));
  mb.initializer("g", random_tensor(DType::Float32, {C}, 6, 0.5, 1.5));
  mb.initializer("b", random_tensor(DType::Float32, {C}, 7));
  mb.initializer("m", random_tensor(DType::Float32, {C}, 8));
  mb.initializer("v", random_tensor(DType::Float32, {C}, 9, 0.2, 2.0));
  auto conv = [&](const std::string& in, const std::string& out) {
    mb.node("Conv", {in, "W", "B"}, {out}).name("c0").attr("pads", std::vector<int64_t>{1, 1, 1, 1})
        .attr("strides", std::vector<int64_t>{1, 2});
  };
  if (bn_first) {
    mb.node("BatchNormalization", {"X", "g", "b", "m", "v"}, {"N"}).name("bn").attr("epsilon", 1e-3f);
    conv("N", "Y");
  } else {
    conv("X", "C");
    mb.node("BatchNormalization", {"C", "g", "b", "m", "v"}, {"Y"}).name("bn").attr("epsilon", 1e-3f);
  }
  mb.output("Y");
  return mb;
}

TEST(GraphFusion, BatchNormBeforeConvBecomesInputAffine) {
  // The Conv pads BN's output with zeros: the fused Conv must keep the padding zero.
  EXPECT_EQ(check_fusion(bn_model(true), {{"X", random_tensor(DType::Float32, {2, 5, 11, 37}, 10)}}, 45), 1u);
  EXPECT_EQ(check_fusion(bn_model(true), {{"X", random_tensor(DType::Float32, {2, 5, 11, 37}, 10)}}, 45, 2), 1u);
}

TEST(GraphFusion, BatchNormAfterConvFoldsIntoWeights) {
  EXPECT_EQ(check_fusion(bn_model(false), {{"X", random_tensor(DType::Float32, {2, 5, 11, 37}, 11)}}, 45), 1u);
}

TEST(GraphFusion, GemmRelu) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {37, 20});
  mb.initializer("W", random_tensor(DType::Float32, {50, 20}, 1));
  mb.initializer("B", random_tensor(DType::Float32, {50}, 2));
  mb.node("Gemm", {"X", "W", "B"}, {"G"}).name("g0").attr("transB", 1);
  mb.node("Relu", {"G"}, {"Y"}).name("r0");
  mb.output("Y");
  EXPECT_EQ(check_fusion(mb, {{"X", random_tensor(DType::Float32, {37, 20}, 3)}}, 20), 1u);
}

TEST(GraphFusion, ChainOfFusionsLikeSmallOnnx) {
  // BN -> Conv -> PRelu -> Conv: both fusions apply to the same Conv.
  ModelBuilder mb(11);
  mb.input("X", DType::Float32, {1, 8, 20, 35});
  for (const char* n : {"g", "b", "m"}) mb.initializer(n, random_tensor(DType::Float32, {8}, n[0]));
  mb.initializer("v", random_tensor(DType::Float32, {8}, 12, 0.5, 1.5));
  mb.initializer("W", random_tensor(DType::Float32, {8, 8, 3, 3}, 13));
  mb.initializer("B", random_tensor(DType::Float32, {8}, 14));
  mb.initializer("S", random_tensor(DType::Float32, {8, 1, 1}, 15, 0.0, 0.3));
  mb.initializer("W2", random_tensor(DType::Float32, {8, 8, 3, 3}, 16));
  mb.node("BatchNormalization", {"X", "g", "b", "m", "v"}, {"N"}).name("bn");
  mb.node("Conv", {"N", "W", "B"}, {"C"}).name("c0").attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  mb.node("PRelu", {"C", "S"}, {"P"}).name("p0");
  mb.node("Conv", {"P", "W2"}, {"Y"}).name("c1").attr("pads", std::vector<int64_t>{1, 1, 1, 1})
      .attr("strides", std::vector<int64_t>{2, 2});
  mb.output("Y");
  EXPECT_EQ(check_fusion(mb, {{"X", random_tensor(DType::Float32, {1, 8, 20, 35}, 17)}}, 72 * 2, 2), 2u);
}

// The implicit-GEMM Conv (constant filter, prepacked) on small.onnx-like
// geometry: full 32-wide tiles plus edges, stride 2, dilation, groups, 1 and 2 threads.
TEST(ConvImplicit, FastMatchesReferenceOnWideInputs) {
  struct C { Shape x, w; int64_t group; std::vector<int64_t> strides, dilations, pads; };
  const C cases[] = {{{1, 3, 20, 112}, {16, 3, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                     {{1, 16, 14, 70}, {20, 16, 3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}},
                     {{2, 8, 9, 66}, {8, 8, 3, 3}, 1, {1, 1}, {2, 2}, {2, 2, 2, 2}},
                     {{1, 8, 10, 45}, {12, 4, 5, 3}, 2, {1, 3}, {1, 1}, {2, 1, 0, 1}}};
  uint32_t seed = 500;
  for (const auto& c : cases)
    for (int threads : {1, 2}) {
      ModelBuilder mb(13);
      mb.input("X", DType::Float32, c.x);
      mb.initializer("W", random_tensor(DType::Float32, c.w, seed++));
      mb.initializer("B", random_tensor(DType::Float32, {c.w[0]}, seed++));
      mb.node("Conv", {"X", "W", "B"}, {"Y"}).name("c").attr("group", c.group).attr("strides", c.strides)
          .attr("dilations", c.dilations).attr("pads", c.pads);
      mb.output("Y");
      auto r = run_fast_and_reference(mb, {{"X", random_tensor(DType::Float32, c.x, seed++)}}, threads);
      const int64_t k = c.w[1] * c.w[2] * c.w[3];
      EXPECT_TRUE(tensors_near(r.first.at(0), r.second.at(0), reduction_atol(DType::Float32, k), 1e-4))
          << "x=" << shape_to_string(c.x) << " w=" << shape_to_string(c.w) << " threads=" << threads;
    }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
