// The enclosing graphs' constants inside If bodies. Constant folding
// (runtime/constant_folding.h, fold_subgraph_constants): body nodes on them fold at
// level 1, bit for bit the same outputs as level 0; overridable initializers and
// feeds are never folded; nested bodies see every enclosing scope's constants; the
// enclosing graph drops weights that only folded body nodes read. The plan
// (runtime/execution_plan.h, outer_bindings): a body kernel sees an outer constant as
// a constant input at creation (to prepack it), at any depth, never an overridable one.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/registry.h"
#include "tests/common/model_builder.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

// Outputs 1 when its KernelInfo saw input 0 as a constant at creation, else 0.
class SeesConstantKernel : public Kernel {
 public:
  explicit SeesConstantKernel(const KernelInfo& info) : constant_(info.constant_input(0) != nullptr) {}
  void prepare(KernelContext& ctx) override { ctx.allocate_output(0, DType::Float32, {1}); }
  void compute(KernelContext& ctx) override { ctx.output(0).mutable_data<float>()[0] = constant_ ? 1.f : 0.f; }

 private:
  bool constant_;
};
ONNXMINI_REGISTER_KERNEL("test_sees_constant", "test.onnxmini", "SeesConstant", 1, INT_MAX,
                         make_kernel<SeesConstantKernel>);

SessionOptions level(int l) {
  SessionOptions o;
  o.graph_optimization_level = l;
  return o;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// The rewrites of `s` whose node label contains `text`.
size_t rewrites_naming(const Session& s, const std::string& text) {
  size_t n = 0;
  for (const GraphRewrite& r : s.graph_rewrites()) n += r.rule == "constant_folding" && r.nodes.find(text) != std::string::npos;
  return n;
}

// silero_vad's pattern: the branch reorders an outer weight W [8, 4] with Slice + Concat
// (W's rows 4.. then rows ..4) and multiplies the feed X [2, 8] by it; the other branch
// returns X @ W as is.
ModelBuilder reordering_if(bool w_overridable) {
  ModelBuilder then_b(13), else_b(13);
  then_b.initializer("lo_start", Tensor::from_vector<int64_t>({1}, {0}));
  then_b.initializer("mid", Tensor::from_vector<int64_t>({1}, {4}));
  then_b.initializer("hi_end", Tensor::from_vector<int64_t>({1}, {8}));
  then_b.node("Slice", {"W", "lo_start", "mid"}, {"w_lo"}).name("slice_lo");
  then_b.node("Slice", {"W", "mid", "hi_end"}, {"w_hi"}).name("slice_hi");
  then_b.node("Concat", {"w_hi", "w_lo"}, {"w_re"}).name("reorder").attr("axis", int64_t(0));
  then_b.node("MatMul", {"X", "w_re"}, {"t"}).name("then_matmul");
  then_b.output("t", DType::Float32);
  else_b.node("MatMul", {"X", "W"}, {"e"}).name("else_matmul");
  else_b.output("e", DType::Float32);

  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {-1, 8});  // rows change from run to run
  mb.input("cond", DType::Bool, {});
  if (w_overridable) mb.input("W", DType::Float32, {8, 4});
  mb.initializer("W", random_tensor(DType::Float32, {8, 4}, 7));
  mb.node("If", {"cond"}, {"Z"}).name("if").attr("then_branch", then_b.graph()).attr("else_branch", else_b.graph());
  mb.output("Z");
  return mb;
}

}  // namespace

TEST(SubgraphFolding, BodyNodesOnOuterConstantsFoldBitForBit) {
  const ModelBuilder mb = reordering_if(false);
  auto plain = mb.session(level(0)), folded = mb.session(level(1));
  EXPECT_EQ(rewrites_naming(*plain, "in body"), 0u);
  EXPECT_EQ(rewrites_naming(*folded, "Slice 'slice_lo'"), 1u);
  EXPECT_EQ(rewrites_naming(*folded, "Slice 'slice_hi'"), 1u);
  EXPECT_EQ(rewrites_naming(*folded, "Concat 'reorder'"), 1u);
  EXPECT_EQ(rewrites_naming(*folded, "MatMul"), 0u);  // reads the feed X
  // Shapes that change and come back (each has its memory plan), both branches.
  for (int64_t rows : {2, 5, 1, 2})
    for (bool c : {true, false}) {
      const std::vector<std::pair<std::string, Tensor>> feeds = {
          {"X", random_tensor(DType::Float32, {rows, 8}, static_cast<uint32_t>(rows))},
          {"cond", Tensor::scalar<bool>(c)}};
      EXPECT_TRUE(same_bits(run_single(*folded, feeds), run_single(*plain, feeds))) << "cond " << c << " rows " << rows;
    }
}

TEST(SubgraphFolding, OuterWeightOnlyFoldedNodesReadIsStillThereForTheOtherBranch) {
  // else_branch still reads W itself: the main graph keeps it, and the folded
  // reordering is a constant of then_branch (so the weights grow by none of the main graph's).
  const ModelBuilder mb = reordering_if(false);
  auto folded = mb.session(level(1));
  EXPECT_EQ(folded->weight_bytes(), 8 * 4 * sizeof(float));
}

TEST(SubgraphFolding, OverridableOuterInitializersAreNotFolded) {
  const ModelBuilder mb = reordering_if(true);
  auto plain = mb.session(level(0)), folded = mb.session(level(1));
  EXPECT_EQ(rewrites_naming(*folded, "in body"), 0u);
  // A fed W replaces the default in the branch: the result follows the feed.
  const Tensor x = random_tensor(DType::Float32, {2, 8}, 3), w = random_tensor(DType::Float32, {8, 4}, 4);
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"X", x}, {"cond", Tensor::scalar<bool>(true)}, {"W", w}};
  const Tensor a = run_single(*folded, feeds), b = run_single(*plain, feeds);
  EXPECT_TRUE(same_bits(a, b));
  const Tensor with_default = run_single(*folded, {{"X", x}, {"cond", Tensor::scalar<bool>(true)}});
  EXPECT_FALSE(same_bits(a, with_default));
}

TEST(SubgraphFolding, NestedBodiesFoldOnEveryEnclosingScopesConstants) {
  // main: K [3] initializer; If(c1) then { If(c2) then { Neg(K) + X } else { X } } else { X }.
  // Neg(K) two levels down folds; the middle body and the main If stop reading K,
  // so the main graph drops it (weight_bytes 0).
  ModelBuilder inner_then(13), inner_else(13), outer_then(13), outer_else(13);
  inner_then.node("Neg", {"K"}, {"nk"}).name("inner_neg");
  inner_then.node("Add", {"nk", "X"}, {"it"}).name("inner_add");
  inner_then.output("it", DType::Float32);
  inner_else.node("Identity", {"X"}, {"ie"});
  inner_else.output("ie", DType::Float32);
  outer_then.node("If", {"c2"}, {"ot"}).name("inner_if").attr("then_branch", inner_then.graph()).attr(
      "else_branch", inner_else.graph());
  outer_then.output("ot", DType::Float32);
  outer_else.node("Identity", {"X"}, {"oe"});
  outer_else.output("oe", DType::Float32);
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {3});
  mb.input("c1", DType::Bool, {});
  mb.input("c2", DType::Bool, {});
  mb.initializer("K", Tensor::from_vector<float>({3}, {1.5f, -2.f, 0.25f}));
  mb.node("If", {"c1"}, {"Z"}).name("outer_if").attr("then_branch", outer_then.graph()).attr("else_branch",
                                                                                              outer_else.graph());
  mb.output("Z");
  auto plain = mb.session(level(0)), folded = mb.session(level(1));
  EXPECT_EQ(rewrites_naming(*folded, "Neg 'inner_neg'"), 1u);
  EXPECT_EQ(plain->weight_bytes(), 3 * sizeof(float));
  EXPECT_EQ(folded->weight_bytes(), 0u);
  const Tensor x = Tensor::from_vector<float>({3}, {10, 20, 30});
  for (bool c1 : {true, false})
    for (bool c2 : {true, false}) {
      const std::vector<std::pair<std::string, Tensor>> feeds = {
          {"X", x}, {"c1", Tensor::scalar<bool>(c1)}, {"c2", Tensor::scalar<bool>(c2)}};
      const Tensor got = run_single(*folded, feeds);
      EXPECT_TRUE(same_bits(got, run_single(*plain, feeds)));
      if (c1 && c2) EXPECT_TRUE(same_bits(got, Tensor::from_vector<float>({3}, {8.5f, 22.f, 29.75f})));
    }
}

TEST(SubgraphConstants, BodyKernelsSeeOuterConstantsAtCreationAtAnyDepth) {
  // main: K initializer, D overridable initializer, X feed;
  // If(c) then { [SeesConstant(K), SeesConstant(D), SeesConstant(X), If(c) then { SeesConstant(K) }] }.
  ModelBuilder inner_then(13), inner_else(13), outer_then(13), outer_else(13);
  for (ModelBuilder* b : {&inner_then, &inner_else, &outer_then, &outer_else}) b->import_domain("test.onnxmini", 1);
  inner_then.node("SeesConstant", {"K"}, {"deep_k"}).domain("test.onnxmini");
  inner_then.output("deep_k", DType::Float32);
  inner_else.node("SeesConstant", {"X"}, {"deep_x"}).domain("test.onnxmini");
  inner_else.output("deep_x", DType::Float32);
  outer_then.node("SeesConstant", {"K"}, {"k"}).domain("test.onnxmini");
  outer_then.node("SeesConstant", {"D"}, {"d"}).domain("test.onnxmini");
  outer_then.node("SeesConstant", {"X"}, {"x"}).domain("test.onnxmini");
  outer_then.node("If", {"c"}, {"deep"}).attr("then_branch", inner_then.graph()).attr("else_branch",
                                                                                       inner_else.graph());
  outer_then.node("Concat", {"k", "d", "x", "deep"}, {"t"}).attr("axis", int64_t(0));
  outer_then.output("t", DType::Float32);
  outer_else.node("Concat", {"K", "K", "K", "K"}, {"e"}).attr("axis", int64_t(0));
  outer_else.output("e", DType::Float32);
  ModelBuilder mb(13);
  mb.import_domain("test.onnxmini", 1);
  mb.input("X", DType::Float32, {1});
  mb.input("c", DType::Bool, {});
  mb.input("D", DType::Float32, {1});
  mb.initializer("D", Tensor::from_vector<float>({1}, {5}));
  mb.initializer("K", Tensor::from_vector<float>({1}, {7}));
  mb.node("If", {"c"}, {"Z"}).attr("then_branch", outer_then.graph()).attr("else_branch", outer_else.graph());
  mb.output("Z");
  for (int l : {0, 1}) {
    auto s = mb.session(level(l));
    const Tensor got = run_single(*s, {{"X", Tensor::from_vector<float>({1}, {3})}, {"c", Tensor::scalar<bool>(true)}});
    EXPECT_TRUE(same_bits(got, Tensor::from_vector<float>({4}, {1, 0, 0, 1}))) << "level " << l;
  }
}
