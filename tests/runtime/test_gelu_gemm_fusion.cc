// gemm_activation with Gelu (runtime/graph_fusion.cc): Gemm -> Gelu (approximate none and
// tanh; the Gelu an opset-14 model's erf pattern becomes through gelu_before_opset20) and
// MatMul(A 3-D, B const) -> Add(bias const) -> Gelu (bias and Gelu in MatMul's epilogue).
// The fused graph equals the unfused one (fast and reference kernels); near-misses stay unfused.
#include <gtest/gtest.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

// Gemm [37, 20] x [20, 50]^T + B, then Gelu (opset 20) with `approx`, writing "Y".
ModelBuilder gemm_gelu_model(const std::string& approx) {
  ModelBuilder mb(20);
  mb.input("X", DType::Float32, {37, 20});
  mb.initializer("W", random_tensor(DType::Float32, {50, 20}, 1, -2.0, 2.0));
  mb.initializer("B", random_tensor(DType::Float32, {50}, 2));
  mb.node("Gemm", {"X", "W", "B"}, {"G"}).name("g0").attr("transB", 1);
  mb.node("Gelu", {"G"}, {"Y"}).name("gelu").attr("approximate", approx);
  mb.output("Y");
  return mb;
}

// Opset 14: Gemm then 0.5 * G * (1 + Erf(G / sqrt 2)).
ModelBuilder gemm_erf_pattern_model() {
  ModelBuilder mb(14);
  mb.input("X", DType::Float32, {37, 20});
  mb.initializer("W", random_tensor(DType::Float32, {50, 20}, 1, -2.0, 2.0));
  mb.initializer("B", random_tensor(DType::Float32, {50}, 2));
  mb.initializer("half", Tensor::from_vector<float>({}, {0.5f}));
  mb.initializer("one", Tensor::from_vector<float>({}, {1.0f}));
  mb.initializer("k", Tensor::from_vector<float>({}, {1.41421356f}));
  mb.node("Gemm", {"X", "W", "B"}, {"G"}).name("g0").attr("transB", 1);
  mb.node("Div", {"G", "k"}, {"u"}).name("scale");
  mb.node("Erf", {"u"}, {"e"}).name("erf");
  mb.node("Add", {"one", "e"}, {"a"}).name("add_one");
  mb.node("Mul", {"G", "a"}, {"m"}).name("mul_x");
  mb.node("Mul", {"m", "half"}, {"Y"}).name("mul_half");
  mb.output("Y");
  return mb;
}

struct MatMulVariant {
  std::string approx = "none";
  Shape bias_shape = {48};
  bool bias_is_input = false;  // a graph input instead of a constant
  bool second_reader = false;  // the Add's output is also a graph output
};

// MatMul [2, 9, 24] x [24, 48] -> Add(bias) -> Gelu.
ModelBuilder matmul_gelu_model(const MatMulVariant& v) {
  ModelBuilder mb(20);
  mb.input("X", DType::Float32, {2, 9, 24});
  mb.initializer("W", random_tensor(DType::Float32, {24, 48}, 1, -1.0, 1.0));
  if (v.bias_is_input) mb.input("bias", DType::Float32, v.bias_shape);
  else mb.initializer("bias", random_tensor(DType::Float32, v.bias_shape, 2));
  mb.node("MatMul", {"X", "W"}, {"M"}).name("mm");
  mb.node("Add", {"M", "bias"}, {"A"}).name("add");
  mb.node("Gelu", {"A"}, {"Y"}).name("gelu").attr("approximate", v.approx);
  mb.output("Y");
  if (v.second_reader) mb.output("A");
  return mb;
}

std::vector<std::pair<std::string, Tensor>> matmul_feeds(const MatMulVariant& v) {
  std::vector<std::pair<std::string, Tensor>> f{{"X", random_tensor(DType::Float32, {2, 9, 24}, 3, -2.0, 2.0)}};
  if (v.bias_is_input) f.push_back({"bias", random_tensor(DType::Float32, v.bias_shape, 4)});
  return f;
}

TEST(GeluGemmFusion, GemmGeluFusesIntoOneNode) {
  const auto x = random_tensor(DType::Float32, {37, 20}, 3);
  for (const char* approx : {"none", "tanh"}) {
    EXPECT_EQ(check_fusion(gemm_gelu_model(approx), {{"X", x}}, 20), 1u) << approx;
    EXPECT_EQ(check_fusion(gemm_gelu_model(approx), {{"X", x}}, 20, 2), 1u) << approx << ", 2 threads";
    auto s = gemm_gelu_model(approx).session(opts(ORT_ENABLE_ALL));
    ASSERT_EQ(s->graph_rewrites().size(), 1u);
    EXPECT_EQ(s->graph_rewrites()[0].rule, "gemm_activation");
  }
}

TEST(GeluGemmFusion, Opset14ErfPatternAfterGemmFusesIntoOneNode) {
  const auto x = random_tensor(DType::Float32, {37, 20}, 3);
  EXPECT_EQ(check_fusion(gemm_erf_pattern_model(), {{"X", x}}, 20), 1u);
  auto s = gemm_erf_pattern_model().session(opts(ORT_ENABLE_ALL));
  std::vector<std::string> rules;
  for (const auto& r : s->graph_rewrites()) rules.push_back(r.rule);
  EXPECT_EQ(rules, (std::vector<std::string>{"gelu_before_opset20", "gemm_activation"}));
}

TEST(GeluGemmFusion, MatMul3dBiasGeluFusesIntoOneNode) {
  for (const char* approx : {"none", "tanh"})
    for (Shape bias_shape : {Shape{48}, Shape{1, 1, 48}, Shape{1, 1, 1, 48}}) {
      MatMulVariant v;
      v.approx = approx;
      v.bias_shape = bias_shape;
      EXPECT_EQ(check_fusion(matmul_gelu_model(v), matmul_feeds(v), 24), 1u) << approx << " bias rank " << bias_shape.size();
      EXPECT_EQ(check_fusion(matmul_gelu_model(v), matmul_feeds(v), 24, 2), 1u) << approx << ", 2 threads";
    }
}

TEST(GeluGemmFusion, GeluInputWithASecondReaderIsNotFused) {
  MatMulVariant v;
  v.second_reader = true;
  // The Gelu stays; the bias alone still goes into the MatMul epilogue.
  EXPECT_EQ(check_fusion(matmul_gelu_model(v), matmul_feeds(v), 24), 2u);
  ModelBuilder mb = gemm_gelu_model("none");
  mb.output("G");  // the Gemm's output is also a graph output
  EXPECT_EQ(check_fusion(mb, {{"X", random_tensor(DType::Float32, {37, 20}, 3)}}, 20), 2u);
}

TEST(GeluGemmFusion, NonConstantBiasIsNotFused) {
  MatMulVariant v;
  v.bias_is_input = true;
  EXPECT_EQ(check_fusion(matmul_gelu_model(v), matmul_feeds(v), 24), 3u);
}

TEST(GeluGemmFusion, BiasNotARowVectorIsNotFused) {
  MatMulVariant v;
  v.bias_shape = {9, 48};  // per-row values: not an epilogue bias
  EXPECT_EQ(check_fusion(matmul_gelu_model(v), matmul_feeds(v), 24), 3u);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
