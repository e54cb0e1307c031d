// Transpose / Reshape sinking (runtime/graph_sinking.h): each form applies, the graph
// shrinks to the expected nodes and every output equals the unoptimized graph's bit for
// bit; near-misses (an intermediate with a second reader, a constant of higher rank, an
// op that does not commute, a Transpose that meets no other) stay as they are; graph
// outputs keep their names; the saved model runs at level 0 like the optimized session.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct Outcome {
  std::vector<std::string> rules;     // rules that rewrote something
  std::vector<std::string> op_types;  // the optimized graph's nodes
  std::vector<std::string> outputs;   // its output names
  bool applied(const std::string& rule) const { return std::find(rules.begin(), rules.end(), rule) != rules.end(); }
  size_t count(const std::string& op) const { return std::count(op_types.begin(), op_types.end(), op); }
};

// Runs `mb` at level 0 and level 1 and requires bit-identical outputs.
Outcome optimize(const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  auto plain = mb.session(opts(ORT_DISABLE_ALL));
  auto optimized = mb.session(opts(ORT_ENABLE_BASIC));
  const auto a = run_all(*plain, feeds), b = run_all(*optimized, feeds);
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    EXPECT_EQ(a[i].shape(), b[i].shape()) << "output " << i;
    EXPECT_EQ(a[i].dtype(), b[i].dtype()) << "output " << i;
    if (a[i].shape() == b[i].shape() && a[i].dtype() == b[i].dtype()) {
      EXPECT_EQ(std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()), 0) << "output " << i << " not bit-exact";
    }
  }
  Outcome o;
  for (const GraphRewrite& r : optimized->graph_rewrites()) o.rules.push_back(r.rule);
  const ModelDescription d = optimized->describe();
  for (const NodeDescription& n : d.nodes) o.op_types.push_back(n.op_type);
  for (const ValueInfo& v : d.outputs) o.outputs.push_back(v.name);
  return o;
}

const std::vector<int64_t> kToNHWC = {0, 2, 3, 1}, kToNCHW = {0, 3, 1, 2};
// Values of both signs, so Relu / Abs / Sqrt(NaN) all see their interesting cases.
const Tensor kX = random_tensor(DType::Float32, {2, 3, 4, 5}, 7, -2.0, 2.0);

TEST(GraphSinking, UnaryChainBetweenInverseTransposes) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4, 5});
  mb.node("Transpose", {"X"}, {"T"}).name("to_nhwc").attr("perm", kToNHWC);
  mb.node("Relu", {"T"}, {"R"}).name("relu");
  mb.node("Sigmoid", {"R"}, {"S"}).name("sigmoid");
  mb.node("Clip", {"S", "lo", "hi"}, {"C"}).name("clip");
  mb.initializer("lo", Tensor::scalar<float>(0.1f));
  mb.initializer("hi", Tensor::scalar<float>(0.8f));
  mb.node("Transpose", {"C"}, {"Y"}).name("to_nchw").attr("perm", kToNCHW);
  mb.output("Y");
  const Outcome o = optimize(mb, {{"X", kX}});
  EXPECT_TRUE(o.applied("sink_transpose"));
  EXPECT_EQ(o.count("Transpose"), 0u);
  EXPECT_EQ(o.op_types.size(), 3u);
  EXPECT_EQ(o.outputs, std::vector<std::string>{"Y"});
}

TEST(GraphSinking, CastChangesTheTypeOfTheMovedValue) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4, 5});
  mb.node("Transpose", {"X"}, {"T"}).name("t1").attr("perm", kToNHWC);
  mb.node("Cast", {"T"}, {"C"}).name("cast").attr("to", int64_t{11});  // double
  mb.node("Exp", {"C"}, {"E"}).name("exp");
  mb.node("Transpose", {"E"}, {"Y"}).name("t2").attr("perm", kToNCHW);
  mb.output("Y");
  const Outcome o = optimize(mb, {{"X", kX}});
  EXPECT_TRUE(o.applied("sink_transpose"));
  EXPECT_EQ(o.count("Transpose"), 0u);
}

TEST(GraphSinking, NonInverseTransposesMergeIntoOne) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4, 5});
  mb.node("Transpose", {"X"}, {"T"}).name("t1").attr("perm", kToNHWC);
  mb.node("Tanh", {"T"}, {"H"}).name("tanh");
  mb.node("Transpose", {"H"}, {"Y"}).name("t2").attr("perm", std::vector<int64_t>{0, 2, 1, 3});
  mb.output("Y");
  const Outcome o = optimize(mb, {{"X", kX}});
  EXPECT_TRUE(o.applied("sink_transpose"));
  EXPECT_EQ(o.count("Transpose"), 1u);
  EXPECT_EQ(o.op_types.size(), 2u);
}

TEST(GraphSinking, BinaryOpsWithConstantsOfEveryRank) {
  // T has shape [2,4,5,3]: B [3] broadcasts along the last axis, C [4,1,3] over axes 1-3,
  // D a scalar, E [1] a one-element tensor; Div has the constant first.
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4, 5});
  mb.initializer("B", random_tensor(DType::Float32, {3}, 1));
  mb.initializer("C", random_tensor(DType::Float32, {4, 1, 3}, 2, 0.5, 2.0));
  mb.initializer("D", Tensor::scalar<float>(0.25f));
  mb.initializer("E", Tensor::from_vector<float>({1}, {3.0f}));
  mb.initializer("F", random_tensor(DType::Float32, {2, 4, 5, 3}, 3, 1.0, 2.0));
  mb.node("Transpose", {"X"}, {"T"}).name("to_nhwc").attr("perm", kToNHWC);
  mb.node("Add", {"T", "B"}, {"A"}).name("add");
  mb.node("Mul", {"A", "C"}, {"M"}).name("mul");
  mb.node("Sub", {"M", "D"}, {"S"}).name("sub");
  mb.node("Div", {"F", "S"}, {"Q"}).name("div");
  mb.node("Max", {"Q", "E"}, {"Z"}).name("max");
  mb.node("Transpose", {"Z"}, {"Y"}).name("to_nchw").attr("perm", kToNCHW);
  mb.output("Y");
  const Outcome o = optimize(mb, {{"X", kX}});
  EXPECT_TRUE(o.applied("sink_transpose"));
  EXPECT_EQ(o.count("Transpose"), 0u);
  EXPECT_EQ(o.op_types.size(), 5u);
}

TEST(GraphSinking, PReluSlopePermuted) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4, 5});
  mb.initializer("slope", random_tensor(DType::Float32, {5, 3}, 4, 0.1, 0.5));
  mb.node("Transpose", {"X"}, {"T"}).name("t1").attr("perm", kToNHWC);
  mb.node("PRelu", {"T", "slope"}, {"P"}).name("prelu");
  mb.node("Transpose", {"P"}, {"Y"}).name("t2").attr("perm", kToNCHW);
  mb.output("Y");
  const Outcome o = optimize(mb, {{"X", kX}});
  EXPECT_TRUE(o.applied("sink_transpose"));
  EXPECT_EQ(o.op_types, std::vector<std::string>{"PRelu"});
}

// One NHWC value read three ways: Relu -> back to NCHW, Sigmoid -> Mul(constant) -> another
// Transpose, and a Transpose straight back. With `blocker`, a fourth reader (Softmax) that
// does not commute keeps everything as it is.
ModelBuilder fan_out(bool blocker) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4, 5});
  mb.initializer("C", random_tensor(DType::Float32, {3}, 2));
  mb.node("Transpose", {"X"}, {"T"}).name("to_nhwc").attr("perm", kToNHWC);
  mb.node("Relu", {"T"}, {"R"}).name("relu");
  mb.node("Transpose", {"R"}, {"Y1"}).name("back1").attr("perm", kToNCHW);
  mb.node("Sigmoid", {"T"}, {"S"}).name("sigmoid");
  mb.node("Mul", {"S", "C"}, {"M"}).name("mul");
  mb.node("Transpose", {"M"}, {"Y2"}).name("other").attr("perm", std::vector<int64_t>{0, 2, 1, 3});
  mb.node("Transpose", {"T"}, {"D"}).name("back2").attr("perm", kToNCHW);
  mb.node("Exp", {"D"}, {"Y3"}).name("exp");
  mb.output("Y1").output("Y2").output("Y3");
  if (blocker) {
    mb.node("Softmax", {"T"}, {"Y4"}).name("softmax").attr("axis", int64_t{-1});
    mb.output("Y4");
  }
  return mb;
}

TEST(GraphSinking, FanOutToTransposesSinksIntoEveryBranch) {
  const Outcome o = optimize(fan_out(false), {{"X", kX}});
  EXPECT_TRUE(o.applied("sink_transpose"));
  EXPECT_EQ(o.count("Transpose"), 1u);  // 4 before; only the composed {0,2,1,3} after {0,2,3,1} is left
  EXPECT_EQ(o.op_types.size(), 5u);
  EXPECT_EQ(o.outputs, (std::vector<std::string>{"Y1", "Y2", "Y3"}));
}

TEST(GraphSinking, FanOutWithABranchThatDoesNotCommuteStays) {
  const Outcome o = optimize(fan_out(true), {{"X", kX}});
  EXPECT_FALSE(o.applied("sink_transpose"));
  EXPECT_EQ(o.count("Transpose"), 3u);  // cancel_transposes still merges to_nhwc into back2 (an identity, gone)
}

TEST(GraphSinking, BothOperandsTransposedBecomeOneTranspose) {
  ModelBuilder mb(13);
  mb.input("A", DType::Float32, {2, 3, 4, 5});
  mb.input("B", DType::Float32, {2, 3, 4, 5});
  mb.node("Transpose", {"A"}, {"TA"}).name("ta").attr("perm", kToNHWC);
  mb.node("Transpose", {"B"}, {"TB"}).name("tb").attr("perm", kToNHWC);
  mb.node("Greater", {"TA", "TB"}, {"G"}).name("greater");
  mb.node("Not", {"G"}, {"Y"}).name("not");
  mb.output("Y");
  const Tensor b = random_tensor(DType::Float32, {2, 3, 4, 5}, 9, -2.0, 2.0);
  const Outcome o = optimize(mb, {{"A", kX}, {"B", b}});
  EXPECT_TRUE(o.applied("sink_transpose"));
  EXPECT_EQ(o.count("Transpose"), 1u);
  EXPECT_EQ(o.op_types.size(), 3u);
  EXPECT_EQ(o.outputs, std::vector<std::string>{"Y"});
}

TEST(GraphSinking, MergedOperandTransposesThenMeetTheirInverse) {
  // The converter pattern: both inputs to NHWC, Add, Relu, back to NCHW -> no Transpose at all.
  ModelBuilder mb(13);
  mb.input("A", DType::Float32, {-1, 3, 4, 5});
  mb.input("B", DType::Float32, {-1, 3, 4, 5});
  mb.node("Transpose", {"A"}, {"TA"}).name("ta").attr("perm", kToNHWC);
  mb.node("Transpose", {"B"}, {"TB"}).name("tb").attr("perm", kToNHWC);
  mb.node("Add", {"TA", "TB"}, {"S"}).name("add");
  mb.node("Relu", {"S"}, {"R"}).name("relu");
  mb.node("Transpose", {"R"}, {"Y"}).name("back").attr("perm", kToNCHW);
  mb.output("Y");
  const Tensor b = random_tensor(DType::Float32, {2, 3, 4, 5}, 9, -2.0, 2.0);
  const Outcome o = optimize(mb, {{"A", kX}, {"B", b}});
  EXPECT_EQ(o.op_types, (std::vector<std::string>{"Add", "Relu"}));
}

TEST(GraphSinking, ReshapeThroughUnaryChain) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4, 5});
  mb.initializer("s1", Tensor::from_vector<int64_t>({2}, {6, 20}));
  mb.initializer("s2", Tensor::from_vector<int64_t>({3}, {4, -1, 5}));
  mb.initializer("k", Tensor::scalar<float>(1.5f));
  mb.node("Reshape", {"X", "s1"}, {"R"}).name("r1");
  mb.node("Abs", {"R"}, {"A"}).name("abs");
  mb.node("Mul", {"A", "k"}, {"M"}).name("mul");
  mb.node("Sqrt", {"M"}, {"Q"}).name("sqrt");
  mb.node("Reshape", {"Q", "s2"}, {"Y"}).name("r2");
  mb.output("Y");
  const Outcome o = optimize(mb, {{"X", kX}});
  EXPECT_TRUE(o.applied("sink_reshape"));
  EXPECT_EQ(o.count("Reshape"), 1u);
  EXPECT_EQ(o.op_types.size(), 4u);
}

TEST(GraphSinking, ReshapeNearMisses) {
  // The outer shape copies a dimension (0), and a [20]-shaped constant would not broadcast
  // the same way against X: both stay.
  for (bool zero : {true, false}) {
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, {2, 3, 4, 5});
    mb.initializer("s1", Tensor::from_vector<int64_t>({2}, {6, 20}));
    mb.initializer("s2", Tensor::from_vector<int64_t>({3}, {zero ? 0 : 3, -1, 5}));
    mb.initializer("k", random_tensor(DType::Float32, {20}, 5));
    mb.node("Reshape", {"X", "s1"}, {"R"}).name("r1");
    mb.node("Neg", {"R"}, {"N"}).name("neg");
    if (zero) mb.node("Identity", {"N"}, {"M"}).name("id");
    else mb.node("Add", {"N", "k"}, {"M"}).name("add");
    mb.node("Reshape", {"M", "s2"}, {"Y"}).name("r2");
    mb.output("Y");
    const Outcome o = optimize(mb, {{"X", kX}});
    EXPECT_FALSE(o.applied("sink_reshape")) << (zero ? "0 in the outer shape" : "non-scalar constant");
    EXPECT_EQ(o.count("Reshape"), 2u);
  }
}

// Transpose -> middle -> Transpose back, with `extra` adding a second reader of the middle.
ModelBuilder sandwich(const std::string& op, bool extra, const Tensor* constant = nullptr) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4, 5});
  mb.node("Transpose", {"X"}, {"T"}).name("t1").attr("perm", kToNHWC);
  if (constant) {
    mb.initializer("K", *constant);
    mb.node(op, {"T", "K"}, {"M"}).name("mid");
  } else {
    auto n = mb.node(op, {"T"}, {"M"});
    n.name("mid");
    if (op == "Softmax") n.attr("axis", int64_t{-1});
  }
  // A rank-5 constant makes the middle rank 5: the way back needs a rank-5 perm.
  const bool rank5 = constant && constant->rank() == 5;
  mb.node("Transpose", {"M"}, {"Y"}).name("t2").attr("perm", rank5 ? std::vector<int64_t>{0, 1, 4, 2, 3} : kToNCHW);
  mb.output("Y");
  if (extra) mb.output("M");
  return mb;
}

TEST(GraphSinking, NearMissesStay) {
  const Tensor high_rank = random_tensor(DType::Float32, {1, 2, 4, 5, 3}, 6);
  struct Case {
    const char* why;
    ModelBuilder mb;
  } cases[] = {
      {"the middle value is also a graph output", sandwich("Relu", true)},
      {"a constant of higher rank broadcasts the middle up", sandwich("Add", false, &high_rank)},
      {"Softmax over the last axis does not commute", sandwich("Softmax", false)},
  };
  for (const Case& c : cases) {
    const Outcome o = optimize(c.mb, {{"X", kX}});
    EXPECT_FALSE(o.applied("sink_transpose")) << c.why;
    EXPECT_EQ(o.count("Transpose"), 2u) << c.why;
  }
}

TEST(GraphSinking, TransposeMeetingNoOtherStays) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4, 5});
  mb.node("Transpose", {"X"}, {"T"}).name("t1").attr("perm", kToNHWC);
  mb.node("Relu", {"T"}, {"R"}).name("relu");
  mb.node("Exp", {"R"}, {"Y"}).name("exp");
  mb.output("Y");
  const Outcome o = optimize(mb, {{"X", kX}});
  EXPECT_FALSE(o.applied("sink_transpose"));
  EXPECT_EQ(o.op_types, (std::vector<std::string>{"Transpose", "Relu", "Exp"}));
}

TEST(GraphSinking, OperandTransposesNotMergedWhenTheyDiffer) {
  // Different perms; and operands that broadcast ([2,3,4,5] with [1,3,1,5]): the single
  // Transpose would move the larger result, so both stay.
  // (With different perms, [2,3,4,4] gives [2,4,4,3] both ways.)
  for (bool broadcast : {false, true}) {
    const Shape a_shape = broadcast ? Shape{2, 3, 4, 5} : Shape{2, 3, 4, 4};
    const Shape b_shape = broadcast ? Shape{1, 3, 1, 5} : Shape{2, 3, 4, 4};
    ModelBuilder mb(13);
    mb.input("A", DType::Float32, a_shape);
    mb.input("B", DType::Float32, b_shape);
    mb.node("Transpose", {"A"}, {"TA"}).name("ta").attr("perm", kToNHWC);
    mb.node("Transpose", {"B"}, {"TB"}).name("tb").attr("perm", broadcast ? kToNHWC : std::vector<int64_t>{0, 3, 2, 1});
    mb.node("Mul", {"TA", "TB"}, {"Y"}).name("mul");
    mb.output("Y");
    const Tensor a = random_tensor(DType::Float32, a_shape, 8), b = random_tensor(DType::Float32, b_shape, 9);
    const Outcome o = optimize(mb, {{"A", a}, {"B", b}});
    EXPECT_FALSE(o.applied("sink_transpose")) << (broadcast ? "broadcast" : "different perms");
    EXPECT_EQ(o.count("Transpose"), 2u);
  }
}

TEST(GraphSinking, TransposeOfUnitAxesBecomesReshape) {
  // [N,128,1] -> [N,1,128] (silero_vad_v6_whisper): the data order is unchanged.
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {-1, 128, 1});
  mb.node("Transpose", {"X"}, {"T"}).name("t").attr("perm", std::vector<int64_t>{0, 2, 1});
  mb.node("Relu", {"T"}, {"Y"}).name("relu");
  mb.output("Y");
  const Outcome o = optimize(mb, {{"X", random_tensor(DType::Float32, {3, 128, 1}, 11, -1.0, 1.0)}});
  EXPECT_TRUE(o.applied("transpose_to_reshape"));
  EXPECT_EQ(o.op_types, (std::vector<std::string>{"Reshape", "Relu"}));
}

TEST(GraphSinking, TransposeMovingDataOrSymbolicAxesStays) {
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
    const char* why;
  } cases[] = {
      {{2, 3, 4}, {0, 2, 1}, "two axes of size > 1 swap"},
      {{-1, 1, 4}, {1, 0, 2}, "a symbolic axis moves"},
      {{2, 1, 3, 1}, {2, 1, 0, 3}, "2 and 3 swap around the unit axes"},
  };
  for (const Case& c : cases) {
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, c.shape);
    mb.node("Transpose", {"X"}, {"Y"}).name("t").attr("perm", c.perm);
    mb.output("Y");
    Shape actual = c.shape;
    for (int64_t& d : actual) d = d < 0 ? 2 : d;
    const Outcome o = optimize(mb, {{"X", random_tensor(DType::Float32, actual, 12)}});
    EXPECT_FALSE(o.applied("transpose_to_reshape")) << c.why;
    EXPECT_EQ(o.op_types, std::vector<std::string>{"Transpose"}) << c.why;
  }
}

TEST(GraphSinking, SavedModelRunsLikeTheOptimizedSession) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3, 4, 5});
  mb.initializer("C", random_tensor(DType::Float32, {4, 1, 3}, 2));
  mb.node("Transpose", {"X"}, {"T"}).name("to_nhwc").attr("perm", kToNHWC);
  mb.node("Mul", {"T", "C"}, {"M"}).name("mul");
  mb.node("Relu", {"M"}, {"R"}).name("relu");
  mb.node("Transpose", {"R"}, {"Y"}).name("to_nchw").attr("perm", kToNCHW);
  mb.output("Y", DType::Float32, {2, 3, 4, 5}, true);
  auto* vi = mb.proto().mutable_graph()->add_value_info();  // M's declared NHWC shape: dropped once M is NCHW
  vi->set_name("M");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  for (int64_t d : {2, 4, 5, 3}) vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  SessionOptions o = opts(ORT_ENABLE_BASIC);
  o.optimized_model_filepath =
      (std::filesystem::temp_directory_path() / ("onnxmini_sinking_" + std::to_string(::getpid()) + ".onnx")).string();
  auto optimized = mb.session(o);
  auto saved = Session::load(o.optimized_model_filepath, opts(ORT_DISABLE_ALL));
  std::filesystem::remove(o.optimized_model_filepath);
  EXPECT_EQ(saved->describe().nodes.size(), 2u);
  const auto a = run_all(*optimized, {{"X", kX}}), b = run_all(*saved, {{"X", kX}});
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(std::memcmp(a[0].raw(), b[0].raw(), a[0].nbytes()), 0);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
