// RunOptions::terminate and the run's log tag: a flag set before a run stops it at
// its first node; set from another thread while a Loop runs a billion iterations,
// it stops the run between two body nodes (nested in an If too); the session
// stays usable afterwards. The run's summary line carries RunOptions::run_tag.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <thread>

#include "core/logging.h"
#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {
namespace {

using Clock = std::chrono::steady_clock;
const char* const kTerminated = "Exiting due to terminate flag being set to true.";

// Body: x_out = x + 1; cond_out = cond_in (the trip count ends the loop).
ModelBuilder add_one_body() {
  ModelBuilder b(17);
  b.input("iter", DType::Int64, {});
  b.input("cond_in", DType::Bool, {});
  b.input("x", DType::Float32, {4});
  b.initializer("one", Tensor::from_vector<float>({1}, {1.0f}));
  b.node("Add", {"x", "one"}, {"x_out"}).name("body_add");
  b.node("Identity", {"cond_in"}, {"cond_out"}).name("body_cond");
  b.output("cond_out", DType::Bool, {});
  b.output("x_out", DType::Float32, {4});
  return b;
}

// Y = Loop(M, true, X) adding 1 per iteration; with `in_if`, the Loop is the then-branch of an If.
std::unique_ptr<Session> counting_loop(bool in_if = false) {
  ModelBuilder mb(17);
  mb.input("M", DType::Int64, {});
  mb.input("X", DType::Float32, {4});
  mb.initializer("go", Tensor::scalar<bool>(true));
  if (!in_if) {
    mb.node("Loop", {"M", "go", "X"}, {"Y"}).name("the_loop").attr("body", add_one_body().graph());
  } else {
    ModelBuilder then_branch(17);
    then_branch.node("Loop", {"M", "go", "X"}, {"loop_y"}).name("inner_loop").attr("body", add_one_body().graph());
    then_branch.output("loop_y", DType::Float32, {4});
    ModelBuilder else_branch(17);
    else_branch.node("Identity", {"X"}, {"same"}).name("else_identity");
    else_branch.output("same", DType::Float32, {4});
    mb.node("If", {"go"}, {"Y"})
        .name("the_if")
        .attr("then_branch", then_branch.graph())
        .attr("else_branch", else_branch.graph());
  }
  mb.output("Y", DType::Float32, {4});
  return mb.session();
}

std::vector<std::pair<std::string, Value>> feeds(int64_t iterations) {
  return {{"M", Value(Tensor::scalar<int64_t>(iterations))},
          {"X", Value(Tensor::from_vector<float>({4}, {0, 1, 2, 3}))}};
}

void expect_terminated(const std::function<void()>& run) {
  try {
    run();
    FAIL() << "the run was not terminated";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Terminated);
    EXPECT_STREQ(e.what(), kTerminated);
  }
}

TEST(RunTerminate, FlagSetBeforeTheRunStopsItAtTheFirstNode) {
  auto session = counting_loop();
  RunOptions ro;
  ro.terminate = true;
  expect_terminated([&] { session->run(feeds(3), {}, &ro); });
  // Cleared, the same options run the model to the end.
  ro.terminate = false;
  auto out = session->run(feeds(3), {}, &ro);
  EXPECT_TRUE(tensors_near(out[0].tensor(), Tensor::from_vector<float>({4}, {3, 4, 5, 6}), 0, 0));
}

// A billion iterations would take minutes; the flag set after 50 ms must end the run
// within a few node times (well under a second even on a loaded machine).
void terminate_long_loop(bool in_if) {
  auto session = counting_loop(in_if);
  RunOptions ro;
  auto run = std::async(std::launch::async, [&] { session->run(feeds(1000000000), {}, &ro); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(run.wait_for(std::chrono::seconds(0)), std::future_status::timeout) << "the loop ended by itself";
  const auto set_at = Clock::now();
  ro.terminate = true;
  ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "terminate did not stop the Loop";
  const double stop_ms = std::chrono::duration<double, std::milli>(Clock::now() - set_at).count();
  EXPECT_LT(stop_ms, 2000.0);
  expect_terminated([&] { run.get(); });

  // The session is not left in a broken state: a normal run afterwards.
  auto out = session->run(feeds(5));
  EXPECT_TRUE(tensors_near(out[0].tensor(), Tensor::from_vector<float>({4}, {5, 6, 7, 8}), 0, 0));
}

TEST(RunTerminate, StopsALongLoopFromAnotherThread) { terminate_long_loop(false); }
TEST(RunTerminate, StopsALoopNestedInAnIf) { terminate_long_loop(true); }

TEST(RunTerminate, OnlyTheRunsWithTheFlaggedOptionsStop) {
  auto session = counting_loop();
  RunOptions flagged, other;
  flagged.terminate = true;
  expect_terminated([&] { session->run(feeds(2), {}, &flagged); });
  EXPECT_NO_THROW(session->run(feeds(2), {}, &other));
  EXPECT_NO_THROW(session->run(feeds(2)));
}

TEST(RunTerminate, CopiedOptionsCarryTheFlagsValue) {
  RunOptions ro;
  ro.terminate = true;
  ro.run_tag = "t";
  RunOptions copy(ro);
  EXPECT_TRUE(copy.terminate.load());
  EXPECT_EQ(copy.run_tag, "t");
  ro.terminate = false;
  EXPECT_TRUE(copy.terminate.load());  // a copy, not a shared flag
}

TEST(RunLogTag, InfoLevelLogsOneSummaryLineWithTheTag) {
  auto session = counting_loop();
  LogCapture cap;
  RunOptions ro;
  ro.run_tag = "batch-17";
  session->run(feeds(2), {}, &ro);  // -1: the session's level (warning): nothing
  EXPECT_EQ(cap.count("run 'batch-17'"), 0u);
  ro.run_log_severity_level = 1;
  session->run(feeds(2), {}, &ro);
  EXPECT_EQ(cap.count("run 'batch-17'"), 1u);
  ro.run_log_severity_level = 3;
  session->run(feeds(2), {}, &ro);
  EXPECT_EQ(cap.count("run 'batch-17'"), 1u);
}

TEST(RunLogTag, LevelOutOfRangeIsAnInvalidArgument) {
  auto session = counting_loop();
  RunOptions ro;
  ro.run_log_severity_level = 7;
  try {
    session->run(feeds(1), {}, &ro);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("run_log_severity_level 7"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
