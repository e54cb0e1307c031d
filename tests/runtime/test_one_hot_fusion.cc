// The one_hot_matmul rule (runtime/graph_fusion_one_hot.h) and its kernel
// (kernels/tensor/one_hot_matmul.cc): [Expand ->] Equal(X, V) -> Cast(float) -> MatMul(W)
// [+ bias] [-> activation] becomes one OneHotMatMul node whose outputs equal the unfused
// graph's (fast and reference kernels, 1 and 2 threads): int32 and int64 values, V as
// [N] and [1, 1, N], runs starting at 0 and elsewhere (the gather path) and other V
// (duplicates, no order: the compare path), values outside the run and negative ones, X's
// last dimension 1 or N, an Expand that broadcasts X's leading axes, a bias with extra
// leading 1s, a fused activation. Near-misses stay unfused: W with an inf, a non-constant
// W, the Cast's output read twice, a Cast to double. The variant shows which path ran.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

constexpr int64_t kD = 6;

struct OneHotSpec {
  DType dtype = DType::Int32;
  Shape x{2, 5, 1};
  std::vector<int64_t> v{0, 1, 2, 3, 4, 5, 6};  // V's values (N = its size)
  bool v_rank3 = true;                          // V [1, 1, N] (else [N])
  Shape expand;                                 // Expand(X, this) first when not empty
  Shape bias{kD};                               // empty: no bias
  std::string act;                              // an activation after the bias
  // Near-misses.
  bool w_inf = false, w_input = false, cast_output = false, cast_double = false;
};

Tensor int_tensor(DType dt, const Shape& shape, const std::vector<int64_t>& vals) {
  if (dt == DType::Int64) return Tensor::from_vector<int64_t>(shape, vals);
  return Tensor::from_vector<int32_t>(shape, std::vector<int32_t>(vals.begin(), vals.end()));
}

ModelBuilder one_hot_model(const OneHotSpec& s) {
  const int64_t N = static_cast<int64_t>(s.v.size());
  ModelBuilder mb(14);
  mb.input("X", s.dtype, s.x);
  mb.initializer("V", int_tensor(s.dtype, s.v_rank3 ? Shape{1, 1, N} : Shape{N}, s.v));
  Tensor w = random_tensor(s.cast_double ? DType::Float64 : DType::Float32, {N, kD}, 11);
  if (s.w_inf) w.mutable_data<float>()[3] = INFINITY;
  if (s.w_input) mb.input("W", DType::Float32, {N, kD});
  else mb.initializer("W", w);
  std::string x = "X";
  if (!s.expand.empty()) {
    mb.initializer("S", Tensor::from_vector<int64_t>({static_cast<int64_t>(s.expand.size())}, s.expand));
    mb.node("Expand", {"X", "S"}, {"XE"}).name("broadcast");
    x = "XE";
  }
  mb.node("Equal", {x, "V"}, {"E"}).name("equal");
  mb.node("Cast", {"E"}, {"F"}).name("cast").attr("to", static_cast<int64_t>(s.cast_double ? 11 : 1));
  std::string y = s.bias.empty() && s.act.empty() ? "Y" : "M";
  mb.node("MatMul", {"F", "W"}, {y}).name("embed");
  if (!s.bias.empty()) {
    mb.initializer("B", random_tensor(DType::Float32, s.bias, 12));
    const std::string out = s.act.empty() ? "Y" : "A";
    mb.node("Add", {y, "B"}, {out}).name("bias");
    y = out;
  }
  if (!s.act.empty()) mb.node(s.act, {y}, {"Y"}).name("act");
  mb.output("Y");
  if (s.cast_output) mb.output("F");
  return mb;
}

std::vector<std::pair<std::string, Tensor>> feeds(const OneHotSpec& s) {
  const int64_t n = shape_numel(s.x), N = static_cast<int64_t>(s.v.size());
  std::vector<int64_t> vals(static_cast<size_t>(n));
  // In the run, below it, above it, negative: -2 .. N + 2 cycling, and V's own values.
  for (int64_t i = 0; i < n; ++i) vals[i] = i % 3 == 0 ? s.v[i % N] : (i * 7) % (N + 5) - 2;
  std::vector<std::pair<std::string, Tensor>> f{{"X", int_tensor(s.dtype, s.x, vals)}};
  if (s.w_input) f.push_back({"W", random_tensor(DType::Float32, {N, kD}, 11)});
  return f;
}

size_t fused_nodes(const OneHotSpec& s) {
  auto session = one_hot_model(s).session(opts(ORT_ENABLE_ALL));
  const auto nodes = session->describe().nodes;
  return std::count_if(nodes.begin(), nodes.end(), [](const auto& n) { return n.op_type == "OneHotMatMul"; });
}

// The OneHotMatMul's kernel_variant in a profiled run (fast kernels).
std::string variant(const OneHotSpec& s) {
  return profiled_variant(one_hot_model(s), opts(ORT_ENABLE_ALL), feeds(s), "one_hot_matmul_");
}

TEST(OneHotFusion, EmbeddingIsOneNode) {
  std::vector<std::pair<std::string, OneHotSpec>> cases;
  cases.push_back({"int32, V [1,1,N] from 0, bias [D]", {}});
  OneHotSpec s;
  s.dtype = DType::Int64, s.v = {3, 4, 5, 6, 7}, s.v_rank3 = false, s.bias = {1, 1, kD}, s.act = "Relu";
  cases.push_back({"int64, V [N] from 3, bias [1,1,D], Relu", s});
  s = {};
  s.expand = {2, 5, 7};
  cases.push_back({"Expand to the one-hot shape (jax2tf)", s});
  s = {};
  s.x = {1, 4, 1}, s.expand = {3, 4, 1}, s.bias = {};
  cases.push_back({"Expand broadcasting the leading axes, no bias", s});
  s = {};
  s.act = "Sigmoid";
  cases.push_back({"bias and Sigmoid", s});
  s = {};
  s.v = {4, 1, 7, 2, 9};
  cases.push_back({"V in no order", s});
  s = {};
  s.v = {1, 1, 2, 0};
  cases.push_back({"V with a duplicate (two rows add)", s});
  s = {};
  s.x = {2, 3, 7};
  cases.push_back({"X's last dimension N (Equal element by element)", s});
  for (const auto& [what, spec] : cases) {
    // The unfused graph runs Equal, Cast, MatMul [Expand, Add, act]; fused: the one node.
    EXPECT_EQ(check_fusion(one_hot_model(spec), feeds(spec), static_cast<int64_t>(spec.v.size())), 1u) << what;
    EXPECT_EQ(check_fusion(one_hot_model(spec), feeds(spec), static_cast<int64_t>(spec.v.size()), 2), 1u)
        << what << ", 2 threads";
    EXPECT_EQ(fused_nodes(spec), 1u) << what;
  }
}

TEST(OneHotFusion, VariantNamesThePath) {
  OneHotSpec s;
  EXPECT_EQ(variant(s), "one_hot_matmul_gather");
  s.expand = {2, 5, 7};
  EXPECT_EQ(variant(s), "one_hot_matmul_gather") << "an Expand keeps X's last dimension 1";
  s = {};
  s.v = {4, 1, 7, 2, 9};
  EXPECT_EQ(variant(s), "one_hot_matmul_compare") << "V is not a run";
  s = {};
  s.x = {2, 3, 7};
  EXPECT_EQ(variant(s), "one_hot_matmul_compare") << "X's last dimension is N";
}

TEST(OneHotFusion, NearMissesStayUnfused) {
  std::vector<std::pair<std::string, OneHotSpec>> misses;
  OneHotSpec s;
  s.w_inf = true;
  misses.push_back({"W holds an inf", s});
  s = {};
  s.w_input = true;
  misses.push_back({"W is not a constant", s});
  s = {};
  s.cast_output = true;
  misses.push_back({"the one-hot matrix is read twice", s});
  for (const auto& [what, spec] : misses) {
    // W with an inf: unfused, 0 * inf is NaN in every row of both runs (tensors_near: NaN == NaN).
    check_fusion(one_hot_model(spec), feeds(spec), static_cast<int64_t>(spec.v.size()));
    EXPECT_EQ(fused_nodes(spec), 0u) << what;
  }
  s = {};
  s.cast_double = true, s.bias = {};
  EXPECT_EQ(fused_nodes(s), 0u) << "Cast to double";
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
