// Loop: trip count and condition in every combination (including neither),
// zero iterations, carried values that grow or pass through unchanged, scan
// outputs, outer-scope values through nested Loops, profiler events per
// iteration, every opset, and the errors (each naming the node).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "onnxmini/profile.h"
#include "tests/common/model_builder.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

const int64_t kOpsets[] = {1, 11, 13, 16, 19, 21};

Tensor i64(int64_t v) { return Tensor::scalar<int64_t>(v); }
Tensor flag(bool b) { return Tensor::scalar<bool>(b); }

// Body: x_out = x + step (step from the main graph), scan = x_out; cond_out = iter < stop_at.
ModelBuilder counting_body(int64_t opset) {
  ModelBuilder b(opset);
  b.input("iter", DType::Int64, {});
  b.input("cond_in", DType::Bool, {});
  b.input("x", DType::Float32, {2});
  b.node("Add", {"x", "step"}, {"x_out"}).name("body_add");
  b.node("Less", {"iter", "stop_at"}, {"cond_out"}).name("body_less");
  b.node("Identity", {"x_out"}, {"scan"}).name("body_scan");
  b.output("cond_out", DType::Bool, {});
  b.output("x_out", DType::Float32, {2});
  b.output("scan", DType::Float32, {2}, true);
  return b;
}

// main: Loop(M, cond, X) with the counting body; outputs (X_final, scans).
// An empty `m` or `cond` leaves that input out.
// `scalar_feeds` false leaves the shapes of M and cond undeclared (so that run() lets any shape in).
std::unique_ptr<Session> counting_loop(const std::string& m, const std::string& cond, int64_t opset = 13,
                                       const SessionOptions& o = {}, bool scalar_feeds = true) {
  ModelBuilder mb(opset);
  if (!m.empty()) mb.input(m, DType::Int64, {}, scalar_feeds);
  if (!cond.empty()) mb.input(cond, DType::Bool, {}, scalar_feeds);
  mb.input("X", DType::Float32, {2});
  mb.input("stop_at", DType::Int64, {});
  mb.initializer("step", Tensor::from_vector<float>({2}, {1, 10}));
  mb.node("Loop", {m, cond, "X"}, {"X_final", "scans"}).name("the_loop").attr("body", counting_body(opset).graph());
  mb.output("X_final");
  mb.output("scans");
  return mb.session(o);
}

// The expected outputs after n iterations from X = {0, 0}.
void expect_iterations(const std::vector<Tensor>& out, int64_t n) {
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(tensors_near(out[0], Tensor::from_vector<float>({2}, {1.0f * n, 10.0f * n}), 0, 0));
  std::vector<float> stacked;
  for (int64_t i = 1; i <= n; ++i) stacked.insert(stacked.end(), {1.0f * i, 10.0f * i});
  EXPECT_TRUE(tensors_near(out[1], Tensor::from_vector<float>({n, 2}, stacked), 0, 0));
}

const Tensor kZeros = Tensor::from_vector<float>({2}, {0, 0});

void expect_error(const std::function<void()>& f, std::initializer_list<const char*> parts) {
  try {
    f();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Loop, TripCountOnlyAtEveryOpset) {
  for (int64_t opset : kOpsets) {
    SCOPED_TRACE(opset);
    auto s = counting_loop("M", "", opset);
    // cond_out turns false after iteration 9; M = 4 stops first.
    expect_iterations(run_all(*s, {{"M", i64(4)}, {"X", kZeros}, {"stop_at", i64(9)}}), 4);
  }
}

TEST(Loop, ConditionOnlyRunsUntilTheBodySaysStop) {
  auto s = counting_loop("", "cond");
  // cond_out = iter < 2: iterations 0, 1, 2 run.
  expect_iterations(run_all(*s, {{"cond", flag(true)}, {"X", kZeros}, {"stop_at", i64(2)}}), 3);
  // A false condition runs nothing.
  expect_iterations(run_all(*s, {{"cond", flag(false)}, {"X", kZeros}, {"stop_at", i64(2)}}), 0);
}

TEST(Loop, NeitherTripCountNorConditionStopsWhenTheBodySaysSo) {
  auto s = counting_loop("", "");
  expect_iterations(run_all(*s, {{"X", kZeros}, {"stop_at", i64(5)}}), 6);
}

TEST(Loop, BothTripCountAndConditionWhicheverEndsFirst) {
  auto s = counting_loop("M", "cond");
  expect_iterations(run_all(*s, {{"M", i64(3)}, {"cond", flag(true)}, {"X", kZeros}, {"stop_at", i64(7)}}), 3);
  expect_iterations(run_all(*s, {{"M", i64(30)}, {"cond", flag(true)}, {"X", kZeros}, {"stop_at", i64(7)}}), 8);
  expect_iterations(run_all(*s, {{"M", i64(0)}, {"cond", flag(true)}, {"X", kZeros}, {"stop_at", i64(7)}}), 0);
  // A negative M is refused (NegativeTripCountIsARunError), where onnxruntime would run no iteration.
}

TEST(Loop, ZeroIterationsGiveInitialValuesAndEmptyScans) {
  auto s = counting_loop("M", "");
  Tensor x = Tensor::from_vector<float>({2}, {4, 5});
  const auto out = run_all(*s, {{"M", i64(0)}, {"X", x}, {"stop_at", i64(9)}});
  EXPECT_EQ(out[0].raw(), x.raw());  // the initial value itself, not a copy
  EXPECT_EQ(out[1].shape(), (Shape{0, 2}));  // rank from the body's declared scan output shape
  EXPECT_EQ(out[1].dtype(), DType::Float32);
}

TEST(Loop, CarriedValuesPassThroughWithoutCopies) {
  ModelBuilder body(13);
  body.input("iter", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.input("x", DType::Float32, {3});
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.node("Identity", {"x"}, {"x_out"});
  body.output("cond_out", DType::Bool, {});
  body.output("x_out", DType::Float32, {3});
  ModelBuilder mb(13);
  mb.input("M", DType::Int64, {});
  mb.input("X", DType::Float32, {3});
  mb.node("Loop", {"M", "", "X"}, {"Y"}).attr("body", body.graph());
  mb.output("Y");
  auto s = mb.session();
  Tensor x = Tensor::from_vector<float>({3}, {1, 2, 3});
  Tensor y = run_single(*s, {{"M", i64(5)}, {"X", x}});
  EXPECT_EQ(y.raw(), x.raw());
}

TEST(Loop, CarriedShapesMayGrow) {
  // x_out = Concat(x, [iter]) as float: x grows by one element per iteration.
  ModelBuilder body(13);
  body.input("iter", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.input("x", DType::Float32, {}, false);
  body.initializer("one", Tensor::from_vector<int64_t>({1}, {1}));
  body.node("Reshape", {"iter", "one"}, {"iter1"});
  body.node("Cast", {"iter1"}, {"iterf"}).attr("to", static_cast<int64_t>(DType::Float32));
  body.node("Concat", {"x", "iterf"}, {"x_out"}).attr("axis", static_cast<int64_t>(0));
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out", DType::Bool, {});
  body.output("x_out", DType::Float32);
  ModelBuilder mb(13);
  mb.input("M", DType::Int64, {});
  mb.input("X", DType::Float32, {1});
  mb.node("Loop", {"M", "", "X"}, {"Y"}).attr("body", body.graph());
  mb.output("Y");
  auto s = mb.session();
  EXPECT_TRUE(tensors_near(run_single(*s, {{"M", i64(4)}, {"X", Tensor::from_vector<float>({1}, {-1})}}),
                           Tensor::from_vector<float>({5}, {-1, 0, 1, 2, 3}), 0, 0));
}

TEST(Loop, ScanOutputWhoseShapeChangesIsAnError) {
  ModelBuilder body(13);
  body.input("iter", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.input("x", DType::Float32, {}, false);
  body.node("Concat", {"x", "x"}, {"x_out"}).attr("axis", static_cast<int64_t>(0));
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.node("Identity", {"x_out"}, {"grows"});
  body.output("cond_out", DType::Bool, {});
  body.output("x_out", DType::Float32);
  body.output("grows", DType::Float32);
  ModelBuilder mb(13);
  mb.input("M", DType::Int64, {});
  mb.input("X", DType::Float32, {1});
  mb.node("Loop", {"M", "", "X"}, {"Y", "S"}).name("growing").attr("body", body.graph());
  mb.output("Y");
  mb.output("S");
  auto s = mb.session();
  expect_error([&] { run_all(*s, {{"M", i64(3)}, {"X", Tensor::from_vector<float>({1}, {1})}}); },
               {"Loop 'growing'", "'grows'", "iteration 1"});
}

TEST(Loop, WrongBodySignatureFailsAtLoad) {
  ModelBuilder body(13);
  body.input("iter", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out", DType::Bool, {});
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1});
  mb.node("Loop", {"", "", "X"}, {"Y"}).name("bad_body").attr("body", body.graph());
  mb.output("Y");
  expect_error([&] { mb.session(); }, {"Loop 'bad_body'", "body takes 2 inputs, expected 3"});
}

TEST(Loop, BadTripCountConditionAndBodyConditionAreRunErrors) {
  auto s = counting_loop("M", "cond", 13, {}, false);
  expect_error([&] { run_all(*s, {{"M", Tensor::from_vector<int64_t>({2}, {1, 2})}, {"cond", flag(true)},
                                  {"X", kZeros}, {"stop_at", i64(1)}}); },
               {"Loop 'the_loop'", "trip count M"});
  expect_error([&] { run_all(*s, {{"M", i64(2)}, {"cond", Tensor::from_vector<bool>({2}, {true, true})},
                                  {"X", kZeros}, {"stop_at", i64(1)}}); },
               {"Loop 'the_loop'", "cond must be one bool"});

  // A body whose cond_out is a float.
  ModelBuilder body(13);
  body.input("iter", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.input("x", DType::Float32, {1});
  body.node("Constant", {}, {"cond_out"}).attr("value", Tensor::scalar<float>(1));
  body.node("Identity", {"x"}, {"x_out"});
  body.output("cond_out", DType::Float32, {});
  body.output("x_out", DType::Float32, {1});
  ModelBuilder mb(13);
  mb.input("M", DType::Int64, {});
  mb.input("X", DType::Float32, {1});
  mb.node("Loop", {"M", "", "X"}, {"Y"}).name("float_cond").attr("body", body.graph());
  mb.output("Y");
  auto s2 = mb.session();
  expect_error([&] { run_all(*s2, {{"M", i64(2)}, {"X", Tensor::from_vector<float>({1}, {1})}}); },
               {"Loop 'float_cond'", "body output cond must be one bool"});
}

TEST(Loop, NegativeTripCountIsARunError) {
  auto s = counting_loop("M", "");
  expect_error([&] { run_all(*s, {{"M", i64(-3)}, {"X", kZeros}, {"stop_at", i64(10)}}); },
               {"Loop 'the_loop'", "trip count M is -3", "must not be negative"});
}

TEST(Loop, ScanOutputsBeyondMemoryFailNamingTheSizes) {
  // An absurd M whose condition never stops the loop: the scan output grows
  // until the run's intermediates pass the cap, lowered here to 4000 bytes
  // (SessionOptions::max_intermediate_bytes; the environment's
  // ONNXMINI_MEMORY_LIMIT lowers the default the same way). Each iteration
  // keeps at least one 8-byte slice, so the loop must end long before M.
  SessionOptions capped;
  capped.max_intermediate_bytes = 4000;
  auto s = counting_loop("M", "", 13, capped);
  expect_error([&] { run_all(*s, {{"M", i64(INT64_MAX / 2)}, {"X", kZeros}, {"stop_at", i64(INT64_MAX)}}); },
               {"more than", "4000", "max_intermediate_bytes"});
  // Under the cap, the same loop runs.
  expect_iterations(run_all(*s, {{"M", i64(3)}, {"X", kZeros}, {"stop_at", i64(INT64_MAX)}}), 3);
}

TEST(Loop, NestedLoopsReadEveryEnclosingScope) {
  // main: X [1]; outer Loop M=3 carries acc; its body runs an inner Loop M=2 whose
  // body adds X (main graph) and the outer iteration number (outer body) to acc.
  ModelBuilder inner(13);
  inner.input("j", DType::Int64, {});
  inner.input("c", DType::Bool, {});
  inner.input("acc_i", DType::Float32, {1});
  inner.node("Cast", {"i"}, {"i_f"}).attr("to", static_cast<int64_t>(DType::Float32));
  inner.node("Add", {"acc_i", "X"}, {"t"});
  inner.node("Add", {"t", "i_f"}, {"acc_i_out"}).name("inner_add");
  inner.node("Identity", {"c"}, {"c_out"});
  inner.output("c_out", DType::Bool, {});
  inner.output("acc_i_out", DType::Float32, {1});
  ModelBuilder outer(13);
  outer.input("i", DType::Int64, {});
  outer.input("c", DType::Bool, {});
  outer.input("acc", DType::Float32, {1});
  outer.initializer("two", Tensor::scalar<int64_t>(2));
  outer.node("Loop", {"two", "", "acc"}, {"acc_out"}).name("inner_loop").attr("body", inner.graph());
  outer.node("Identity", {"c"}, {"c_out"});
  outer.output("c_out", DType::Bool, {});
  outer.output("acc_out", DType::Float32, {1});
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1});
  mb.initializer("three", Tensor::scalar<int64_t>(3));
  mb.initializer("zero", Tensor::from_vector<float>({1}, {0}));
  mb.node("Loop", {"three", "", "zero"}, {"Y"}).name("outer_loop").attr("body", outer.graph());
  mb.output("Y");
  auto s = mb.session();
  const float x = 0.5f;
  float expected = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) expected += x + static_cast<float>(i);
  EXPECT_TRUE(tensors_near(run_single(*s, {{"X", Tensor::from_vector<float>({1}, {x})}}),
                           Tensor::from_vector<float>({1}, {expected}), 0, 0));
}

TEST(Loop, ProfilerRecordsEveryBodyNodeEveryIteration) {
  SessionOptions o;
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "onnxmini_loop_profile";
  auto s = counting_loop("M", "", 13, o);
  run_all(*s, {{"M", i64(3)}, {"X", kZeros}, {"stop_at", i64(9)}});
  const std::string path = s->end_profiling();
  const profile::Trace t = profile::read_trace(path);
  std::remove(path.c_str());
  // Three events of each body node (in the body's execution order, per iteration), then the Loop's.
  ASSERT_EQ(t.kernels.size(), 10u);
  for (size_t i = 0; i < 3; ++i) {
    std::vector<std::string> iteration;
    for (size_t k = 0; k < 3; ++k) iteration.push_back(t.kernels[3 * i + k].node);
    std::sort(iteration.begin(), iteration.end());
    EXPECT_EQ(iteration, (std::vector<std::string>{"body_add", "body_less", "body_scan"})) << "iteration " << i;
  }
  EXPECT_EQ(t.kernels.back().node, "the_loop");
}
