// Normalization fusions (runtime/graph_fusion_norm.cc): the decomposed LayerNorm pattern
// becomes one LayerNormalization in each of its variants, with the same outputs as the
// unfused graph, and every near-miss (wrong axis, shared intermediate, no eps, exponent 3,
// a different constant, opset < 17) stays unfused.
#include <gtest/gtest.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

constexpr int64_t kC = 48;
const Shape kShape = {2, 5, kC};

struct LnVariant {
  int64_t opset = 17;
  bool square_by_mul = false;  // Mul(d, d) instead of Pow(d, 2)
  bool beta = true;
  bool eps_first = false;      // Add(eps, var) instead of Add(var, eps)
  int64_t axis = -1;           // the reduced axis as written in the model
  float exponent = 2.0f;
  float eps = 1e-5f;
  bool no_eps = false;         // Sqrt(var) directly
  bool shared_d = false;       // another reader of Sub's output
  bool d_is_output = false;    // Sub's output is also a graph output
};

ModelBuilder layer_norm_model(const LnVariant& v) {
  ModelBuilder mb(v.opset);
  mb.input("X", DType::Float32, kShape);
  mb.initializer("gamma", random_tensor(DType::Float32, {kC}, 2, 0.5, 1.5));
  mb.initializer("beta", random_tensor(DType::Float32, {kC}, 3));
  mb.initializer("two", Tensor::from_vector<float>({}, {v.exponent}));
  mb.initializer("eps", Tensor::from_vector<float>({}, {v.eps}));
  auto mean = [&](const std::string& in, const std::string& out, const char* name) {
    if (v.opset >= 18) {
      mb.initializer(std::string("axes_") + name, Tensor::from_vector<int64_t>({1}, {v.axis}));
      mb.node("ReduceMean", {in, std::string("axes_") + name}, {out}).name(name);
    } else {
      mb.node("ReduceMean", {in}, {out}).name(name).attr("axes", std::vector<int64_t>{v.axis});
    }
  };
  mean("X", "m", "mean");
  mb.node("Sub", {"X", "m"}, {"d"}).name("sub");
  if (v.square_by_mul) mb.node("Mul", {"d", "d"}, {"sq"}).name("sq");
  else mb.node("Pow", {"d", "two"}, {"sq"}).name("sq");
  mean("sq", "var", "var");
  if (v.no_eps) {
    mb.node("Sqrt", {"var"}, {"s"}).name("sqrt");
  } else {
    mb.node("Add", v.eps_first ? std::vector<std::string>{"eps", "var"} : std::vector<std::string>{"var", "eps"},
            {"ve"}).name("add_eps");
    mb.node("Sqrt", {"ve"}, {"s"}).name("sqrt");
  }
  mb.node("Div", {"d", "s"}, {"n"}).name("div");
  mb.node("Mul", {"gamma", "n"}, {v.beta ? "ng" : "Y"}).name("mul_gamma");
  if (v.beta) mb.node("Add", {"ng", "beta"}, {"Y"}).name("add_beta");
  mb.output("Y");
  if (v.shared_d) {
    mb.node("Neg", {"d"}, {"Z"}).name("neg");
    mb.output("Z");
  }
  if (v.d_is_output) mb.output("d");
  return mb;
}

size_t fused_nodes(const LnVariant& v) {
  // Two float32 reductions of length C (mean, then variance) bound the rounding difference.
  return check_fusion(layer_norm_model(v), {{"X", random_tensor(DType::Float32, kShape, 9, -3.0, 5.0)}}, kC);
}

size_t unfused_count(const LnVariant& v) { return v.beta ? 9u : 8u; }

TEST(NormFusion, LayerNormVariantsFuse) {
  LnVariant v;
  EXPECT_EQ(fused_nodes(v), 1u) << "opset 17, Pow, beta";
  v.square_by_mul = true;
  EXPECT_EQ(fused_nodes(v), 1u) << "Mul(d, d)";
  v.beta = false;
  v.eps_first = true;
  EXPECT_EQ(fused_nodes(v), 1u) << "no beta, Add(eps, var)";
  LnVariant v18;
  v18.opset = 18;
  EXPECT_EQ(fused_nodes(v18), 1u) << "opset 18: axes as input";
  v18.axis = 2;
  EXPECT_EQ(fused_nodes(v18), 1u) << "last axis written as 2";
}

TEST(NormFusion, LayerNormNearMissesStayUnfused) {
  auto expect_unfused = [](LnVariant v, const char* what) {
    size_t want = unfused_count(v) - (v.no_eps ? 1 : 0) + (v.shared_d ? 1 : 0);
    EXPECT_EQ(fused_nodes(v), want) << what;
  };
  LnVariant v;
  v.axis = 1;
  expect_unfused(v, "middle axis");
  v = {};
  v.exponent = 3.0f;
  expect_unfused(v, "exponent 3");
  v = {};
  v.eps = 0.0f;
  expect_unfused(v, "eps 0");
  v = {};
  v.no_eps = true;
  expect_unfused(v, "eps missing");
  v = {};
  v.shared_d = true;
  expect_unfused(v, "Sub's output read elsewhere");
  v = {};
  v.d_is_output = true;
  expect_unfused(v, "Sub's output is a graph output");
}

TEST(NormFusion, LayerNormBeforeOpset17UsesTheOpset17Kernel) {
  LnVariant v;
  v.opset = 12;  // as ppocr_v4_rec
  EXPECT_EQ(fused_nodes(v), 1u);
  auto s = layer_norm_model(v).session(opts(ORT_ENABLE_ALL));
  ASSERT_EQ(s->graph_rewrites().size(), 1u);
  EXPECT_EQ(s->graph_rewrites()[0].rule, "layer_norm_before_opset17");
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
