// Normalizations written without their gamma Mul (Keras / torch scale=False), with or without
// beta (center=False): layer_norm (runtime/graph_fusion_norm.cc) and rms_norm
// (graph_fusion_norm_exports.cc) fuse them with a new constant of ones as the scale, its size
// from beta or X's declared last axis; unknown size: left alone. Each fused graph is checked
// against the unfused one (check_fusion: fast and reference kernels, the error budget of two
// float32 reductions of length C); near-misses keep their node count.
#include <gtest/gtest.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

constexpr int64_t kC = 48;
const Shape kShape = {2, 5, kC};

struct Variant {
  bool beta = false;
  bool x_declared = true;         // X's shape declared (else rank and size unknown)
  bool mul_by_input = false;      // the normalized value read by Mul(., graph input G) (not a gamma)
  bool scalar_beta = false;       // beta of one element
};

Tensor x_input() { return random_tensor(DType::Float32, kShape, 9, -3.0, 5.0); }

std::vector<std::pair<std::string, Tensor>> feeds(const Variant& v) {
  std::vector<std::pair<std::string, Tensor>> f{{"X", x_input()}};
  if (v.mul_by_input) f.push_back({"G", random_tensor(DType::Float32, {kC}, 4)});
  return f;
}

// The tail after the normalized value `n`: [Mul(n, G input)] [Add(., beta)], writing Y.
void add_tail(ModelBuilder& mb, const Variant& v, const std::string& n) {
  std::string cur = n;
  if (v.mul_by_input) {
    mb.input("G", DType::Float32, {kC});
    mb.node("Mul", {cur, "G"}, {"ng"}).name("mul_g");
    cur = "ng";
  }
  if (v.beta) {
    mb.initializer("beta", random_tensor(DType::Float32, v.scalar_beta ? Shape{1} : Shape{kC}, 3));
    mb.node("Add", {cur, "beta"}, {"Y"}).name("add_beta");
  } else {
    mb.node("Identity", {cur}, {"Y"}).name("out");
  }
  mb.output("Y");
}

void add_x(ModelBuilder& mb, const Variant& v) {
  if (v.x_declared) mb.input("X", DType::Float32, kShape);
  else mb.input("X", DType::Float32, {}, false);
}

// ReduceMean -> Sub -> Pow 2 -> ReduceMean -> Add(eps) -> Sqrt -> Div, opset 17.
ModelBuilder layer_norm_model(const Variant& v) {
  ModelBuilder mb(17);
  add_x(mb, v);
  mb.initializer("two", Tensor::from_vector<float>({}, {2.0f}));
  mb.initializer("eps", Tensor::from_vector<float>({}, {1e-5f}));
  mb.node("ReduceMean", {"X"}, {"m"}).name("mean").attr("axes", std::vector<int64_t>{-1});
  mb.node("Sub", {"X", "m"}, {"d"}).name("sub");
  mb.node("Pow", {"d", "two"}, {"sq"}).name("sq");
  mb.node("ReduceMean", {"sq"}, {"var"}).name("var").attr("axes", std::vector<int64_t>{-1});
  mb.node("Add", {"var", "eps"}, {"ve"}).name("add_eps");
  mb.node("Sqrt", {"ve"}, {"s"}).name("sqrt");
  mb.node("Div", {"d", "s"}, {"n"}).name("div");
  add_tail(mb, v, "n");
  return mb;
}

// Mul(x, x) -> ReduceMean -> Add(eps) -> Sqrt -> Div(x, .), opset 23.
ModelBuilder rms_norm_model(const Variant& v) {
  ModelBuilder mb(23);
  add_x(mb, v);
  mb.initializer("eps", Tensor::from_vector<float>({}, {1e-6f}));
  mb.initializer("axes", Tensor::from_vector<int64_t>({1}, {-1}));
  mb.node("Mul", {"X", "X"}, {"sq"}).name("sq");
  mb.node("ReduceMean", {"sq", "axes"}, {"ms"}).name("ms");
  mb.node("Add", {"ms", "eps"}, {"me"}).name("add_eps");
  mb.node("Sqrt", {"me"}, {"r"}).name("sqrt");
  mb.node("Div", {"X", "r"}, {"n"}).name("div");
  add_tail(mb, v, "n");
  return mb;
}

std::vector<std::string> ops_after(const ModelBuilder& mb) {
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  std::vector<std::string> ops;
  for (const auto& n : s->describe().nodes) ops.push_back(n.op_type);
  return ops;
}

TEST(NormFusionNoGamma, LayerNormWithoutGammaFusesWithOnes) {
  Variant v;
  EXPECT_EQ(check_fusion(layer_norm_model(v), feeds(v), kC), 1u) << "no gamma, no beta (Identity folded)";
  EXPECT_EQ(ops_after(layer_norm_model(v)), std::vector<std::string>{"LayerNormalization"});
  v.beta = true;
  EXPECT_EQ(check_fusion(layer_norm_model(v), feeds(v), kC), 1u) << "no gamma, beta";
  v.x_declared = false;  // C from beta
  EXPECT_EQ(check_fusion(layer_norm_model(v), feeds(v), kC), 1u) << "no gamma, beta, X undeclared";
  EXPECT_EQ(check_fusion(layer_norm_model(v), feeds(v), kC, 2), 1u) << "2 threads";
}

TEST(NormFusionNoGamma, LayerNormNearMissesStayUnfused) {
  Variant v;
  v.x_declared = false;  // no beta, no declared size: the ones' size is unknown
  EXPECT_EQ(check_fusion(layer_norm_model(v), feeds(v), kC), 7u) << "size unknown";
  v = {};
  v.mul_by_input = true;  // a Mul by a non-constant is not a gamma
  EXPECT_EQ(check_fusion(layer_norm_model(v), feeds(v), kC), 8u) << "Mul by an input";
  v = {};
  v.beta = true;
  v.scalar_beta = true;  // Add(n, one value): not LayerNorm's [C] bias; the Add stays after it
  EXPECT_EQ(check_fusion(layer_norm_model(v), feeds(v), kC), 2u) << "one-element beta";
}

TEST(NormFusionNoGamma, RmsNormWithoutGammaFusesWithOnes) {
  Variant v;
  EXPECT_EQ(check_fusion(rms_norm_model(v), feeds(v), kC), 1u) << "no gamma";
  EXPECT_EQ(ops_after(rms_norm_model(v)), std::vector<std::string>{"RMSNormalization"});
  v.beta = true;  // an Add after it stays an Add
  EXPECT_EQ(check_fusion(rms_norm_model(v), feeds(v), kC), 2u) << "no gamma, then Add";
  EXPECT_EQ(check_fusion(rms_norm_model(v), feeds(v), kC, 2), 2u) << "2 threads";
}

TEST(NormFusionNoGamma, RmsNormNearMissesStayUnfused) {
  Variant v;
  v.x_declared = false;
  EXPECT_EQ(check_fusion(rms_norm_model(v), feeds(v), kC), 5u) << "size unknown";
  v = {};
  v.mul_by_input = true;
  EXPECT_EQ(check_fusion(rms_norm_model(v), feeds(v), kC), 6u) << "Mul by an input";
}

// ---- layer_norm_tf: Keras LayerNormalization(scale=False and / or center=False) -----------

struct TfVariant {
  bool gamma = false;        // scale=True: sg = Reciprocal(..) * gamma
  bool beta = false;         // center=True: Sub(beta, mean * sg); else Neg(mean) * sg
  bool pool = true;          // GlobalAveragePool means (g2p_id_bert_mlm), else ReduceMean (opset 18)
  bool x_declared = true;
  bool neg_read_twice = false;  // Neg(mean) also a graph output
};

// tf.nn.batch_normalization as tf2onnx writes it: inv = Reciprocal(Sqrt(var + eps)) [* gamma],
// Y = X * inv + (beta - mean * inv | -mean * inv).
ModelBuilder tf_model(const TfVariant& v) {
  ModelBuilder mb(v.pool ? 14 : 18);
  if (v.x_declared) mb.input("X", DType::Float32, kShape);
  else mb.input("X", DType::Float32, {}, false);
  mb.initializer("eps", Tensor::from_vector<float>({}, {1e-3f}));
  auto mean = [&](const std::string& in, const std::string& out, const std::string& name) {
    if (v.pool) {
      mb.node("GlobalAveragePool", {in}, {out}).name(name);
    } else {
      mb.initializer("axes_" + name, Tensor::from_vector<int64_t>({1}, {-1}));
      mb.node("ReduceMean", {in, "axes_" + name}, {out}).name(name);
    }
  };
  mean("X", "mean", "moments/mean");
  mb.node("Sub", {"X", "mean"}, {"d"}).name("moments/SquaredDifference");
  mb.node("Mul", {"d", "d"}, {"sq"}).name("square");
  mean("sq", "var", "moments/variance");
  mb.node("Add", {"var", "eps"}, {"ve"}).name("batchnorm/add");
  mb.node("Sqrt", {"ve"}, {"s"}).name("batchnorm/Rsqrt");
  mb.node("Reciprocal", {"s"}, {v.gamma ? "r" : "sg"}).name("batchnorm/Rsqrt__9");
  if (v.gamma) {
    mb.initializer("gamma", random_tensor(DType::Float32, {kC}, 2, 0.5, 1.5));
    mb.node("Mul", {"r", "gamma"}, {"sg"}).name("batchnorm/mul");
  }
  mb.node("Mul", {"X", "sg"}, {"xs"}).name("batchnorm/mul_1");
  if (v.beta) {
    mb.initializer("beta", random_tensor(DType::Float32, {kC}, 3));
    mb.node("Mul", {"mean", "sg"}, {"mm"}).name("batchnorm/mul_2");
    mb.node("Sub", {"beta", "mm"}, {"shift"}).name("batchnorm/sub");
  } else {
    mb.node("Neg", {"mean"}, {"nm"}).name("batchnorm/Neg");
    mb.node("Mul", {"nm", "sg"}, {"shift"}).name("batchnorm/mul_2");
  }
  mb.node("Add", {"xs", "shift"}, {"Y"}).name("batchnorm/add_1");
  mb.output("Y");
  if (v.neg_read_twice) mb.output("nm");
  return mb;
}

size_t tf_nodes(const TfVariant& v) { return check_fusion(tf_model(v), {{"X", x_input()}}, kC); }

TEST(NormFusionNoGamma, KerasLayerNormWithoutScaleOrCenterFuses) {
  for (bool pool : {true, false}) {
    TfVariant v;
    v.pool = pool;
    EXPECT_EQ(tf_nodes(v), 1u) << "scale=False, center=False, pool " << pool;
    v.beta = true;
    EXPECT_EQ(tf_nodes(v), 1u) << "scale=False, pool " << pool;
    v.beta = false, v.gamma = true;
    EXPECT_EQ(tf_nodes(v), 1u) << "center=False, pool " << pool;
    EXPECT_EQ(ops_after(tf_model(v)), std::vector<std::string>{"LayerNormalization"});
  }
  TfVariant v;
  v.beta = true;
  v.pool = false;
  v.x_declared = false;  // the ones' size from beta
  EXPECT_EQ(tf_nodes(v), 1u) << "scale=False, X undeclared";
}

TEST(NormFusionNoGamma, KerasLayerNormNearMissesStayUnfused) {
  TfVariant v;
  v.pool = false;
  v.x_declared = false;  // neither gamma nor beta, no declared size
  EXPECT_EQ(tf_nodes(v), 11u) << "size unknown";
  v = {};
  v.neg_read_twice = true;
  EXPECT_EQ(tf_nodes(v), 11u) << "Neg(mean) read elsewhere";
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
