// Checklist item 8: for the same model and input shape, onnxmini's trace and a
// real onnxruntime 1.20 trace (graph optimization off, 1 thread) agree on the
// node events of a run: names, op_name, node_index, sizes, type/shape lists.
// Needs every kernel of small.onnx; skipped (with the reason) until they exist.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/common/model_builder.h"
#include "tests/profiler/trace_checks.h"

namespace fs = std::filesystem;
using namespace onnxmini;
using namespace onnxmini::test;

namespace {

const fs::path kShared = fs::path(ONNXMINI_SOURCE_DIR) / ".." / "shared";

// The node events of the first run (everything before the first Execute).
std::vector<nlohmann::json> first_run_nodes(const nlohmann::json& events) {
  std::vector<nlohmann::json> out;
  for (size_t i = 2; i < events.size(); ++i) {
    if (events[i]["name"] == "SequentialExecutor::Execute") break;
    if (events[i]["cat"] == "Node") out.push_back(events[i]);
  }
  return out;
}

TEST(ProfilerReference, SmallModelMatchesOnnxruntime120) {
  const fs::path model = kShared / "models" / "small.onnx";
  const fs::path ref = kShared / "reference" / "ort-traces" / "small_ort-1.20_no-opt_1-thread.json";
  if (!fs::exists(model) || !fs::exists(ref)) GTEST_SKIP() << "shared reference files not found";
  SessionOptions o;
  o.graph_optimization_level = ORT_DISABLE_ALL;  // node for node, as the no-opt reference trace
  o.enable_profiling = true;
  o.profile_file_prefix = (fs::temp_directory_path() / ("onnxmini_ref_" + std::to_string(::getpid()))).string();
  std::unique_ptr<Session> s;
  try {
    s = Session::load(model.string(), o);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::NotImplemented) GTEST_SKIP() << "kernels missing: " << e.what();
    throw;
  }
  s->run({{"input", Value(random_tensor(DType::Float32, {1, 3, 112, 112}, 7))}});
  const std::string path = s->end_profiling();
  ChecklistOptions co;
  co.expected_runs = 1;
  const auto ours = first_run_nodes(check_trace_text(slurp(path), co));
  const auto theirs = first_run_nodes(nlohmann::json::parse(slurp(ref.string())));
  ASSERT_EQ(ours.size(), theirs.size());
  ASSERT_EQ(ours.size(), 14u * 3);
  for (size_t i = 0; i < ours.size(); ++i) {
    SCOPED_TRACE(theirs[i]["name"].get<std::string>());
    EXPECT_EQ(ours[i]["name"], theirs[i]["name"]);
    EXPECT_EQ(ours[i]["cat"], theirs[i]["cat"]);
    const auto& a = ours[i]["args"];
    const auto& b = theirs[i]["args"];
    // Every key onnxruntime writes, same value; only the timings (and thread stats) may differ.
    for (const auto& [key, value] : b.items()) {
      if (key == "thread_scheduling_stats") continue;
      EXPECT_EQ(a[key], value) << key;
    }
  }
  fs::remove(path);
}

}  // namespace
