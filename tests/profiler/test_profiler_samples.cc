// The profiler on its own: plain samples in (no session, no Value), trace out.
// Sizes by input slot, counters, dims copied at once, repeated node indices
// (subgraphs), and pool snapshots that do not fit the options.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "profiler/profiler.h"
#include "tests/profiler/trace_checks.h"

namespace fs = std::filesystem;
using namespace onnxmini;
using namespace onnxmini::test;

namespace {

ProfilerOptions kernel_only_options(const std::string& tag) {
  ProfilerOptions o;
  o.enabled = true;
  o.layout = ProfileLayout::KernelOnly;
  fs::path dir = fs::temp_directory_path() / ("onnxmini_samples_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  o.file_prefix = (dir / tag).string();
  return o;
}

// Reports `node` with fixed timestamps: kernel_time = 5 us.
void report(Profiler& prof, RunTrace& run, const ProfiledNode& node, const NodeSample& sample, int64_t t) {
  prof.node(run, node, sample);
  prof.node_done(run, {t, t + 1000, t + 6000, t + 7000}, 123);
}

// The kernel events of a written trace, in file order.
std::vector<nlohmann::json> kernel_events(const std::string& path) {
  std::vector<nlohmann::json> out;
  for (const auto& e : nlohmann::json::parse(slurp(path)))
    if (ends_with(e["name"].get<std::string>(), "_kernel_time")) out.push_back(e);
  return out;
}

TEST(ProfilerSamples, SizesFollowInputSlotsAndCountersBecomeArgs) {
  Profiler prof(kernel_only_options("slots"));
  // Inputs: slot 0 activation, slot 1 parameter, slot 2 absent this run, slot 3 parameter.
  ProfiledNode n{"conv", "Conv", 7, {false, true, false, true}, "conv_kernel"};
  const int64_t x[] = {1, 3, 8, 8}, w[] = {4, 3, 3, 3}, b[] = {4}, y[] = {1, 4, 6, 6};
  NodeSample s;
  s.inputs = {{DType::Float32, x, 4, 768, 0}, {DType::Float32, w, 4, 432, 1}, {DType::Float32, b, 1, 16, 3}};
  s.outputs = {{DType::Float32, y, 4, 576, -1}};
  s.counters.flops = 2e6;
  s.counters.bytes_written = 1000;
  s.counters.variant = "im2col";
  RunTracePtr run = prof.begin_run();
  ASSERT_TRUE(run);
  const int64_t t0 = Profiler::now_ns();
  report(prof, *run, n, s, t0);
  prof.end_run(std::move(run), t0, t0 + 8000, t0, t0 + 9000, 999);
  const std::string path = prof.end_profiling();
  auto k = kernel_events(path);
  ASSERT_EQ(k.size(), 1u);
  const auto& a = k[0]["args"];
  EXPECT_EQ(k[0]["name"], "conv_kernel_time");
  EXPECT_EQ(k[0]["dur"], 5);
  EXPECT_EQ(a["activation_size"], "768");
  EXPECT_EQ(a["parameter_size"], "448");
  EXPECT_EQ(a["output_size"], "576");
  EXPECT_EQ(a["node_index"], "7");
  EXPECT_EQ(a["kernel"], "conv_kernel");
  EXPECT_EQ(a["kernel_variant"], "im2col");
  EXPECT_EQ(a["input_type_shape"], nlohmann::json::parse(R"([{"float":[1,3,8,8]},{"float":[4,3,3,3]},{"float":[4]}])"));
  EXPECT_EQ(a["output_type_shape"], nlohmann::json::parse(R"([{"float":[1,4,6,6]}])"));
  EXPECT_EQ(a["flops"], "2000000");
  EXPECT_EQ(a["bytes_read"], "1216");  // not reported: the input sizes
  EXPECT_EQ(a["bytes_written"], "1000");
  EXPECT_EQ(a["gflop_per_s"], "400.000");  // 2e6 flops in 5 us
  EXPECT_EQ(a["live_intermediate_bytes"], "123");
  EXPECT_EQ(a["thread_scheduling_stats"], "");  // no pool in the options
  fs::remove(path);
}

TEST(ProfilerSamples, DimsAreCopiedWhenTheNodeIsReported) {
  Profiler prof(kernel_only_options("copy"));
  ProfiledNode n{"r", "Relu", 0, {false}, "k"};
  int64_t dims[] = {2, 5};
  NodeSample s;
  s.inputs = {{DType::Int64, dims, 2, 80, 0}};
  RunTracePtr run = prof.begin_run();
  const int64_t t0 = Profiler::now_ns();
  prof.node(*run, n, s);
  dims[0] = 99;  // the caller reuses its storage before the node is done
  s.clear();
  EXPECT_TRUE(s.inputs.empty() && s.inputs.capacity() > 0);
  prof.node_done(*run, {t0, t0, t0, t0}, 0);
  prof.end_run(std::move(run), t0, t0, t0, t0, 0);
  const std::string path = prof.end_profiling();
  auto k = kernel_events(path);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0]["args"]["input_type_shape"], nlohmann::json::parse(R"([{"int64":[2,5]}])"));
  fs::remove(path);
}

TEST(ProfilerSamples, SubgraphNodesMayRepeatNodeIndices) {
  // A Loop node (index 1 of the main graph) whose body's node 1 runs twice inside it:
  // the body's events come first (they end first), then the Loop's own.
  Profiler prof(kernel_only_options("subgraph"));
  ProfiledNode loop{"loop", "Loop", 1, {false}, "loop"};
  ProfiledNode body_add{"body_add", "Add", 1, {false, false}, "binary_arith"};
  body_add.graph = 1;
  const int64_t d[] = {3};
  NodeSample s;
  s.inputs = {{DType::Float32, d, 1, 12, 0}, {DType::Float32, d, 1, 12, 1}};
  s.outputs = {{DType::Float32, d, 1, 12, -1}};
  RunTracePtr run = prof.begin_run();
  const int64_t t0 = Profiler::now_ns();
  report(prof, *run, body_add, s, t0);
  report(prof, *run, body_add, s, t0 + 10000);
  s.inputs.resize(1);
  report(prof, *run, loop, s, t0);
  prof.end_run(std::move(run), t0, t0 + 30000, t0, t0 + 30000, 0);
  const std::string path = prof.end_profiling();
  auto k = kernel_events(path);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0]["name"], "body_add_kernel_time");
  EXPECT_EQ(k[1]["name"], "body_add_kernel_time");
  EXPECT_EQ(k[2]["name"], "loop_kernel_time");
  for (const auto& e : k) EXPECT_EQ(e["args"]["node_index"], "1");
  EXPECT_EQ(k[0]["args"]["activation_size"], "24");
  EXPECT_EQ(k[2]["args"]["activation_size"], "12");
  fs::remove(path);
}

TEST(ProfilerSamples, PoolSnapshotsThatDoNotFitTheOptionsAreLeftOut) {
  // The options name one worker; the samples come from a 3-thread pool.
  ThreadPool small(2), big(3);
  ProfilerOptions o = kernel_only_options("mismatch");
  o.pool_workers = small.worker_ids();
  Profiler prof(o);
  ThreadPool::Stats stats;
  big.read_stats(stats);
  ProfiledNode n{"r", "Relu", 0, {false}, "k"};
  NodeSample s;
  s.pool_stats = &stats;
  RunTracePtr run = prof.begin_run(&stats);
  const int64_t t0 = Profiler::now_ns();
  report(prof, *run, n, s, t0);
  prof.end_run(std::move(run), t0, t0 + 8000, t0, t0 + 8000, 0);
  const std::string path = prof.end_profiling();
  auto k = kernel_events(path);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0]["args"]["thread_scheduling_stats"], "");
  fs::remove(path);
}

}  // namespace
