// Control flow in traces, as onnxruntime writes it (docs/profiler.md, "Control flow"):
// body nodes get ordinary node events with their index in the body, each body
// execution ends with its own SequentialExecutor::Execute event, and the node that ran
// the bodies comes after them with a kernel_time that spans them. The analysis
// (profile::parse_trace, summarize, compare) counts body nodes once, gives the
// If/Loop/Scan node its own time and does not count body Executes as runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "onnxmini/profile.h"
#include "tests/common/model_builder.h"
#include "tests/profiler/trace_checks.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

// Loop body: cond_out = Identity(cond_in); acc_out = Add(acc_in, X) with X from the main graph.
ModelBuilder add_body() {
  ModelBuilder b(17);
  b.input("iter", DType::Int64, {});
  b.input("cond_in", DType::Bool, {});
  b.input("acc_in", DType::Float32, {2});
  b.node("Identity", {"cond_in"}, {"cond_out"}).name("body_id");
  b.node("Add", {"acc_in", "X"}, {"acc_out"}).name("body_add");
  b.output("cond_out", DType::Bool, {});
  b.output("acc_out", DType::Float32, {2});
  return b;
}

// pre = Relu(X); y = Loop(M, "", pre) with add_body; z = Neg(y).
ModelBuilder loop_model() {
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {2});
  mb.input("M", DType::Int64, {});
  mb.node("Relu", {"X"}, {"r"}).name("pre");
  mb.node("Loop", {"M", "", "r"}, {"y"}).name("the_loop").attr("body", add_body().graph());
  mb.node("Neg", {"y"}, {"z"}).name("post");
  mb.output("z");
  return mb;
}

// z = Abs(If(c) then { Loop(M, "", X) with add_body } else { Neg(X) }).
ModelBuilder if_loop_model() {
  ModelBuilder then_b(17), else_b(17);
  then_b.node("Loop", {"M", "", "X"}, {"t"}).name("inner_loop").attr("body", add_body().graph());
  then_b.output("t", DType::Float32, {2});
  else_b.node("Neg", {"X"}, {"e"}).name("else_neg");
  else_b.output("e", DType::Float32, {2});
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {2});
  mb.input("M", DType::Int64, {});
  mb.input("c", DType::Bool, {});
  mb.node("If", {"c"}, {"y"}).name("the_if").attr("then_branch", then_b.graph()).attr("else_branch", else_b.graph());
  mb.node("Abs", {"y"}, {"z"}).name("post");
  mb.output("z");
  return mb;
}

Tensor x_value() { return Tensor::from_vector<float>({2}, {1, -2}); }
Tensor trips(int64_t n) { return Tensor::scalar<int64_t>(n); }

// Runs `feeds` `runs` times with profiling on; returns the trace text (file removed).
std::string profile_text(const ModelBuilder& mb, ProfileLayout layout,
                    const std::vector<std::vector<std::pair<std::string, Tensor>>>& feeds_per_run) {
  SessionOptions o;
  o.enable_profiling = true;
  o.profile_layout = layout;
  o.profile_file_prefix = ::testing::TempDir() + "onnxmini_cf_profile";
  auto s = mb.session(o);
  for (const auto& feeds : feeds_per_run) run_all(*s, feeds);
  const std::string path = s->end_profiling();
  const std::string text = slurp(path);
  std::remove(path.c_str());
  return text;
}

// Independent body nodes run in onnxruntime's order (the later-listed Add first), as
// onnxruntime 1.32 does for the same body.

// The run events' names, model loading and initialization left out.
std::vector<std::string> run_event_names(const nlohmann::json& events) {
  std::vector<std::string> names;
  for (size_t i = 2; i < events.size(); ++i) names.push_back(events[i]["name"]);
  return names;
}

int64_t end_of(const nlohmann::json& e) { return e["ts"].get<int64_t>() + e["dur"].get<int64_t>(); }

const nlohmann::json& find_event(const nlohmann::json& events, const std::string& name) {
  for (const auto& e : events)
    if (e["name"] == name) return e;
  static const nlohmann::json none;
  ADD_FAILURE() << "no event " << name;
  return none;
}

}  // namespace

TEST(ProfilerControlFlow, LoopBodyEventsComeFirstThenOneExecutePerIteration) {
  const std::string text = profile_text(loop_model(), ProfileLayout::KernelOnly, {{{"X", x_value()}, {"M", trips(3)}}});
  ChecklistOptions co;
  co.fences = false;
  co.expected_runs = 1;
  const nlohmann::json events = check_trace_text(text, co);
  std::vector<std::string> expected{"pre_kernel_time"};
  for (int i = 0; i < 3; ++i)
    for (const char* n : {"body_add_kernel_time", "body_id_kernel_time", "SequentialExecutor::Execute"}) expected.push_back(n);
  for (const char* n : {"the_loop_kernel_time", "post_kernel_time", "SequentialExecutor::Execute", "model_run"})
    expected.push_back(n);
  EXPECT_EQ(run_event_names(events), expected);

  // Body nodes: ordinary kernel events, node_index within the body, no extra key.
  const nlohmann::json& add = find_event(events, "body_add_kernel_time");
  EXPECT_EQ(add["args"]["node_index"], "1");
  EXPECT_EQ(add["args"]["op_name"], "Add");
  EXPECT_EQ(add["args"]["input_type_shape"], nlohmann::json::parse(R"([{"float":[2]},{"float":[2]}])"));
  EXPECT_EQ(find_event(events, "body_id_kernel_time")["args"]["node_index"], "0");
  // The Loop's kernel_time spans its three body Executes (+1 us: ts and dur truncated apart).
  const nlohmann::json& loop = find_event(events, "the_loop_kernel_time");
  int bodies = 0;
  for (size_t i = 2; i + 2 < events.size(); ++i) {
    if (events[i]["name"] != "SequentialExecutor::Execute") continue;
    ++bodies;
    EXPECT_GE(events[i]["ts"].get<int64_t>(), loop["ts"].get<int64_t>());
    EXPECT_LE(end_of(events[i]), end_of(loop) + 1);
  }
  EXPECT_EQ(bodies, 3);
}

TEST(ProfilerControlFlow, FenceLayoutGivesBodyNodesFences) {
  const std::string text = profile_text(loop_model(), ProfileLayout::Fences, {{{"X", x_value()}, {"M", trips(2)}}});
  ChecklistOptions co;
  co.expected_runs = 1;
  const nlohmann::json events = check_trace_text(text, co);  // fence_before / kernel / fence_after per node
  int body_fences = 0, executes = 0;
  for (const auto& e : events) {
    body_fences += e["name"] == "body_add_fence_before" || e["name"] == "body_add_fence_after";
    executes += e["name"] == "SequentialExecutor::Execute";
  }
  EXPECT_EQ(body_fences, 4);
  EXPECT_EQ(executes, 3);  // two iterations, one run
}

TEST(ProfilerControlFlow, NestedLoopInIfAndTheBranchNotTaken) {
  const std::string text = profile_text(if_loop_model(), ProfileLayout::KernelOnly,
                                   {{{"X", x_value()}, {"M", trips(2)}, {"c", Tensor::scalar<bool>(true)}},
                                    {{"X", x_value()}, {"M", trips(2)}, {"c", Tensor::scalar<bool>(false)}}});
  ChecklistOptions co;
  co.fences = false;
  co.expected_runs = 2;
  const nlohmann::json events = check_trace_text(text, co);
  const std::vector<std::string> expected{
      // run 0: the then branch runs the Loop twice
      "body_add_kernel_time", "body_id_kernel_time", "SequentialExecutor::Execute",  //
      "body_add_kernel_time", "body_id_kernel_time", "SequentialExecutor::Execute",  //
      "inner_loop_kernel_time", "SequentialExecutor::Execute",                       // the then branch
      "the_if_kernel_time", "post_kernel_time", "SequentialExecutor::Execute", "model_run",
      // run 1: the else branch
      "else_neg_kernel_time", "SequentialExecutor::Execute", "the_if_kernel_time", "post_kernel_time",
      "SequentialExecutor::Execute", "model_run"};
  EXPECT_EQ(run_event_names(events), expected);

  const profile::Trace t = profile::parse_trace(text);
  EXPECT_EQ(t.num_runs, 2);
  EXPECT_EQ(t.subgraph_executions, 4);
  std::vector<std::string> got;
  for (const auto& k : t.kernels) got.push_back(k.node + "/" + std::to_string(k.run) + "/" + std::to_string(k.depth));
  const std::vector<std::string> want{"body_add/0/2",  "body_id/0/2", "body_add/0/2", "body_id/0/2",
                                      "inner_loop/0/1", "the_if/0/0", "post/0/0",   "else_neg/1/1",
                                      "the_if/1/0",   "post/1/0"};
  EXPECT_EQ(got, want);
  // Own times: the If minus its branch's Execute, the inner Loop minus its two iterations.
  std::vector<int64_t> execute_durs;
  for (const auto& e : events)
    if (e["name"] == "SequentialExecutor::Execute") execute_durs.push_back(e["dur"]);
  ASSERT_EQ(execute_durs.size(), 6u);
  EXPECT_EQ(t.kernels[4].self_us, std::max<int64_t>(0, t.kernels[4].dur_us - execute_durs[0] - execute_durs[1]));
  EXPECT_EQ(t.kernels[5].self_us, std::max<int64_t>(0, t.kernels[5].dur_us - execute_durs[2]));
  EXPECT_EQ(t.kernels[8].self_us, std::max<int64_t>(0, t.kernels[8].dur_us - execute_durs[4]));
  EXPECT_EQ(t.kernels[0].self_us, t.kernels[0].dur_us);
}

// onnxruntime 1.32's shape of a Loop run (kernel events only), with round numbers:
// Loop 100 us, two iterations of 30 and 20 us, body nodes 10+5 and 8+4 us.
const char kOrtLoopTrace[] = R"([
{"cat" : "Session","pid" :1,"tid" :1,"dur" :10,"ts" :0,"ph" : "X","name" :"model_loading_uri","args" : {}},
{"cat" : "Node","pid" :1,"tid" :1,"dur" :7,"ts" :100,"ph" : "X","name" :"pre_kernel_time","args" : {"op_name" : "Relu","node_index" : "0"}},
{"cat" : "Node","pid" :1,"tid" :1,"dur" :10,"ts" :120,"ph" : "X","name" :"body_id_kernel_time","args" : {"op_name" : "Identity","node_index" : "0"}},
{"cat" : "Node","pid" :1,"tid" :1,"dur" :5,"ts" :131,"ph" : "X","name" :"body_add_kernel_time","args" : {"op_name" : "Add","node_index" : "1"}},
{"cat" : "Session","pid" :1,"tid" :1,"dur" :30,"ts" :115,"ph" : "X","name" :"SequentialExecutor::Execute","args" : {}},
{"cat" : "Node","pid" :1,"tid" :1,"dur" :8,"ts" :150,"ph" : "X","name" :"body_id_kernel_time","args" : {"op_name" : "Identity","node_index" : "0"}},
{"cat" : "Node","pid" :1,"tid" :1,"dur" :4,"ts" :160,"ph" : "X","name" :"body_add_kernel_time","args" : {"op_name" : "Add","node_index" : "1"}},
{"cat" : "Session","pid" :1,"tid" :1,"dur" :20,"ts" :148,"ph" : "X","name" :"SequentialExecutor::Execute","args" : {}},
{"cat" : "Node","pid" :1,"tid" :1,"dur" :100,"ts" :110,"ph" : "X","name" :"the_loop_kernel_time","args" : {"op_name" : "Loop","node_index" : "1"}},
{"cat" : "Node","pid" :1,"tid" :1,"dur" :3,"ts" :211,"ph" : "X","name" :"post_kernel_time","args" : {"op_name" : "Neg","node_index" : "2"}},
{"cat" : "Session","pid" :1,"tid" :1,"dur" :120,"ts" :99,"ph" : "X","name" :"SequentialExecutor::Execute","args" : {}},
{"cat" : "Session","pid" :1,"tid" :1,"dur" :125,"ts" :98,"ph" : "X","name" :"model_run","args" : {}},
{"cat" : "Node","pid" :1,"tid" :1,"dur" :6,"ts" :300,"ph" : "X","name" :"pre_kernel_time","args" : {"op_name" : "Relu","node_index" : "0"}},
{"cat" : "Node","pid" :1,"tid" :1,"dur" :10,"ts" :310,"ph" : "X","name" :"the_loop_kernel_time","args" : {"op_name" : "Loop","node_index" : "1"}},
{"cat" : "Node","pid" :1,"tid" :1,"dur" :2,"ts" :321,"ph" : "X","name" :"post_kernel_time","args" : {"op_name" : "Neg","node_index" : "2"}},
{"cat" : "Session","pid" :1,"tid" :1,"dur" :30,"ts" :299,"ph" : "X","name" :"SequentialExecutor::Execute","args" : {}},
{"cat" : "Session","pid" :1,"tid" :1,"dur" :32,"ts" :298,"ph" : "X","name" :"model_run","args" : {}}
]
)";

TEST(ProfilerControlFlow, ReaderGivesOwnTimesAndCountsRunsNotBodies) {
  const profile::Trace t = profile::parse_trace(kOrtLoopTrace, "ort_loop");
  EXPECT_EQ(t.num_runs, 2);  // the second run's Loop ran zero iterations
  EXPECT_EQ(t.subgraph_executions, 2);
  ASSERT_EQ(t.kernels.size(), 10u);
  EXPECT_EQ(t.kernels[5].node, "the_loop");
  EXPECT_EQ(t.kernels[5].dur_us, 100);
  EXPECT_EQ(t.kernels[5].self_us, 50);  // 100 - 30 - 20
  EXPECT_EQ(t.kernels[5].depth, 0);
  EXPECT_EQ(t.kernels[1].depth, 1);
  EXPECT_EQ(t.kernels[1].run, 0);
  EXPECT_EQ(t.kernels[6].run, 0);
  EXPECT_EQ(t.kernels[7].run, 1);
  EXPECT_EQ(t.kernels[8].self_us, 10);  // no bodies: own time = dur
  EXPECT_EQ(t.kernels[8].depth, 0);
}

TEST(ProfilerControlFlow, SummaryShowsOwnTimesAndCountsBodyNodes) {
  const profile::Trace t = profile::parse_trace(kOrtLoopTrace, "ort_loop");
  profile::SummaryOptions so;
  so.by = profile::GroupBy::Op;
  const profile::Summary s = profile::summarize(t, so);
  EXPECT_EQ(s.runs, 2);
  // 7+6 Relu, 50+10 Loop (own), 10+8 Identity, 5+4 Add, 3+2 Neg: each microsecond once.
  EXPECT_EQ(s.total_us, 13 + 60 + 18 + 9 + 5);
  std::map<std::string, std::pair<int64_t, int64_t>> by_op;  // op -> (count, total)
  for (const auto& r : s.rows) by_op[r.op] = {r.count, r.total_us};
  EXPECT_EQ(by_op["Loop"], std::make_pair(int64_t(2), int64_t(60)));
  EXPECT_EQ(by_op["Add"], std::make_pair(int64_t(2), int64_t(9)));
  EXPECT_EQ(by_op["Identity"], std::make_pair(int64_t(2), int64_t(18)));
  EXPECT_EQ(s.rows.front().op, "Loop");
  // Skipping the first run leaves the zero-trip Loop's 10 us.
  so.skip_runs = 1;
  const profile::Summary s1 = profile::summarize(t, so);
  EXPECT_EQ(s1.runs, 1);
  EXPECT_EQ(s1.total_us, 6 + 10 + 2);
}

TEST(ProfilerControlFlow, CompareUsesOwnTimes) {
  const profile::Trace t = profile::parse_trace(kOrtLoopTrace, "ort_loop");
  profile::CompareOptions co;
  co.by = profile::GroupBy::Node;
  const profile::Comparison c = profile::compare(t, t, co);
  EXPECT_DOUBLE_EQ(c.base_total_us, (13 + 60 + 18 + 9 + 5) / 2.0);
  bool seen_loop = false;
  for (const auto& r : c.rows)
    if (r.node == "the_loop") {
      seen_loop = true;
      EXPECT_DOUBLE_EQ(r.base_us, 30.0);  // (50 + 10) / 2 runs
      EXPECT_EQ(r.base_count, 2);
    }
  EXPECT_TRUE(seen_loop);
}
