// The executor's subgraphs, through If: outer-scope values by name at any depth,
// implicit inputs kept alive and ordered, bodies planned once, subgraph
// initializers and Constant nodes, branch outputs of different shapes, errors
// inside bodies, profiler events of subgraph nodes, concurrent runs.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "kernels/registry.h"
#include "onnxmini/profile.h"
#include "tests/common/model_builder.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

// Counts its constructions: a body's kernels are created once, when the session plans it.
std::atomic<int> g_planned{0};
class CountedIdentityKernel : public Kernel {
 public:
  explicit CountedIdentityKernel(const KernelInfo&) { ++g_planned; }
  void prepare(KernelContext& ctx) override { ctx.set_output(0, ctx.input_value(0)); }
  void compute(KernelContext&) override {}
};
ONNXMINI_REGISTER_KERNEL("test_subgraphs", "test.onnxmini", "CountedIdentity", 1, INT_MAX,
                         make_kernel<CountedIdentityKernel>);

Tensor bool_scalar(bool b) { return Tensor::scalar<bool>(b); }

// then: Add(Y, X) - both from the main graph; else: Mul(Y, C) with C a body initializer.
ModelBuilder if_model() {
  ModelBuilder then_b(13), else_b(13);
  then_b.node("Add", {"Y", "X"}, {"t_out"}).name("then_add");
  then_b.output("t_out", DType::Float32);
  else_b.initializer("C", Tensor::from_vector<float>({3}, {10, 20, 30}));
  else_b.node("Mul", {"Y", "C"}, {"e_out"}).name("else_mul");
  else_b.output("e_out", DType::Float32);

  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {3});
  mb.input("cond", DType::Bool, {});
  // The If is listed before the node producing Y, which only the bodies read:
  // the implicit input must order Relu first.
  mb.node("If", {"cond"}, {"Z"}).name("if").attr("then_branch", then_b.graph()).attr("else_branch", else_b.graph());
  mb.node("Relu", {"X"}, {"Y"}).name("relu");
  mb.output("Z");
  return mb;
}

}  // namespace

TEST(Subgraphs, BranchesReadOuterValues) {
  auto s = if_model().session();
  Tensor x = Tensor::from_vector<float>({3}, {-1, 2, 3});
  EXPECT_TRUE(tensors_near(run_single(*s, {{"X", x}, {"cond", bool_scalar(true)}}),
                           Tensor::from_vector<float>({3}, {-1, 4, 6}), 0, 0));
  EXPECT_TRUE(tensors_near(run_single(*s, {{"X", x}, {"cond", bool_scalar(false)}}),
                           Tensor::from_vector<float>({3}, {0, 40, 90}), 0, 0));
}

TEST(Subgraphs, ImplicitInputsOrderTheGraph) {
  auto s = if_model().session();
  const auto d = s->describe();
  ASSERT_EQ(d.nodes.size(), 2u);
  EXPECT_EQ(d.nodes[0].op_type, "Relu");  // producer of an implicit input runs first
  EXPECT_EQ(d.nodes[1].op_type, "If");
  EXPECT_EQ(d.nodes[1].kernel, "if");
}

TEST(Subgraphs, NestedBodiesReadEveryEnclosingScope) {
  // main: X, Y = Neg(X); If(c1) then { M = Abs(Y); If(c2) then { Sum(X, Y, M) } else { M } } else { X }
  ModelBuilder inner_then(13), inner_else(13), outer_then(13), outer_else(13);
  inner_then.node("Sum", {"X", "Y", "M"}, {"it"}).name("inner_sum");  // X, Y two levels up; M one level up
  inner_then.output("it", DType::Float32);
  inner_else.node("Identity", {"M"}, {"ie"}).name("inner_id");
  inner_else.output("ie", DType::Float32);
  outer_then.node("Abs", {"Y"}, {"M"}).name("middle_abs");
  outer_then.node("If", {"c2"}, {"ot"})
      .name("inner_if")
      .attr("then_branch", inner_then.graph())
      .attr("else_branch", inner_else.graph());
  outer_then.output("ot", DType::Float32);
  outer_else.node("Identity", {"X"}, {"oe"}).name("outer_else_id");
  outer_else.output("oe", DType::Float32);
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2});
  mb.input("c1", DType::Bool, {});
  mb.input("c2", DType::Bool, {});
  mb.node("Neg", {"X"}, {"Y"}).name("neg");
  mb.node("If", {"c1"}, {"Z"}).name("outer_if").attr("then_branch", outer_then.graph()).attr("else_branch",
                                                                                              outer_else.graph());
  mb.output("Z");
  auto s = mb.session();
  Tensor x = Tensor::from_vector<float>({2}, {1, -2});
  auto run = [&](bool c1, bool c2) {
    return run_single(*s, {{"X", x}, {"c1", bool_scalar(c1)}, {"c2", bool_scalar(c2)}});
  };
  // X + (-X) + |X|
  EXPECT_TRUE(tensors_near(run(true, true), Tensor::from_vector<float>({2}, {1, 2}), 0, 0));
  EXPECT_TRUE(tensors_near(run(true, false), Tensor::from_vector<float>({2}, {1, 2}), 0, 0));
  EXPECT_TRUE(tensors_near(run(false, true), x, 0, 0));
}

TEST(Subgraphs, BranchOutputsMayDifferInShape) {
  ModelBuilder then_b(13), else_b(13);
  then_b.node("Constant", {}, {"two"}).attr("value", Tensor::from_vector<float>({2}, {7, 8}));
  then_b.output("two", DType::Float32);
  else_b.node("Constant", {}, {"three"}).attr("value", Tensor::from_vector<float>({3}, {1, 2, 3}));
  else_b.output("three", DType::Float32);
  ModelBuilder mb(13);
  mb.input("cond", DType::Bool, {});
  mb.node("If", {"cond"}, {"Z"}).attr("then_branch", then_b.graph()).attr("else_branch", else_b.graph());
  mb.output("Z");
  auto s = mb.session();
  EXPECT_TRUE(tensors_near(run_single(*s, {{"cond", bool_scalar(true)}}), Tensor::from_vector<float>({2}, {7, 8}), 0, 0));
  EXPECT_TRUE(
      tensors_near(run_single(*s, {{"cond", bool_scalar(false)}}), Tensor::from_vector<float>({3}, {1, 2, 3}), 0, 0));
}

TEST(Subgraphs, BodiesArePlannedOnce) {
  ModelBuilder then_b(13), else_b(13);
  then_b.import_domain("test.onnxmini", 1);
  then_b.node("CountedIdentity", {"X"}, {"t"}).domain("test.onnxmini");
  then_b.output("t", DType::Float32);
  else_b.node("Identity", {"X"}, {"e"});
  else_b.output("e", DType::Float32);
  ModelBuilder mb(13);
  mb.import_domain("test.onnxmini", 1);
  mb.input("X", DType::Float32, {1});
  mb.input("cond", DType::Bool, {});
  mb.node("If", {"cond"}, {"Z"}).attr("then_branch", then_b.graph()).attr("else_branch", else_b.graph());
  mb.output("Z");
  g_planned = 0;
  auto s = mb.session();
  EXPECT_EQ(g_planned.load(), 1);
  for (int i = 0; i < 5; ++i) run_single(*s, {{"X", Tensor::from_vector<float>({1}, {1})}, {"cond", bool_scalar(true)}});
  EXPECT_EQ(g_planned.load(), 1);
}

namespace {

// If(cond) over X whose then_branch is the one node `op`(inputs) and whose else_branch is Identity(X).
ModelBuilder if_with_then_node(const std::string& op, const std::string& input, const std::string& node_name) {
  ModelBuilder then_b(13), else_b(13);
  then_b.node(op, {input}, {"t"}).name(node_name);
  then_b.output("t", DType::Float32);
  else_b.node("Identity", {"X"}, {"e"});
  else_b.output("e", DType::Float32);
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1});
  mb.input("cond", DType::Bool, {});
  mb.node("If", {"cond"}, {"Z"}).name("the_if").attr("then_branch", then_b.graph()).attr("else_branch",
                                                                                          else_b.graph());
  mb.output("Z");
  return mb;
}

// The error message of creating the session, or "" when it loads.
std::pair<std::string, ErrorCode> load_error(const ModelBuilder& mb) {
  try {
    mb.session();
  } catch (const Error& e) {
    return {e.what(), e.code()};
  }
  return {"", ErrorCode::InvalidArgument};
}

}  // namespace

TEST(Subgraphs, UnknownNameInABodyIsAnError) {
  const auto [msg, code] = load_error(if_with_then_node("Relu", "nowhere", "bad_relu"));
  ASSERT_FALSE(msg.empty()) << "expected an error";
  EXPECT_NE(msg.find("the_if"), std::string::npos) << msg;
  EXPECT_NE(msg.find("then_branch"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'nowhere'"), std::string::npos) << msg;
}

TEST(Subgraphs, UnsupportedOpInABodyFailsAtLoad) {
  const auto [msg, code] = load_error(if_with_then_node("NoSuchOp", "X", "mystery"));
  ASSERT_FALSE(msg.empty()) << "expected an error";
  EXPECT_EQ(code, ErrorCode::NotImplemented);
  EXPECT_NE(msg.find("'mystery' op 'NoSuchOp'"), std::string::npos) << msg;
}

TEST(Subgraphs, BranchesWithDifferentOutputCountsFailAtLoad) {
  // then_branch gives two outputs, else_branch one, the node has one.
  ModelBuilder then_b(13), else_b(13);
  then_b.node("Identity", {"X"}, {"t0"});
  then_b.node("Identity", {"X"}, {"t1"});
  then_b.output("t0", DType::Float32);
  then_b.output("t1", DType::Float32);
  else_b.node("Identity", {"X"}, {"e0"});
  else_b.output("e0", DType::Float32);
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {3});
  mb.input("cond", DType::Bool, {});
  mb.node("If", {"cond"}, {"Z"}).name("uneven_if").attr("then_branch", then_b.graph()).attr("else_branch",
                                                                                              else_b.graph());
  mb.output("Z");
  const auto [msg, code] = load_error(mb);
  ASSERT_FALSE(msg.empty()) << "expected an error";
  EXPECT_NE(msg.find("If 'uneven_if'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("then_branch has 2 outputs, the node has 1"), std::string::npos) << msg;
}

TEST(Subgraphs, WrongConditionIsARunError) {
  auto s = if_model().session();
  Tensor x = Tensor::from_vector<float>({3}, {1, 2, 3});
  EXPECT_THROW(run_single(*s, {{"X", x}, {"cond", Tensor::from_vector<float>({}, {1})}}), Error);
}

TEST(Subgraphs, ProfilerRecordsBodyNodes) {
  SessionOptions o;
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "onnxmini_subgraph_profile";
  auto s = if_model().session(o);
  Tensor x = Tensor::from_vector<float>({3}, {1, 2, 3});
  run_single(*s, {{"X", x}, {"cond", bool_scalar(true)}});
  run_single(*s, {{"X", x}, {"cond", bool_scalar(false)}});
  const std::string path = s->end_profiling();
  const profile::Trace t = profile::read_trace(path);
  std::remove(path.c_str());
  std::vector<std::string> names;
  for (const auto& k : t.kernels) names.push_back(k.node + "/" + std::to_string(k.run));
  // Run 0 takes then_branch, run 1 else_branch; the If's own event follows its body's.
  const std::vector<std::string> expected = {"relu/0", "then_add/0", "if/0", "relu/1", "else_mul/1", "if/1"};
  EXPECT_EQ(names, expected);
}

TEST(Subgraphs, ConcurrentRuns) {
  auto s = if_model().session();
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const bool c = (i + t) % 2 == 0;
        const float v = static_cast<float>(i);
        Tensor y = run_single(*s, {{"X", Tensor::from_vector<float>({3}, {v, v, v})}, {"cond", bool_scalar(c)}});
        const float expect0 = c ? 2 * v : 10 * v;
        if (y.data<float>()[0] != expect0) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Subgraphs, ControlFlowNodesAreNotFolded) {
  // Everything the If reads is constant, yet it stays a node: its bodies are not folded.
  ModelBuilder then_b(13), else_b(13);
  then_b.node("Add", {"K", "K"}, {"t"});
  then_b.output("t", DType::Float32);
  else_b.node("Identity", {"K"}, {"e"});
  else_b.output("e", DType::Float32);
  ModelBuilder mb(13);
  mb.initializer("K", Tensor::from_vector<float>({1}, {3}));
  mb.initializer("cond", bool_scalar(true));
  mb.input("X", DType::Float32, {1});
  mb.node("If", {"cond"}, {"Z"}).attr("then_branch", then_b.graph()).attr("else_branch", else_b.graph());
  mb.node("Add", {"Z", "X"}, {"out"});
  mb.output("out");
  SessionOptions o;
  o.graph_optimization_level = 1;
  auto s = mb.session(o);
  EXPECT_EQ(s->describe().nodes.size(), 2u);
  EXPECT_TRUE(tensors_near(run_single(*s, {{"X", Tensor::from_vector<float>({1}, {1})}}),
                           Tensor::from_vector<float>({1}, {7}), 0, 0));
}
