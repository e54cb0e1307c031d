// The gemm_reshape_residual rule (runtime/graph_fusion.cc): Gemm -> Reshape(s) -> Add(R), as
// Keras' Dense layer on [B, S, K] inputs is exported (Tensordot's MatMul over B*S rows, the
// Reshape back, the residual Add), becomes one Gemm reshaping Y then adding R
// (kernels/linalg/gemm.cc: R of the reshaped shape in the GEMM epilogue, other shapes with
// broadcasting after it). The fused graph equals the unfused one (fast and reference kernels,
// 1 and 2 threads; reduction tolerance over K plus the bias and residual adds); near-misses
// keep their nodes.
#include <gtest/gtest.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

constexpr int64_t kB = 2, kS = 7, kK = 24, kN = 40;

struct Variant {
  Shape residual = {kB, kS, kN};
  std::vector<int64_t> shape = {kB, kS, kN};
  bool shape_is_input = false;  // s fed at run time (as Tensordot computes it from Shape)
  bool residual_first = false;  // Add(R, reshaped)
  bool relu_after = false;      // Add -> Relu
  bool reshaped_is_output = false;
  bool gemm_is_output = false;
  bool bias = true;
};

ModelBuilder model(const Variant& v) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {kB * kS, kK});
  mb.input("R", DType::Float32, v.residual);
  mb.initializer("W", random_tensor(DType::Float32, {kK, kN}, 1));
  std::vector<std::string> in{"X", "W"};
  if (v.bias) {
    mb.initializer("b", random_tensor(DType::Float32, {kN}, 2));
    in.push_back("b");
  }
  const Shape s_shape{static_cast<int64_t>(v.shape.size())};
  if (v.shape_is_input) mb.input("s", DType::Int64, s_shape);
  else mb.initializer("s", Tensor::from_vector<int64_t>(s_shape, v.shape));
  mb.node("Gemm", in, {"G"}).name("dense");
  mb.node("Reshape", {"G", "s"}, {"Gs"}).name("back");
  mb.node("Add", v.residual_first ? std::vector<std::string>{"R", "Gs"} : std::vector<std::string>{"Gs", "R"},
          {v.relu_after ? "A" : "Y"}).name("residual");
  if (v.relu_after) mb.node("Relu", {"A"}, {"Y"}).name("relu");
  mb.output("Y");
  if (v.reshaped_is_output) mb.output("Gs");
  if (v.gemm_is_output) mb.output("G");
  return mb;
}

std::vector<std::pair<std::string, Tensor>> feeds(const Variant& v) {
  std::vector<std::pair<std::string, Tensor>> f{{"X", random_tensor(DType::Float32, {kB * kS, kK}, 3)},
                                                {"R", random_tensor(DType::Float32, v.residual, 4, -2.0, 2.0)}};
  if (v.shape_is_input)
    f.push_back({"s", Tensor::from_vector<int64_t>({static_cast<int64_t>(v.shape.size())}, v.shape)});
  return f;
}

// K products, the bias and the residual: K + 2 rounded terms.
size_t fused_nodes(const Variant& v, int threads = 1) { return check_fusion(model(v), feeds(v), kK + 2, threads); }

std::vector<std::string> rules_of(const Variant& v) {
  auto s = model(v).session(opts(ORT_ENABLE_ALL));
  std::vector<std::string> rules;
  for (const auto& r : s->graph_rewrites()) rules.push_back(r.rule);
  return rules;
}

TEST(GemmReshapeResidualFusion, ResidualOfTheReshapedShapeFusesIntoOneNode) {
  Variant v;
  EXPECT_EQ(fused_nodes(v), 1u);
  EXPECT_EQ(fused_nodes(v, 2), 1u) << "2 threads";
  EXPECT_EQ(rules_of(v), std::vector<std::string>{"gemm_reshape_residual"});
  v.residual_first = true;
  EXPECT_EQ(fused_nodes(v), 1u) << "Add(R, reshaped)";
  v = {};
  v.shape_is_input = true;
  EXPECT_EQ(fused_nodes(v), 1u) << "shape known at run time only";
  v = {};
  v.shape = {-1, kS, kN};
  EXPECT_EQ(fused_nodes(v), 1u) << "-1 in the shape";
  v.shape = {0, kN};  // 0 copies Y's dimension (B*S)
  v.residual = {kB * kS, kN};
  EXPECT_EQ(fused_nodes(v), 1u) << "0 in the shape";
  v = {};
  v.bias = false;
  EXPECT_EQ(fused_nodes(v), 1u) << "no bias";
  // A Reshape that is not a leading-dims split: the flat orders still agree.
  v = {};
  v.shape = {kB, kN, kS};
  v.residual = {kB, kN, kS};
  EXPECT_EQ(fused_nodes(v), 1u) << "[B, N, S]";
}

TEST(GemmReshapeResidualFusion, BroadcastingResidualTakesTheGeneralPath) {
  Variant v;
  v.residual = {1, kS, kN};
  EXPECT_EQ(fused_nodes(v), 1u) << "R [1, S, N]";
  v.residual = {kN};
  EXPECT_EQ(fused_nodes(v), 1u) << "R [N]";
  v.residual = {kB, 1, 1, 1};  // broadcasts up to rank 4
  EXPECT_EQ(fused_nodes(v), 1u) << "R [B, 1, 1, 1]";
}

TEST(GemmReshapeResidualFusion, ActivationAfterTheAddJoinsTheGemm) {
  Variant v;
  v.relu_after = true;
  EXPECT_EQ(fused_nodes(v), 1u);
  EXPECT_EQ(rules_of(v), (std::vector<std::string>{"gemm_reshape_residual", "gemm_activation"}));
}

TEST(GemmReshapeResidualFusion, IntermediatesWithAnotherReaderStayUnfused) {
  Variant v;
  v.reshaped_is_output = true;
  EXPECT_EQ(fused_nodes(v), 3u) << "Reshape output is a graph output";
  v = {};
  v.gemm_is_output = true;
  EXPECT_EQ(fused_nodes(v), 3u) << "Gemm output is a graph output";
}

TEST(GemmReshapeResidualFusion, ShapeThatDoesNotFitIsReportedNamingTheNode) {
  Variant v;
  v.shape_is_input = true;
  auto s = model(v).session(opts(ORT_ENABLE_ALL));
  v.shape = {kB, kS + 1, kN};
  const std::string err = error_message([&] { run_all(*s, feeds(v)); });
  EXPECT_NE(err.find("cannot reshape 14x40 into 2,8,40"), std::string::npos) << err;
  EXPECT_NE(err.find("dense"), std::string::npos) << err;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
