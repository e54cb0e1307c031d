// Profiler recording and writing: the trace-format checklist on several models,
// both layouts, 1 and 2 threads; escaping; file names; end_profiling; skipped
// runs, windows, the event cap, memory counters, concurrent runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>
#include <atomic>
#include <chrono>

#include "core/thread_pool.h"

#include "profiler/run_trace.h"
#include "tests/common/model_builder.h"
#include "tests/profiler/trace_checks.h"

namespace fs = std::filesystem;
using namespace onnxmini;
using namespace onnxmini::test;

namespace {

const char kWeirdName[] = "we\"ird\\node\nname\t\x01";

// Mul(X, W) -> Add (weird name) -> Relu -> Concat -> Transpose; W, B initializers.
ModelBuilder chain_model() {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {-1, 8});
  mb.initializer("W", random_tensor(DType::Float32, {1, 8}, 1));
  mb.initializer("B", random_tensor(DType::Float32, {8}, 2));
  mb.node("Mul", {"X", "W"}, {"m"}).name("mul0");
  mb.node("Add", {"m", "B"}, {"a"}).name(kWeirdName);
  mb.node("Relu", {"a"}, {"r"});  // unnamed: "Relu_2"
  mb.node("Concat", {"r", "X"}, {"c"}).attr("axis", int64_t(1)).name("cat");
  mb.node("Transpose", {"c"}, {"Y"}).name("tr");
  mb.output("Y");
  return mb;
}

// Gather of int64 indices from a float table, then Add with a scalar.
ModelBuilder gather_model() {
  ModelBuilder mb(13);
  mb.input("I", DType::Int64, {3});
  mb.initializer("T", random_tensor(DType::Float32, {10, 4}, 3));
  mb.initializer("S", Tensor::from_vector<float>({}, {2.f}));
  mb.node("Gather", {"T", "I"}, {"g"}).name("gather");
  mb.node("Add", {"g", "S"}, {"Y"}).name("add_scalar");
  mb.output("Y");
  return mb;
}

struct Case {
  const char* name;
  ModelBuilder (*model)();
  std::vector<std::pair<std::string, Tensor>> (*feeds)();
};

std::vector<std::pair<std::string, Tensor>> chain_feeds() {
  return {{"X", random_tensor(DType::Float32, {64, 8}, 4)}};
}
std::vector<std::pair<std::string, Tensor>> gather_feeds() {
  return {{"I", Tensor::from_vector<int64_t>({3}, {1, 9, 0})}};
}

fs::path temp_prefix(const std::string& tag) {
  fs::path dir = fs::temp_directory_path() / ("onnxmini_prof_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / tag;
}

std::string profile_runs(const ModelBuilder& mb, SessionOptions o, const std::vector<std::pair<std::string, Tensor>>& feeds,
                         int runs) {
  o.enable_profiling = true;
  auto s = mb.session(o);
  for (int i = 0; i < runs; ++i) run_all(*s, feeds);
  std::string path = s->end_profiling();
  EXPECT_FALSE(path.empty());
  EXPECT_EQ(s->end_profiling(), "");  // second call: nothing
  return path;
}

class ProfilerChecklist : public ::testing::TestWithParam<std::tuple<int, ProfileLayout, int>> {};

TEST_P(ProfilerChecklist, TraceFollowsTheFormat) {
  const auto [model_index, layout, threads] = GetParam();
  const Case cases[] = {{"chain", chain_model, chain_feeds}, {"gather", gather_model, gather_feeds}};
  const Case& c = cases[model_index];
  SessionOptions o;
  o.intra_op_num_threads = threads;
  o.profile_layout = layout;
  o.profile_file_prefix = temp_prefix(std::string(c.name) + "_" + std::to_string(threads)).string();
  const std::string path = profile_runs(c.model(), o, c.feeds(), 3);
  ChecklistOptions co;
  co.fences = layout == ProfileLayout::Fences;
  co.expect_thread_stats = threads > 1;
  co.expected_runs = 3;
  auto events = check_trace_text(slurp(path), co);
  // Per run: the graph's nodes, in execution order, with the node names of the spec.
  std::vector<std::string> kernels;
  for (const auto& e : events)
    if (ends_with(e["name"].get<std::string>(), "_kernel_time")) kernels.push_back(e["name"]);
  const size_t per_run = model_index == 0 ? 5 : 2;
  ASSERT_EQ(kernels.size(), 3 * per_run);
  if (model_index == 0) {
    EXPECT_EQ(kernels[1], std::string(kWeirdName) + "_kernel_time");  // escaped on disk, intact after parsing
    EXPECT_EQ(kernels[2], "Relu_2_kernel_time");
  }
  fs::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Models, ProfilerChecklist,
                         ::testing::Combine(::testing::Values(0, 1),
                                            ::testing::Values(ProfileLayout::Fences, ProfileLayout::KernelOnly),
                                            ::testing::Values(1, 2)));

TEST(Profiler, KernelArgsSizesAndExtras) {
  SessionOptions o;
  o.profile_file_prefix = temp_prefix("args").string();
  const std::string path = profile_runs(chain_model(), o, chain_feeds(), 1);
  auto events = nlohmann::json::parse(slurp(path));
  std::map<std::string, nlohmann::json> args;
  for (const auto& e : events)
    if (ends_with(e["name"].get<std::string>(), "_kernel_time")) args[e["args"]["op_name"]] = e["args"];
  // Mul: X (activation, 64x8 floats) and W (initializer, 8 floats = parameter).
  EXPECT_EQ(args["Mul"]["activation_size"], "2048");
  EXPECT_EQ(args["Mul"]["parameter_size"], "32");
  EXPECT_EQ(args["Mul"]["output_size"], "2048");
  EXPECT_EQ(args["Mul"]["input_type_shape"], nlohmann::json::parse(R"([{"float":[64,8]},{"float":[1,8]}])"));
  EXPECT_EQ(args["Concat"]["output_type_shape"], nlohmann::json::parse(R"([{"float":[64,16]}])"));
  EXPECT_EQ(args["Concat"]["parameter_size"], "0");
  EXPECT_EQ(args["Mul"]["node_index"], "0");
  EXPECT_EQ(args["Transpose"]["node_index"], "4");
  // Extras: the kernel that ran, bytes, live intermediates.
  const ModelDescription d = chain_model().session()->describe();
  EXPECT_EQ(args["Relu"]["kernel"], d.nodes.at(2).kernel);  // the kernel's source file, as `onnxmini info` shows
  EXPECT_EQ(args["Mul"]["kernel"], d.nodes.at(0).kernel);
  EXPECT_EQ(args["Mul"]["bytes_written"], "2048");
  for (const auto& [op, a] : args) {
    EXPECT_TRUE(a.contains("live_intermediate_bytes")) << op;
    EXPECT_TRUE(a.contains("bytes_read")) << op;
  }
  // After Concat: a (released), m (released), r released after Concat; live = c (4096) at least.
  EXPECT_GE(std::stoll(args["Concat"]["live_intermediate_bytes"].get<std::string>()), 4096);
  fs::remove(path);
}

TEST(Profiler, EscapingGivesValidJson) {
  std::string out;
  append_json_escaped(out, std::string("a\"b\\c\nd\x01\x1f", 9));
  EXPECT_EQ(out, "a\\\"b\\\\c\\nd\\u0001\\u001f");
  EXPECT_EQ(nlohmann::json::parse("\"" + out + "\"").get<std::string>(), std::string("a\"b\\c\nd\x01\x1f", 9));
}

TEST(Profiler, FileNameEndProfilingAndNoCollision) {
  SessionOptions o;
  o.enable_profiling = true;
  o.profile_file_prefix = temp_prefix("name").string();
  auto a = chain_model().session(o);
  auto b = chain_model().session(o);  // same prefix, same second
  const std::string pa = a->end_profiling(), pb = b->end_profiling();
  EXPECT_NE(pa, pb);
  const std::regex pattern(".*/name_\\d{4}-\\d{2}-\\d{2}_\\d{2}-\\d{2}-\\d{2}(_\\d{3}(_\\d+)?)?\\.json");
  EXPECT_TRUE(std::regex_match(pa, pattern)) << pa;
  EXPECT_TRUE(std::regex_match(pb, pattern)) << pb;
  EXPECT_TRUE(fs::exists(pa));
  EXPECT_TRUE(fs::exists(pb));
  EXPECT_EQ(a->end_profiling(), "");
  // No run: session events only, still the full layout.
  check_trace_text(slurp(pa), {});
  EXPECT_EQ(nlohmann::json::parse(slurp(pa)).size(), 2u);
  fs::remove(pa);
  fs::remove(pb);
}

TEST(Profiler, OffWritesNothing) {
  auto s = chain_model().session();
  run_all(*s, chain_feeds());
  EXPECT_EQ(s->end_profiling(), "");
}

TEST(Profiler, DefaultPrefixIsOnnxruntimes) { EXPECT_EQ(SessionOptions().profile_file_prefix, "onnxruntime_profile_"); }

int count_named(const nlohmann::json& events, const std::string& name) {
  int n = 0;
  for (const auto& e : events) n += e["name"] == name;
  return n;
}

TEST(Profiler, SkipRunsAndWindow) {
  SessionOptions o;
  o.profile_file_prefix = temp_prefix("window").string();
  o.profile_skip_runs = 2;
  o.profile_max_runs = 3;
  const std::string path = profile_runs(chain_model(), o, chain_feeds(), 7);
  auto events = check_trace_text(slurp(path), {true, false, 3, false});
  EXPECT_EQ(count_named(events, "model_run"), 3);
  fs::remove(path);
}

TEST(Profiler, EventCapKeepsWholeRunsAndWarnsOnce) {
  SessionOptions o;
  o.profile_file_prefix = temp_prefix("cap").string();
  // 2 session events + 2 runs x (5 nodes x 3 + 2) = 36; a third run does not fit in 50.
  o.profile_max_events = 50;
  ::testing::internal::CaptureStderr();
  const std::string path = profile_runs(chain_model(), o, chain_feeds(), 6);
  const std::string err = ::testing::internal::GetCapturedStderr();
  auto events = check_trace_text(slurp(path), {true, false, 2, false});
  EXPECT_LE(events.size(), 50u);
  EXPECT_NE(err.find("event cap"), std::string::npos) << err;
  EXPECT_EQ(err.find("event cap"), err.rfind("event cap")) << "warned more than once: " << err;
  fs::remove(path);
}

TEST(Profiler, MemoryCountersBehindTheOption) {
  SessionOptions o;
  o.profile_file_prefix = temp_prefix("mem").string();
  o.profile_memory_counters = true;
  const std::string path = profile_runs(chain_model(), o, chain_feeds(), 2);
  ChecklistOptions co;
  co.memory_counters = true;
  co.expected_runs = 2;
  auto events = check_trace_text(slurp(path), co);
  int live = 0, peak = 0;
  int64_t max_live = 0, peak_value = 0;
  for (const auto& e : events) {
    if (e["ph"] != "C") continue;
    EXPECT_TRUE(e["args"]["bytes"].is_number_integer());
    if (e["name"] == "live_intermediate_bytes") ++live, max_live = std::max<int64_t>(max_live, e["args"]["bytes"]);
    if (e["name"] == "peak_intermediate_bytes") ++peak, peak_value = e["args"]["bytes"];
  }
  EXPECT_EQ(live, 10);
  EXPECT_EQ(peak, 2);
  EXPECT_GE(peak_value, max_live);  // the peak is reached inside a node, live is measured after it
  fs::remove(path);
}

TEST(Profiler, ConcurrentRunsKeepTheirEventsTogether) {
  SessionOptions o;
  o.enable_profiling = true;
  o.profile_file_prefix = temp_prefix("concurrent").string();
  auto s = chain_model().session(o);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) run_all(*s, chain_feeds());
    });
  for (auto& t : threads) t.join();
  const std::string path = s->end_profiling();
  auto events = check_trace_text(slurp(path), {true, false, 20, false});  // item 4 checks each run's tid and nesting
  std::set<int64_t> tids;
  for (const auto& e : events)
    if (e["name"] == "model_run") tids.insert(e["tid"].get<int64_t>());
  EXPECT_EQ(tids.size(), 4u);
  // Each run: its 15 node events, in node order.
  size_t i = 2;
  for (int run = 0; run < 20; ++run, i += 2)
    for (const char* n : {"mul0", kWeirdName, "Relu_2", "cat", "tr"})
      for (const char* suffix : {"_fence_before", "_kernel_time", "_fence_after"})
        EXPECT_EQ(events[i++]["name"], std::string(n) + suffix);
  fs::remove(path);
}

TEST(Profiler, ThreadStatsAreDeltasOfThePool) {
  // Drives the profiler directly with plain samples: node A runs one parallel loop
  // of 64 items with grain 4 on a 2-thread pool, node B runs none.
  ThreadPool pool(2);
  ProfilerOptions o;
  o.enabled = true;
  o.layout = ProfileLayout::KernelOnly;
  o.file_prefix = temp_prefix("tstats").string();
  o.pool_workers = pool.worker_ids();
  Profiler prof(o);
  prof.session_event("model_loading_array", Profiler::now_ns(), Profiler::now_ns());
  prof.session_event("session_initialization", Profiler::now_ns(), Profiler::now_ns());
  ProfiledNode a{"A", "Relu", 0, {false}, "test"}, b{"B", "Relu", 1, {false}, "test"};
  const int64_t dims[] = {4};
  NodeSample sample;
  sample.inputs.push_back({DType::Float32, dims, 1, 16, 0});
  sample.outputs.push_back({DType::Float32, dims, 1, 16, -1});
  ThreadPool::Stats stats;
  pool.read_stats(stats);
  RunTracePtr run = prof.begin_run(&stats);
  ASSERT_TRUE(run);
  const int64_t t0 = Profiler::now_ns();
  std::atomic<int64_t> covered{0};
  pool.parallel_for(64, 4, [&](int64_t begin, int64_t end) {
    covered += end - begin;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  });
  pool.read_stats(stats);
  sample.pool_stats = &stats;
  prof.node(*run, a, sample);
  prof.node_done(*run, {t0, t0, Profiler::now_ns(), Profiler::now_ns()}, 0);
  const int64_t t1 = Profiler::now_ns();
  pool.read_stats(stats);
  prof.node(*run, b, sample);
  prof.node_done(*run, {t1, t1, t1, t1}, 0);
  prof.end_run(std::move(run), t0, Profiler::now_ns(), t0, Profiler::now_ns(), 0);
  const std::string path = prof.end_profiling();
  ASSERT_EQ(covered.load(), 64);
  ChecklistOptions co;
  co.fences = false;
  co.expect_thread_stats = true;
  co.expected_runs = 1;
  auto events = check_trace_text(slurp(path), co);
  ASSERT_EQ(events.size(), 6u);
  const auto& sa = events[2]["args"]["thread_scheduling_stats"];
  const auto& sb = events[3]["args"]["thread_scheduling_stats"];
  // 64 items, 2 threads: chunk = max(4, ceil(64 / 8)) = 8, so 8 chunks in all.
  EXPECT_EQ(sa["main_thread"]["block_size"], nlohmann::json::parse("[8]"));
  ASSERT_EQ(sa["sub_threads"].size(), 1u);
  const int64_t worker_runs = sa["sub_threads"].begin().value()["num_run"];
  EXPECT_GE(worker_runs, 0);
  EXPECT_LE(worker_runs, 8);
  EXPECT_GT(sa["main_thread"]["Run"].get<int64_t>(), 0);  // its own chunks slept 200 us each
  EXPECT_EQ(sb["main_thread"]["block_size"], nlohmann::json::array());
  EXPECT_EQ(sb["sub_threads"].begin().value()["num_run"], 0);
  EXPECT_EQ(sb["main_thread"]["Run"], 0);
  std::ostringstream id;
  id << pool.worker_ids().at(0);
  EXPECT_EQ(sa["sub_threads"].begin().key(), id.str());
  fs::remove(path);
}

}  // namespace
