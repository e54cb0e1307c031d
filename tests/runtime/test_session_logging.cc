// What sessions log (docs/logging.md): the model summary and thread pool at
// info, the kernel per node and each optimizer rewrite at verbose, nothing at
// the default warning level; levels are per session; the profiler's event-cap
// warning and einsum's timing go through the loggers too.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/logging.h"
#include "tests/common/model_builder.h"

namespace fs = std::filesystem;

namespace onnxmini {
namespace test {
namespace {

// X [2,4] -> Relu(X + B)
ModelBuilder add_relu() {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 4});
  mb.initializer("B", Tensor::from_vector<float>({4}, {1, -1, 0.5f, 0}));
  mb.node("Add", {"X", "B"}, {"A"}).name("add");
  mb.node("Relu", {"A"}, {"Y"}).name("relu");
  mb.output("Y");
  return mb;
}

ModelBuilder foldable() { return foldable_gemm_model(); }

SessionOptions with_levels(int severity, int verbosity = 0, const std::string& logid = "") {
  SessionOptions o;
  o.log_severity_level = severity;
  o.log_verbosity_level = verbosity;
  o.logid = logid;
  return o;
}

size_t count_tag(const LogCapture& cap, const std::string& tag) {
  size_t n = 0;
  for (const auto& r : cap.records()) n += r.tag == tag;
  return n;
}

TEST(SessionLogging, InfoDescribesTheModelAndThreadPool) {
  LogCapture cap;
  auto s = add_relu().session(with_levels(1, 0, "info-session"));
  EXPECT_EQ(cap.count("IR version", "info-session"), 1u);
  EXPECT_EQ(cap.count("opsets [ai.onnx 13]", "info-session"), 1u);
  EXPECT_EQ(cap.count(fmt::format("{} nodes, 1 constants (16 B)", s->describe().nodes.size()), "info-session"), 1u);
  EXPECT_EQ(cap.count("intra-op thread pool: 1 thread(s), spinning", "info-session"), 1u);
  EXPECT_EQ(cap.count("-> kernel"), 0u) << "kernel choices are verbose";
  for (const auto& r : cap.records()) EXPECT_EQ(r.severity, LogSeverity::Info) << r.message;
}

TEST(SessionLogging, VerboseNamesTheKernelOfEachNode) {
  LogCapture cap;
  auto s = add_relu().session(with_levels(0, 0, "verbose-session"));
  for (const auto& n : s->describe().nodes) {
    const std::string line = fmt::format("node '{}' {} (opset {}) -> kernel {}", n.name, n.op_type, n.opset, n.kernel);
    EXPECT_EQ(cap.count(line, "verbose-session"), 1u) << line;
  }
}

TEST(SessionLogging, WarningLevelSaysNothingOnACleanLoad) {
  LogCapture cap;
  auto s = add_relu().session(with_levels(2));
  auto y = run_single(*s, {{"X", Tensor(DType::Float32, {2, 4})}});
  EXPECT_TRUE(cap.records().empty()) << cap.records()[0].message;
}

TEST(SessionLogging, LevelsArePerSession) {
  LogCapture cap;
  auto loud = add_relu().session(with_levels(0, 0, "loud"));
  auto quiet = add_relu().session(with_levels(3, 0, "quiet"));
  EXPECT_GT(count_tag(cap, "loud"), 0u);
  EXPECT_EQ(count_tag(cap, "quiet"), 0u);
  // Unnamed sessions get distinct "session-<n>" tags.
  cap.clear();
  auto a = add_relu().session(with_levels(1));
  auto b = add_relu().session(with_levels(1));
  const auto records = cap.records();
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.front().tag.rfind("session-", 0), 0u) << records.front().tag;
  EXPECT_NE(records.front().tag, records.back().tag);
}

TEST(SessionLogging, MinusOneTakesTheDefaultLoggersLevelAtCreation) {
  const int saved = default_log_severity();
  LogCapture cap;
  set_default_log_severity(LogSeverity::Info);
  auto s = add_relu().session(with_levels(-1, 0, "follows"));
  set_default_log_severity(saved);
  auto t = add_relu().session(with_levels(-1, 0, "follows-later"));
  EXPECT_GT(count_tag(cap, "follows"), 0u);
  EXPECT_EQ(count_tag(cap, "follows-later"), 0u);
}

TEST(SessionLogging, BadLevelsNameTheOption) {
  for (auto [sev, verb, option] : {std::tuple{5, 0, "log_severity_level 5"}, std::tuple{-2, 0, "log_severity_level -2"},
                                   std::tuple{0, -1, "log_verbosity_level -1"}}) {
    try {
      add_relu().session(with_levels(sev, verb));
      ADD_FAILURE() << "no error for " << option;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
    }
  }
}

TEST(SessionLogging, OptimizerRewritesAreLogged) {
  LogCapture cap;
  SessionOptions o = with_levels(0, 1, "opt");
  o.graph_optimization_level = ORT_ENABLE_ALL;
  auto s = foldable().session(o);
  EXPECT_EQ(cap.count("constant folding: folded Concat 'cat' into 'W' float 4x5"), 1u);
  EXPECT_EQ(cap.count("constant folding: 1 node(s) folded"), 1u);
  EXPECT_EQ(cap.count("optimizer gemm_activation: Gemm 'gemm' + Relu 'relu'"), 1u);
  EXPECT_EQ(cap.count("optimizer: 2 rewrite(s), 3 -> 1 nodes"), 1u);
  EXPECT_EQ(cap.count("dropped unused constant 'W1' (32 bytes)"), 1u);
  EXPECT_EQ(cap.count("dropped unused constant 'W2' (48 bytes)"), 1u);
  EXPECT_EQ(cap.count("dropped 2 constant(s) no node reads (80 bytes)"), 1u);
  EXPECT_EQ(cap.count("graph optimized: 1 nodes (was 3)"), 1u);
  EXPECT_EQ(cap.count("node 'gemm' Gemm (opset 13, fused: activation='Relu') -> kernel"), 1u);
  // Verbosity 0 keeps the rewrites but not the per-constant detail.
  cap.clear();
  o.log_verbosity_level = 0;
  auto t = foldable().session(o);
  EXPECT_EQ(cap.count("optimizer gemm_activation"), 1u);
  EXPECT_EQ(cap.count("dropped unused constant"), 0u);
}

TEST(SessionLogging, ProfilerEventCapWarnsOnceThroughTheSessionLogger) {
  SessionOptions o = with_levels(2, 0, "capped");
  o.enable_profiling = true;
  o.profile_file_prefix = (fs::temp_directory_path() / "onnxmini_logging_cap").string();
  o.profile_max_events = 10;  // 2 session events + one run of 2 nodes (2 x 3 + 2) fits; the second does not
  LogCapture cap;
  auto s = add_relu().session(o);
  for (int i = 0; i < 4; ++i) run_single(*s, {{"X", Tensor(DType::Float32, {2, 4})}});
  const std::string path = s->end_profiling();
  const auto records = cap.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].severity, LogSeverity::Warning);
  EXPECT_EQ(records[0].tag, "capped");
  EXPECT_NE(records[0].message.find("event cap reached (10 events"), std::string::npos) << records[0].message;
  fs::remove(path);
}

TEST(SessionLogging, EinsumTimingReportsProgressAndLogs) {
  const int saved = default_log_severity();
  set_default_log_severity(LogSeverity::Info);
  LogCapture cap;
  std::vector<std::pair<size_t, size_t>> calls;
  EinsumOptions o;
  o.optimize = EinsumOptimize::Time;
  o.time_candidates = 3;
  o.progress = [&](size_t timed, size_t total) { calls.emplace_back(timed, total); };
  const auto plan = einsum_plan("ab,bc,cd->ad", {{3, 5}, {5, 4}, {4, 2}}, o);
  set_default_log_severity(saved);
  const size_t total = plan.candidates.size();
  ASSERT_GT(total, 0u);
  ASSERT_EQ(calls.size(), total + 1);
  for (size_t i = 0; i <= total; ++i) EXPECT_EQ(calls[i], std::make_pair(i, total));
  EXPECT_EQ(cap.count("einsum: timed plan", "onnxmini"), total);
  EXPECT_EQ(cap.count(fmt::format("einsum: timed plan {}/{}", total, total)), 1u);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
