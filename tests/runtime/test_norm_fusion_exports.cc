// The normalization fusions for other exporters' forms (runtime/graph_fusion_norm_exports.cc):
// TF / Keras LayerNorm (g2p_id_bert_mlm's form), PyTorch / Llama RMSNorm and tanh-Gelu, each in
// its variant groupings with the unfused graph's outputs, and the near-misses (a second reader
// of an intermediate, a wrong constant, a wrong axis, a wrong shape) left unfused.
#include <gtest/gtest.h>

#include "tests/common/fusion_test_util.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

constexpr int64_t kC = 48;
const Shape kShape = {2, 5, kC};

// The rule names a session applied.
std::vector<std::string> rules_applied(const ModelBuilder& mb) {
  std::vector<std::string> out;
  auto session = mb.session(opts(ORT_ENABLE_ALL));  // owns the rewrites list
  for (const auto& r : session->graph_rewrites()) out.push_back(r.rule);
  return out;
}

// The reduced axis as the model writes it: attribute before opset 18, constant input from 18.
void reduce_mean(ModelBuilder& mb, int64_t opset, const std::string& in, const std::string& out, const std::string& name,
                 int64_t axis) {
  if (opset >= 18) {
    mb.initializer("axes_" + name, Tensor::from_vector<int64_t>({1}, {axis}));
    mb.node("ReduceMean", {in, "axes_" + name}, {out}).name(name);
  } else {
    mb.node("ReduceMean", {in}, {out}).name(name).attr("axes", std::vector<int64_t>{axis});
  }
}

// ---- layer_norm_tf ----------------------------------------------------------------------------

struct TfLnVariant {
  int64_t opset = 14;          // g2p_id_bert_mlm's
  bool pool = true;            // GlobalAveragePool means (else ReduceMean)
  bool pow_square = false;     // Pow(d, 2) instead of Mul(d, d)
  bool div_one = false;        // Div(1, s) instead of Reciprocal(s)
  bool swapped = false;        // every commutative node's operands the other way round, Sub(mean, X)
  bool unknown_rank = false;   // X produced by a node (no declared shape)
  Shape shape = kShape;
  int64_t axis = -1;           // ReduceMean's axis
  float one = 1.0f, eps = 1e-6f;
  int64_t beta_size = kC;
  bool sg_is_output = false;   // sg also a graph output
  bool beta_minus_reversed = false;  // Sub(mean * sg, beta): not the pattern
};

ModelBuilder tf_layer_norm_model(const TfLnVariant& v) {
  ModelBuilder mb(v.opset);
  const int64_t c = v.shape.back();
  mb.initializer("gamma", random_tensor(DType::Float32, {c}, 2, 0.5, 1.5));
  mb.initializer("beta", random_tensor(DType::Float32, {v.beta_size}, 3));
  mb.initializer("eps", Tensor::from_vector<float>({}, {v.eps}));
  mb.initializer("one", Tensor::from_vector<float>({}, {v.one}));
  mb.initializer("two", Tensor::from_vector<float>({}, {2.0f}));
  if (v.unknown_rank) {
    mb.input("X0", DType::Float32, {}, false);
    mb.node("Neg", {"X0"}, {"X"}).name("neg");
  } else {
    mb.input("X", DType::Float32, v.shape);
  }
  auto mean = [&](const std::string& in, const std::string& out, const std::string& name) {
    if (v.pool) mb.node("GlobalAveragePool", {in}, {out}).name(name);
    else reduce_mean(mb, v.opset, in, out, name, v.axis);
  };
  auto ordered = [&](const std::string& a, const std::string& b) {
    return v.swapped ? std::vector<std::string>{b, a} : std::vector<std::string>{a, b};
  };
  mean("X", "mean", "moments/mean");
  mb.node("Sub", ordered("X", "mean"), {"d"}).name("moments/SquaredDifference");
  if (v.pow_square) mb.node("Pow", {"d", "two"}, {"sq"}).name("square");
  else mb.node("Mul", {"d", "d"}, {"sq"}).name("square");
  mean("sq", "var", "moments/variance");
  mb.node("Add", ordered("var", "eps"), {"ve"}).name("batchnorm/add");
  mb.node("Sqrt", {"ve"}, {"s"}).name("batchnorm/Rsqrt");
  if (v.div_one) mb.node("Div", {"one", "s"}, {"r"}).name("batchnorm/Rsqrt__9");
  else mb.node("Reciprocal", {"s"}, {"r"}).name("batchnorm/Rsqrt__9");
  mb.node("Mul", ordered("r", "gamma"), {"sg"}).name("batchnorm/mul");
  mb.node("Mul", ordered("mean", "sg"), {"mm"}).name("batchnorm/mul_2");
  if (v.beta_minus_reversed) mb.node("Sub", {"mm", "beta"}, {"shift"}).name("batchnorm/sub");
  else mb.node("Sub", {"beta", "mm"}, {"shift"}).name("batchnorm/sub");
  mb.node("Mul", ordered("X", "sg"), {"xs"}).name("batchnorm/mul_1");
  mb.node("Add", ordered("xs", "shift"), {"Y"}).name("batchnorm/add_1");
  mb.output("Y");
  if (v.sg_is_output) mb.output("sg");
  return mb;
}

size_t tf_fused_nodes(const TfLnVariant& v) {
  // Two float32 reductions of length C (mean, then variance) bound the rounding difference,
  // as for layer_norm.
  const Shape in_shape = v.shape;
  return check_fusion(tf_layer_norm_model(v),
                      {{v.unknown_rank ? "X0" : "X", random_tensor(DType::Float32, in_shape, 9, -3.0, 5.0)}},
                      in_shape.back());
}

TEST(NormFusionExports, TfLayerNormVariantsFuse) {
  TfLnVariant v;
  EXPECT_EQ(tf_fused_nodes(v), 1u) << "g2p_id_bert_mlm's form (opset 14, pools, Mul, Reciprocal)";
  EXPECT_EQ(rules_applied(tf_layer_norm_model(v)), std::vector<std::string>{"layer_norm_tf_before_opset17"});
  v.swapped = true;
  v.pow_square = true;
  v.div_one = true;
  EXPECT_EQ(tf_fused_nodes(v), 1u) << "operands swapped, Pow, Div(1, s)";
  for (int64_t opset : {17, 18}) {
    TfLnVariant r;
    r.opset = opset;
    r.pool = false;
    EXPECT_EQ(tf_fused_nodes(r), 1u) << "ReduceMean, opset " << opset;
    EXPECT_EQ(rules_applied(tf_layer_norm_model(r)), std::vector<std::string>{"layer_norm_tf"});
    r.axis = 2;
    EXPECT_EQ(tf_fused_nodes(r), 1u) << "last axis written as 2, opset " << opset;
  }
  TfLnVariant u;
  u.unknown_rank = true;
  EXPECT_EQ(tf_fused_nodes(u), 2u) << "pool over a value of undeclared rank (3 at run time)";
}

TEST(NormFusionExports, TfLayerNormNearMissesStayUnfused) {
  auto expect_unfused = [](const TfLnVariant& v, const char* what) { EXPECT_EQ(tf_fused_nodes(v), 12u) << what; };
  TfLnVariant v;
  v.shape = {2, 3, 4, kC};
  expect_unfused(v, "pool over a known rank-4 input (averages over two axes)");
  v = {};
  v.pool = false;
  v.opset = 17;
  v.axis = 1;
  expect_unfused(v, "ReduceMean over the middle axis");
  v = {};
  v.one = 2.0f;
  v.div_one = true;
  expect_unfused(v, "Div(2, s)");
  v = {};
  v.eps = 0.0f;
  expect_unfused(v, "eps 0");
  v = {};
  v.beta_size = 1;
  expect_unfused(v, "one-element beta");
  v = {};
  v.beta_minus_reversed = true;
  expect_unfused(v, "Sub(mean * sg, beta)");
  v = {};
  v.sg_is_output = true;
  expect_unfused(v, "sg is a graph output");
}

// ---- rms_norm ---------------------------------------------------------------------------------

struct RmsVariant {
  int64_t opset = 23;
  bool mul_square = false;  // Mul(x, x) instead of Pow(x, 2)
  int norm = 0;             // 0: x * Reciprocal(r), 1: x * Div(1, r), 2: Div(x, r)
  bool swapped = false;     // commutative operands the other way round
  bool half = false;        // X float16, Cast to float32 and back, gamma float16
  bool cast_after_gamma = false;  // with `half`: gamma float32, the Cast back after its Mul
  int64_t axis = -1;
  float exponent = 2.0f, one = 1.0f, eps = 1e-6f;
  int64_t gamma_size = kC;
  bool shared_inv = false;  // the reciprocal also read elsewhere
};

ModelBuilder rms_model(const RmsVariant& v) {
  ModelBuilder mb(v.opset);
  const DType io = v.half ? DType::Float16 : DType::Float32;
  mb.input("X", io, kShape);
  mb.initializer("gamma", random_values(v.cast_after_gamma ? DType::Float32 : io, {v.gamma_size}, 2, 0.5, 1.5));
  mb.initializer("e", Tensor::from_vector<float>({}, {v.exponent}));
  mb.initializer("eps", Tensor::from_vector<float>({}, {v.eps}));
  mb.initializer("one", Tensor::from_vector<float>({}, {v.one}));
  auto ordered = [&](const std::string& a, const std::string& b) {
    return v.swapped ? std::vector<std::string>{b, a} : std::vector<std::string>{a, b};
  };
  std::string x = "X";
  if (v.half) {
    mb.node("Cast", {"X"}, {"x32"}).name("to_float").attr("to", static_cast<int64_t>(DType::Float32));
    x = "x32";
  }
  if (v.mul_square) mb.node("Mul", {x, x}, {"sq"}).name("pow");
  else mb.node("Pow", {x, "e"}, {"sq"}).name("pow");
  reduce_mean(mb, v.opset, "sq", "ms", "mean", v.axis);
  mb.node("Add", ordered("ms", "eps"), {"ve"}).name("add_eps");
  mb.node("Sqrt", {"ve"}, {"r"}).name("sqrt");
  if (v.norm == 2) {
    mb.node("Div", {x, "r"}, {"n"}).name("div");
  } else {
    if (v.norm == 0) mb.node("Reciprocal", {"r"}, {"inv"}).name("rsqrt");
    else mb.node("Div", {"one", "r"}, {"inv"}).name("rsqrt");
    mb.node("Mul", ordered(x, "inv"), {"n"}).name("mul_x");
  }
  std::string n = "n";
  if (v.half && !v.cast_after_gamma) {
    mb.node("Cast", {"n"}, {"n16"}).name("to_half").attr("to", static_cast<int64_t>(DType::Float16));
    n = "n16";
  }
  if (v.cast_after_gamma) {
    mb.node("Mul", ordered("gamma", n), {"y32"}).name("mul_gamma");
    mb.node("Cast", {"y32"}, {"Y"}).name("to_half").attr("to", static_cast<int64_t>(DType::Float16));
  } else {
    mb.node("Mul", ordered("gamma", n), {"Y"}).name("mul_gamma");
  }
  mb.output("Y");
  if (v.shared_inv) {
    mb.node("Neg", {"inv"}, {"Z"}).name("neg");
    mb.output("Z");
  }
  return mb;
}

size_t rms_fused_nodes(const RmsVariant& v) {
  // One float32 reduction of length C (the mean of squares) bounds the rounding difference.
  return check_fusion(rms_model(v), {{"X", random_tensor(DType::Float32, kShape, 9, -3.0, 5.0)}}, kC);
}

TEST(NormFusionExports, RmsNormVariantsFuse) {
  for (int norm = 0; norm < 3; ++norm)
    for (bool mul_square : {false, true}) {
      RmsVariant v;
      v.norm = norm;
      v.mul_square = mul_square;
      v.swapped = norm == 1;
      EXPECT_EQ(rms_fused_nodes(v), 1u) << "norm form " << norm << (mul_square ? " Mul(x, x)" : " Pow");
    }
  RmsVariant v;
  v.axis = 2;
  EXPECT_EQ(rms_fused_nodes(v), 1u) << "last axis written as 2";
  EXPECT_EQ(rules_applied(rms_model(v)), std::vector<std::string>{"rms_norm"});
  for (int64_t opset : {13, 18}) {
    RmsVariant old;
    old.opset = opset;
    EXPECT_EQ(rms_fused_nodes(old), 1u) << "opset " << opset << " (the opset-23 kernel)";
    EXPECT_EQ(rules_applied(rms_model(old)), std::vector<std::string>{"rms_norm_before_opset23"});
  }
}

TEST(NormFusionExports, RmsNormAbsorbsTheFloat16Casts) {
  RmsVariant v;
  v.half = true;
  v.opset = 18;
  const ModelBuilder mb = rms_model(v);
  const Tensor x = random_values(DType::Float16, kShape, 9, -3.0, 5.0);
  auto plain = mb.session(opts(0));
  auto fused = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(fused->describe().nodes.size(), 1u);
  const Tensor a = run_single(*plain, {{"X", x}}), b = run_single(*fused, {{"X", x}});
  ASSERT_EQ(b.dtype(), DType::Float16);
  // The unfused graph rounds x / rms to float16 before the gamma product, then the product;
  // the fused kernel rounds once: three float16 roundings (unit roundoff 2^-11 relative each)
  // plus the float32 work between them.
  EXPECT_TRUE(tensors_near(b, a, 1e-6, 3 * 0.00048828125 + 1e-5));

  // The Cast back after the gamma Mul (gamma float32): the casts stay, the float32 part fuses.
  v.cast_after_gamma = true;
  const ModelBuilder mb2 = rms_model(v);
  auto fused2 = mb2.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(fused2->describe().nodes.size(), 3u) << "Cast, RMSNormalization, Cast";
  // One float16 rounding at the end on both sides; the float32 work between differs by the
  // reduction's rounding only.
  EXPECT_TRUE(tensors_near(run_single(*fused2, {{"X", x}}), run_single(*mb2.session(opts(0)), {{"X", x}}), 1e-6,
                           0.00048828125 + 1e-5));
}

TEST(NormFusionExports, RmsNormNearMissesStayUnfused) {
  RmsVariant v;
  v.axis = 1;
  EXPECT_EQ(rms_fused_nodes(v), 7u) << "middle axis";
  v = {};
  v.exponent = 3.0f;
  EXPECT_EQ(rms_fused_nodes(v), 7u) << "Pow(x, 3)";
  v = {};
  v.norm = 1;
  v.one = 2.0f;
  EXPECT_EQ(rms_fused_nodes(v), 7u) << "Div(2, r)";
  v = {};
  v.eps = 0.0f;
  EXPECT_EQ(rms_fused_nodes(v), 7u) << "eps 0";
  v = {};
  v.gamma_size = 1;
  EXPECT_EQ(rms_fused_nodes(v), 7u) << "one-element gamma";
  v = {};
  v.shared_inv = true;
  EXPECT_EQ(rms_fused_nodes(v), 8u) << "reciprocal read elsewhere";
}

// ---- gelu_tanh --------------------------------------------------------------------------------

struct TanhGeluVariant {
  int64_t opset = 20;
  int form = 0;               // the closing product's grouping, as GeluVariant in test_norm_fusion.cc
  int cube = 0;               // 0.044715 * x^3 as 0: Mul(Pow(x, 3), c), 1: Mul(x * (x * x), c) (torch.onnx),
                              // 2: x * (x * (c * x)) (jax2tf, magika_standard_v3_3)
  bool swapped = false;       // commutative operands the other way round
  float half = 0.5f, one = 1.0f, cubic = 0.044715f, k = 0.7978845608f, exponent = 3.0f;
  bool shared_tanh = false;   // another reader of Tanh's output
};

ModelBuilder tanh_gelu_model(const TanhGeluVariant& v) {
  ModelBuilder mb(v.opset);
  mb.input("X", DType::Float32, {3, 40});
  mb.initializer("half", Tensor::from_vector<float>({}, {v.half}));
  mb.initializer("one", Tensor::from_vector<float>({}, {v.one}));
  mb.initializer("cubic", Tensor::from_vector<float>({}, {v.cubic}));
  mb.initializer("k", Tensor::from_vector<float>({}, {v.k}));
  mb.initializer("three", Tensor::from_vector<float>({}, {v.exponent}));
  auto ordered = [&](const std::string& a, const std::string& b) {
    return v.swapped ? std::vector<std::string>{b, a} : std::vector<std::string>{a, b};
  };
  if (v.cube == 0) {
    mb.node("Pow", {"X", "three"}, {"x3"}).name("cube");
  } else if (v.cube == 1) {
    mb.node("Mul", {"X", "X"}, {"x2"}).name("square");
    mb.node("Mul", ordered("X", "x2"), {"x3"}).name("cube");
  }
  if (v.cube == 2) {
    mb.node("Mul", ordered("cubic", "X"), {"c1"}).name("mul_cubic");
    mb.node("Mul", ordered("X", "c1"), {"c2"}).name("mul_x1");
    mb.node("Mul", ordered("X", "c2"), {"c"}).name("mul_x2");
  } else {
    mb.node("Mul", ordered("x3", "cubic"), {"c"}).name("mul_cubic");
  }
  mb.node("Add", ordered("X", "c"), {"inner"}).name("add_x");
  mb.node("Mul", ordered("inner", "k"), {"u"}).name("mul_k");
  mb.node("Tanh", {"u"}, {"t"}).name("tanh");
  mb.node("Add", ordered("one", "t"), {"a"}).name("add_one");
  if (v.form == 0) {
    mb.node("Mul", ordered("X", "a"), {"m"}).name("mul_x");
    mb.node("Mul", ordered("m", "half"), {"Y"}).name("mul_half");
  } else if (v.form == 1) {
    mb.node("Mul", ordered("half", "a"), {"h"}).name("mul_half");
    mb.node("Mul", ordered("h", "X"), {"Y"}).name("mul_x");
  } else {
    mb.node("Mul", ordered("X", "half"), {"hx"}).name("mul_half");
    mb.node("Mul", ordered("a", "hx"), {"Y"}).name("mul_x");
  }
  mb.output("Y");
  if (v.shared_tanh) {
    mb.node("Neg", {"t"}, {"Z"}).name("neg");
    mb.output("Z");
  }
  return mb;
}

size_t tanh_gelu_nodes(const TanhGeluVariant& v) {
  // Elementwise: the unfused chain and the kernel each round a few times per element (k = 8).
  return check_fusion(tanh_gelu_model(v), {{"X", random_tensor(DType::Float32, {3, 40}, 4, -6.0, 6.0)}}, 8);
}

TEST(NormFusionExports, TanhGeluVariantsFuse) {
  for (int form = 0; form < 3; ++form)
    for (int cube = 0; cube < 3; ++cube)
      for (bool swapped : {false, true}) {
        TanhGeluVariant v;
        v.form = form;
        v.cube = cube;
        v.swapped = swapped;
        EXPECT_EQ(tanh_gelu_nodes(v), 1u) << "form " << form << " cube form " << cube << (swapped ? " swapped" : "");
      }
  TanhGeluVariant v;
  EXPECT_EQ(rules_applied(tanh_gelu_model(v)), std::vector<std::string>{"gelu_tanh"});
  v.opset = 13;
  v.cube = 1;
  EXPECT_EQ(tanh_gelu_nodes(v), 1u) << "opset 13 (the opset-20 kernel)";
  EXPECT_EQ(rules_applied(tanh_gelu_model(v)), std::vector<std::string>{"gelu_tanh_before_opset20"});
}

TEST(NormFusionExports, TanhGeluNearMissesStayUnfused) {
  auto expect_unfused = [](const TanhGeluVariant& v, size_t want, const char* what) {
    EXPECT_EQ(tanh_gelu_nodes(v), want) << what;
  };
  TanhGeluVariant v;
  v.half = 0.4f;
  expect_unfused(v, 8, "0.4 instead of 0.5");
  v = {};
  v.cubic = 0.04f;
  expect_unfused(v, 8, "0.04 instead of 0.044715");
  v = {};
  v.k = 0.8f;
  expect_unfused(v, 8, "0.8 instead of sqrt(2 / pi)");
  v = {};
  v.exponent = 2.0f;
  expect_unfused(v, 8, "Pow(x, 2)");
  v = {};
  v.cube = 2;
  v.cubic = 0.05f;
  expect_unfused(v, 9, "x * (x * (0.05 * x))");
  v = {};
  v.one = 2.0f;
  expect_unfused(v, 8, "2 + tanh");
  v = {};
  v.shared_tanh = true;
  expect_unfused(v, 9, "Tanh read elsewhere");
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
