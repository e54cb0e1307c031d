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
  // With Sub's output read elsewhere the rest is still RMSNormalization of d (rms_norm: the
  // Pow, ReduceMean, Add, Sqrt, Div and gamma Mul become one node), but not a LayerNorm.
  v = {};
  v.shared_d = true;
  EXPECT_EQ(fused_nodes(v), 5u) << "Sub's output read elsewhere: mean, Sub, RMSNormalization(d), beta Add, Neg";
  v = {};
  v.d_is_output = true;
  EXPECT_EQ(fused_nodes(v), 4u) << "Sub's output is a graph output: mean, Sub, RMSNormalization(d), beta Add";
}

TEST(NormFusion, LayerNormBeforeOpset17UsesTheOpset17Kernel) {
  LnVariant v;
  v.opset = 12;  // as ppocr_v4_rec
  EXPECT_EQ(fused_nodes(v), 1u);
  auto s = layer_norm_model(v).session(opts(ORT_ENABLE_ALL));
  ASSERT_EQ(s->graph_rewrites().size(), 1u);
  EXPECT_EQ(s->graph_rewrites()[0].rule, "layer_norm_before_opset17");
}

// 0.5 * x * (1 + Erf(x * k)) with the grouping `form` (0: (x * a) * 0.5, 1: x * (a * 0.5),
// 2: (x * 0.5) * a) and x / sqrt 2 as Div (`by_div`) or Mul.
struct GeluVariant {
  int64_t opset = 20;
  int form = 0;
  bool by_div = true;
  float half = 0.5f, one = 1.0f;
  float root = 1.41421356f;  // Div's divisor; Mul uses 1 / root
  bool shared_erf = false;   // another reader of Erf's output
};

ModelBuilder gelu_model(const GeluVariant& v) {
  ModelBuilder mb(v.opset);
  mb.input("X", DType::Float32, {3, 40});
  mb.initializer("half", Tensor::from_vector<float>({}, {v.half}));
  mb.initializer("one", Tensor::from_vector<float>({}, {v.one}));
  mb.initializer("k", Tensor::from_vector<float>({}, {v.by_div ? v.root : 1.0f / v.root}));
  mb.node(v.by_div ? "Div" : "Mul", {"X", "k"}, {"u"}).name("scale");
  mb.node("Erf", {"u"}, {"e"}).name("erf");
  mb.node("Add", {"one", "e"}, {"a"}).name("add_one");
  if (v.form == 0) {
    mb.node("Mul", {"X", "a"}, {"m"}).name("mul_x");
    mb.node("Mul", {"m", "half"}, {"Y"}).name("mul_half");
  } else if (v.form == 1) {
    mb.node("Mul", {"half", "a"}, {"h"}).name("mul_half");
    mb.node("Mul", {"h", "X"}, {"Y"}).name("mul_x");
  } else {
    mb.node("Mul", {"X", "half"}, {"hx"}).name("mul_half");
    mb.node("Mul", {"a", "hx"}, {"Y"}).name("mul_x");
  }
  mb.output("Y");
  if (v.shared_erf) {
    mb.node("Neg", {"e"}, {"Z"}).name("neg");
    mb.output("Z");
  }
  return mb;
}

size_t gelu_nodes(const GeluVariant& v) {
  // Elementwise: the unfused chain and the kernel each round a few times per element (k = 8).
  return check_fusion(gelu_model(v), {{"X", random_tensor(DType::Float32, {3, 40}, 4, -6.0, 6.0)}}, 8);
}

TEST(NormFusion, GeluVariantsFuse) {
  for (int form = 0; form < 3; ++form)
    for (bool by_div : {true, false}) {
      GeluVariant v;
      v.form = form;
      v.by_div = by_div;
      EXPECT_EQ(gelu_nodes(v), 1u) << "form " << form << (by_div ? " Div" : " Mul");
    }
  GeluVariant old;
  old.opset = 13;
  EXPECT_EQ(gelu_nodes(old), 1u) << "opset 13 (the opset-20 kernel)";
}

TEST(NormFusion, GeluNearMissesStayUnfused) {
  GeluVariant v;
  v.half = 0.6f;
  EXPECT_EQ(gelu_nodes(v), 5u) << "0.6 instead of 0.5";
  v = {};
  v.one = 2.0f;
  EXPECT_EQ(gelu_nodes(v), 5u) << "2 + erf";
  v = {};
  v.root = 1.4142f;  // 1.4e-5 away: not sqrt 2 within float32 rounding
  EXPECT_EQ(gelu_nodes(v), 5u) << "1.4142";
  v = {};
  v.shared_erf = true;
  EXPECT_EQ(gelu_nodes(v), 6u) << "Erf read elsewhere";
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
