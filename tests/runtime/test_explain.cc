// Session::explain (`onnxmini run --explain`): each kernel's describe() must
// announce the path its compute() then takes. For a model with a node of every
// family, the explanation from a run's observed shapes is compared with the
// kernel_variant and isa of that run's own trace, at level 0 (the model's nodes)
// and at the default level (fused nodes); CTest repeats it under
// ONNXMINI_ISA=portable.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "onnxmini/explain.h"
#include "onnxmini/profile.h"
#include "tests/common/model_builder.h"
#include "tests/common/variety_model.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

struct Explained {
  std::vector<KernelExplanation> rows;
  profile::Trace trace;
};

// One profiled run; the explanation from the shapes it observed.
Explained explain_after_run(const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds,
                            SessionOptions o) {
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "explain_profile_";
  auto s = mb.session(o);
  run_all(*s, feeds);
  const std::string path = s->end_profiling();
  Explained e;
  e.rows = s->explain(observed_inputs(path));
  e.trace = profile::read_trace(path);
  std::remove(path.c_str());
  return e;
}

void expect_matches_trace(const Explained& e) {
  std::map<std::string, const KernelExplanation*> by_node;
  for (const KernelExplanation& r : e.rows) by_node[r.node] = &r;
  ASSERT_EQ(e.rows.size(), e.trace.kernels.size());
  for (const profile::KernelEvent& k : e.trace.kernels) {
    ASSERT_EQ(by_node.count(k.node), 1u) << k.node;
    const KernelExplanation& r = *by_node[k.node];
    EXPECT_TRUE(r.shapes_known) << k.node;
    EXPECT_EQ(r.variant, k.variant) << k.node << " (" << k.op << "): " << r.note;
    EXPECT_EQ(r.isa, k.isa) << k.node;
    EXPECT_EQ(r.op_type, k.op) << k.node;
  }
}

TEST(Explain, EveryNodeAnnouncesThePathItTakesAtLevelZero) {
  SessionOptions o;
  o.graph_optimization_level = ORT_DISABLE_ALL;
  const Explained e = explain_after_run(variety_model(), variety_feeds(), o);
  ASSERT_EQ(e.rows.size(), kVarietyNodes);
  expect_matches_trace(e);
}

TEST(Explain, FusedNodesOfTheDefaultLevelAnnounceTheirPath) {
  const Explained e = explain_after_run(variety_model(), variety_feeds(), SessionOptions{});
  ASSERT_LT(e.rows.size(), kVarietyNodes);  // Conv + Relu, ReduceMean + ReduceMax fused
  bool mean_max = false;
  for (const KernelExplanation& r : e.rows) mean_max = mean_max || r.op_type == "ReduceMeanMax";
  EXPECT_TRUE(mean_max);
  expect_matches_trace(e);
}

TEST(Explain, ReferenceKernelsAreReferenceOnPortable) {
  SessionOptions o;
  o.kernels = KernelMode::Reference;
  o.graph_optimization_level = ORT_DISABLE_ALL;
  const Explained e = explain_after_run(variety_model(), variety_feeds(), o);
  expect_matches_trace(e);
  for (const KernelExplanation& r : e.rows) EXPECT_EQ(r.variant, "reference") << r.node;
}

TEST(Explain, GemmRowsGiveTheirBlockingAndThreads) {
  SessionOptions o;
  o.graph_optimization_level = ORT_DISABLE_ALL;
  o.intra_op_num_threads = 2;
  const Explained e = explain_after_run(variety_model(), variety_feeds(), o);
  for (const KernelExplanation& r : e.rows) {
    EXPECT_EQ(r.threads, 2) << r.node;
    if (r.node == "matmul" || r.node == "gemm") {
      EXPECT_NE(r.blocking.find("micro-tile"), std::string::npos) << r.node << ": " << r.blocking;
      EXPECT_NE(r.blocking.find("KC"), std::string::npos) << r.node << ": " << r.blocking;
    }
  }
}

TEST(Explain, WithoutARunOnlyStaticShapesAreKnown) {
  // Declared input shapes and constants: the Conv (input X declared, weight constant)
  // is planned; the Transpose after it needs the Relu's output shape, known at run time.
  SessionOptions o;
  o.graph_optimization_level = ORT_DISABLE_ALL;
  auto s = variety_model().session(o);
  const Explained run = explain_after_run(variety_model(), variety_feeds(), o);
  std::map<std::string, KernelExplanation> after_run;
  for (const KernelExplanation& r : run.rows) after_run[r.node] = r;
  std::map<std::string, KernelExplanation> rows;
  for (const KernelExplanation& r : s->explain()) rows[r.node] = r;
  EXPECT_TRUE(rows.at("conv").shapes_known);
  EXPECT_EQ(rows.at("conv").variant, after_run.at("conv").variant);
  EXPECT_FALSE(rows.at("transpose").shapes_known);
  EXPECT_EQ(rows.at("transpose").variant, "chosen at run time");
  EXPECT_EQ(rows.at("transpose").note, "input shapes unknown before a run");
  // A kernel whose path does not depend on shapes needs none.
  EXPECT_EQ(rows.at("relu").variant, "unary_loop");
}

TEST(Explain, BodyNodesFollowTheirIfOneLevelDeeper) {
  ModelBuilder then_b(13), else_b(13);
  then_b.node("Transpose", {"X"}, {"t_out"}).name("then_transpose").attr("perm", std::vector<int64_t>{1, 0});
  then_b.output("t_out", DType::Float32);
  else_b.node("Sigmoid", {"X"}, {"e_out"}).name("else_sigmoid");
  else_b.output("e_out", DType::Float32);
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {32, 32});
  mb.input("cond", DType::Bool, {});
  mb.node("If", {"cond"}, {"Z"}).name("if").attr("then_branch", then_b.graph()).attr("else_branch", else_b.graph());
  mb.output("Z", DType::Float32);
  Tensor cond(DType::Bool, {});
  cond.mutable_data<bool>()[0] = true;
  const Explained e = explain_after_run(mb, {{"X", random_tensor(DType::Float32, {32, 32}, 1)}, {"cond", cond}}, {});
  ASSERT_EQ(e.rows.size(), 3u);
  EXPECT_EQ(e.rows[0].node, "if");
  EXPECT_EQ(e.rows[0].depth, 0);
  std::map<std::string, KernelExplanation> rows;
  for (const KernelExplanation& r : e.rows) rows[r.node] = r;
  EXPECT_EQ(rows.at("then_transpose").depth, 1);
  EXPECT_EQ(rows.at("then_transpose").body, "if.then_branch");
  EXPECT_EQ(rows.at("else_sigmoid").body, "if.else_branch");
  // The branch that ran was observed: its Transpose's path is known and matches the trace.
  for (const profile::KernelEvent& k : e.trace.kernels)
    if (k.node == "then_transpose") {
      EXPECT_EQ(rows.at("then_transpose").variant, k.variant);
      EXPECT_EQ(rows.at("then_transpose").isa, k.isa);
    }
  // The sigmoid's path depends only on its dtype, known from the outer X.
  EXPECT_NE(rows.at("else_sigmoid").variant, "");
}

}  // namespace

// Pools choose their path from the window, so from X's shape: declared, it is known before a
// run, and describe() must name the path (and ISA) the run then reports, on every ISA (CTest's
// simd_paths_* reruns take *Pool*).
TEST(Explain, PoolPathsAreKnownFromDeclaredShapes) {
  using I = std::vector<int64_t>;
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 8, 20, 20});
  mb.input("X3", DType::Float32, {1, 2, 6, 6, 6});
  mb.input("D", DType::Float64, {1, 2, 9, 9});
  mb.node("MaxPool", {"X"}, {"max_s1"}).name("max_s1").attr("kernel_shape", I{3, 3}).attr("pads", I{1, 1, 1, 1});
  mb.node("MaxPool", {"X"}, {"max_s2"}).name("max_s2").attr("kernel_shape", I{2, 2}).attr("strides", I{2, 2});
  mb.node("AveragePool", {"X"}, {"avg"}).name("avg").attr("kernel_shape", I{3, 3}).attr("strides", I{2, 2});
  mb.node("MaxPool", {"X"}, {"max_i", "max_idx"}).name("max_indices").attr("kernel_shape", I{3, 3});
  mb.node("MaxPool", {"X3"}, {"max_3d"}).name("max_3d").attr("kernel_shape", I{2, 2, 2});
  mb.node("MaxPool", {"D"}, {"max_f64"}).name("max_f64").attr("kernel_shape", I{3, 3});
  for (const char* o : {"max_s1", "max_s2", "avg", "max_i", "max_idx", "max_3d", "max_f64"})
    mb.output(o, std::string(o) == "max_idx" ? DType::Int64 : std::string(o) == "max_f64" ? DType::Float64
                                                                                            : DType::Float32);
  SessionOptions o;
  o.graph_optimization_level = ORT_DISABLE_ALL;
  const Explained run = explain_after_run(
      mb,
      {{"X", random_tensor(DType::Float32, {1, 8, 20, 20}, 1)},
       {"X3", random_tensor(DType::Float32, {1, 2, 6, 6, 6}, 2)},
       {"D", random_tensor(DType::Float64, {1, 2, 9, 9}, 3)}},
      o);
  expect_matches_trace(run);
  auto s = mb.session(o);
  std::map<std::string, KernelExplanation> before;  // no run: the declared shapes only
  for (const KernelExplanation& r : s->explain()) before[r.node] = r;
  for (const KernelExplanation& r : run.rows) {
    const KernelExplanation& b = before.at(r.node);
    EXPECT_TRUE(b.shapes_known) << r.node;
    EXPECT_EQ(b.variant, r.variant) << r.node << ": " << b.note;
    EXPECT_EQ(b.isa, r.isa) << r.node;
  }
  // The paths differ by window, Indices, rank and dtype (names as docs/kernels/nn.md's pools).
  EXPECT_EQ(before.at("avg").variant, "avgpool2d_separable");
  EXPECT_EQ(before.at("max_indices").variant, "pool2d_direct");
  EXPECT_EQ(before.at("max_3d").variant, "pool_nd_direct");
  EXPECT_EQ(before.at("max_f64").variant, "maxpool2d_separable");
  EXPECT_EQ(before.at("max_f64").isa, "portable");
  EXPECT_NE(before.at("max_s1").variant.find("maxpool2d_"), std::string::npos);
}

// Einsum plans per operand shapes: with both declared, describe() names the plan the run
// reports (its summary is the kernel_variant); with an operand shape unknown before a run
// (a computed value, an undeclared input), the path waits for the run.
TEST(Explain, EinsumPlanIsKnownFromDeclaredShapes) {
  ModelBuilder mb(13);
  mb.input("A", DType::Float32, {4, 6, 8});
  mb.input("B", DType::Float32, {4, 8, 5});
  mb.input("C", DType::Float32, {6, 5}, /*rank_known=*/false);
  mb.node("Einsum", {"A", "B"}, {"AB"}).name("bmm").attr("equation", std::string("bij,bjk->bik"));
  mb.node("Einsum", {"AB", "C"}, {"Y"}).name("reduce").attr("equation", std::string("bik,ik->b"));
  mb.output("AB", DType::Float32);
  mb.output("Y", DType::Float32);
  SessionOptions o;
  o.graph_optimization_level = ORT_DISABLE_ALL;
  const Explained run = explain_after_run(mb,
                                          {{"A", random_tensor(DType::Float32, {4, 6, 8}, 1)},
                                           {"B", random_tensor(DType::Float32, {4, 8, 5}, 2)},
                                           {"C", random_tensor(DType::Float32, {6, 5}, 3)}},
                                          o);
  expect_matches_trace(run);
  auto s = mb.session(o);
  std::map<std::string, KernelExplanation> before;
  for (const KernelExplanation& r : s->explain()) before[r.node] = r;
  std::map<std::string, KernelExplanation> after;
  for (const KernelExplanation& r : run.rows) after[r.node] = r;
  EXPECT_TRUE(before.at("bmm").shapes_known);
  EXPECT_EQ(before.at("bmm").variant, after.at("bmm").variant);
  EXPECT_EQ(before.at("bmm").isa, after.at("bmm").isa);
  EXPECT_NE(before.at("bmm").variant, "chosen at run time");
  EXPECT_EQ(before.at("reduce").variant, "chosen at run time");  // AB: computed; C: undeclared
}
