// The checklist of ../shared/docs/ort-trace-format.md section 7 as reusable gtest
// checks on a trace's text (items 1-7); item 8 is in test_profiler_reference.cc.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "onnxmini/dtype.h"

namespace onnxmini {
namespace test {

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream is(text);
  while (std::getline(is, line)) lines.push_back(line);
  return lines;
}

inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Bytes of a type/shape list: [{"float":[1,3]}, ...] (string: 32 per element, as onnxruntime).
inline int64_t type_shape_bytes(const nlohmann::json& list) {
  int64_t total = 0;
  for (const auto& item : list) {
    EXPECT_EQ(item.size(), 1u) << item.dump();
    for (const auto& [type, dims] : item.items()) {
      DType dt = dtype_from_name(type);
      EXPECT_NE(dt, DType::Undefined) << "unknown element type " << type;
      int64_t n = 1;
      for (const auto& d : dims) n *= d.get<int64_t>();
      total += n * (dt == DType::String ? 32 : static_cast<int64_t>(dtype_size(dt)));
    }
  }
  return total;
}

struct ChecklistOptions {
  bool fences = true;
  bool expect_thread_stats = false;  // a pool with more than one thread
  int expected_runs = -1;            // -1: do not check
  bool memory_counters = false;
};

// Checklist items 1-7 of the trace format on `text`, parsed into `events`.
inline void check_trace_events(const std::string& text, const nlohmann::json& events, const ChecklistOptions& o) {
  SCOPED_TRACE("trace checklist");
  // 1. JSON array, "[" first line, "]" last line, trailing newline, one event per line.
  EXPECT_TRUE(events.is_array());
  EXPECT_EQ(text.back(), '\n');
  auto lines = split_lines(text);
  EXPECT_EQ(lines.front(), "[");
  EXPECT_EQ(lines.back(), "]");
  EXPECT_EQ(lines.size(), events.size() + 2);
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    const bool last = i + 2 == lines.size();
    EXPECT_EQ(lines[i].back(), last ? '}' : ',') << "line " << i;
    EXPECT_EQ(lines[i].rfind("{\"cat\" : \"", 0), 0u) << lines[i];
  }
  // 2. exactly eight keys, in onnxruntime's order; ph X; non-negative ints.
  static const std::vector<std::string> keys{"cat", "pid", "tid", "dur", "ts", "ph", "name", "args"};
  static const std::regex spacing(
      R"(^\{"cat" : "[A-Za-z]+","pid" :\d+,"tid" :\d+,"dur" :\d+,"ts" :\d+,"ph" : "[XC]","name" :".*","args" : \{.*\}\},?$)");
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    std::vector<std::string> got;
    for (const auto& [k, v] : e.items()) got.push_back(k);
    std::vector<std::string> sorted_keys = keys;
    std::sort(sorted_keys.begin(), sorted_keys.end());
    EXPECT_EQ(got, sorted_keys) << e.dump();  // nlohmann sorts keys
    EXPECT_TRUE(std::regex_match(lines[i + 1], spacing)) << lines[i + 1];
    for (const char* k : {"pid", "tid", "dur", "ts"}) {
      EXPECT_TRUE(e[k].is_number_integer()) << k << " in " << e.dump();
      EXPECT_GE(e[k].get<int64_t>(), 0);
    }
    EXPECT_TRUE(e["args"].is_object());
    if (e["cat"] == "Memory") {
      EXPECT_TRUE(o.memory_counters);
      EXPECT_EQ(e["ph"], "C");
    } else {
      EXPECT_EQ(e["ph"], "X") << e.dump();
    }
  }
  // 3. loading, then initialization.
  EXPECT_GE(events.size(), 2u);
  EXPECT_TRUE(events[0]["name"] == "model_loading_uri" || events[0]["name"] == "model_loading_array");
  EXPECT_EQ(events[1]["name"], "session_initialization");
  EXPECT_EQ(events[0]["args"], nlohmann::json::object());
  // 4. runs: nodes, Execute, model_run, nested intervals (+-1 us); body Executes are not runs.
  int runs = 0;
  std::vector<nlohmann::json> pending;
  for (size_t i = 2; i < events.size(); ++i) {
    const auto& e = events[i];
    const std::string name = e["name"];
    if (name == "SequentialExecutor::Execute") {
      ASSERT_LT(i + 1, events.size());
      // A body execution (If/Loop/Scan): more node events of the run follow, not
      // model_run. Its nodes stay pending: they lie inside the run's Execute too.
      if (events[i + 1]["name"] != "model_run") continue;
      const auto& run = events[i + 1];
      EXPECT_EQ(run["name"], "model_run");
      const int64_t xb = e["ts"], xe = xb + e["dur"].get<int64_t>();
      const int64_t rb = run["ts"], re = rb + run["dur"].get<int64_t>();
      EXPECT_GE(xb + 1, rb);
      EXPECT_LE(xe, re + 1);
      for (const auto& n : pending) {
        const int64_t nb = n["ts"], ne = nb + n["dur"].get<int64_t>();
        EXPECT_GE(nb + 1, xb) << n.dump();
        EXPECT_LE(ne, xe + 1) << n.dump();
        EXPECT_EQ(n["tid"], e["tid"]);
      }
      pending.clear();
      ++runs;
      ++i;  // model_run checked
      continue;
    }
    EXPECT_NE(name, "model_run") << "model_run without Execute before it";
    pending.push_back(e);
  }
  EXPECT_TRUE(pending.empty()) << "node events after the last run";
  if (o.expected_runs >= 0) EXPECT_EQ(runs, o.expected_runs);
  // 5-7. node events.
  static const std::vector<std::string> nine{"op_name", "provider", "node_index", "activation_size", "parameter_size",
                                             "output_size", "input_type_shape", "output_type_shape",
                                             "thread_scheduling_stats"};
  static const std::regex digits("^\\d+$");
  for (size_t i = 2; i < events.size(); ++i) {
    const auto& e = events[i];
    const std::string name = e["name"];
    if (e["cat"] != "Node") continue;
    if (ends_with(name, "_fence_before") || ends_with(name, "_fence_after")) {
      EXPECT_TRUE(o.fences) << name;
      EXPECT_EQ(e["args"].size(), 1u);
      EXPECT_TRUE(e["args"]["op_name"].is_string());
      continue;
    }
    ASSERT_TRUE(ends_with(name, "_kernel_time")) << name;
    const std::string node = name.substr(0, name.size() - 12);
    const auto& a = e["args"];
    if (o.fences) {
      ASSERT_GE(i, 1u);
      ASSERT_LT(i + 1, events.size());
      EXPECT_EQ(events[i - 1]["name"], node + "_fence_before");
      EXPECT_EQ(events[i - 1]["args"], nlohmann::json({{"op_name", a["op_name"]}}));
      size_t after = i + 1;
      EXPECT_EQ(events[after]["name"], node + "_fence_after");
      EXPECT_EQ(events[after]["args"], nlohmann::json({{"op_name", a["op_name"]}}));
    } else if (i > 0) {
      EXPECT_FALSE(ends_with(events[i - 1]["name"].get<std::string>(), "_fence_before"));
    }
    for (const auto& k : nine) EXPECT_TRUE(a.contains(k)) << k << " missing in " << name;
    for (const char* k : {"node_index", "activation_size", "parameter_size", "output_size"}) {
      ASSERT_TRUE(a[k].is_string()) << k;
      EXPECT_TRUE(std::regex_match(a[k].get<std::string>(), digits)) << k << "=" << a[k];
    }
    EXPECT_EQ(a["provider"], "CPUExecutionProvider");
    EXPECT_TRUE(a["input_type_shape"].is_array());
    EXPECT_TRUE(a["output_type_shape"].is_array());
    const int64_t in_bytes = type_shape_bytes(a["input_type_shape"]);
    EXPECT_EQ(std::stoll(a["activation_size"].get<std::string>()) + std::stoll(a["parameter_size"].get<std::string>()),
              in_bytes)
        << name;
    EXPECT_EQ(std::stoll(a["output_size"].get<std::string>()), type_shape_bytes(a["output_type_shape"])) << name;
    if (o.expect_thread_stats) {
      const auto& t = a["thread_scheduling_stats"];
      EXPECT_TRUE(t.is_object()) << t.dump();
      if (t.is_object()) {
        const auto& m = t["main_thread"];
        for (const char* k : {"thread_pool_name", "thread_id"}) EXPECT_TRUE(m[k].is_string()) << k;
        EXPECT_TRUE(m["block_size"].is_array());
        for (const char* k : {"core", "Distribution", "DistributionEnqueue", "Run", "Wait", "WaitRevoke"})
          EXPECT_TRUE(m[k].is_number_integer()) << k;
        EXPECT_TRUE(t["sub_threads"].is_object());
        for (const auto& [id, w] : t["sub_threads"].items()) {
          EXPECT_TRUE(w["num_run"].is_number_integer());
          EXPECT_TRUE(w["core"].is_number_integer());
        }
      }
    } else {
      EXPECT_EQ(a["thread_scheduling_stats"], "");
    }
  }
}

// Parses (a parse error fails the test with an exception) and runs the checklist.
inline nlohmann::json check_trace_text(const std::string& text, const ChecklistOptions& o) {
  nlohmann::json events = nlohmann::json::parse(text);
  check_trace_events(text, events, o);
  return events;
}

}  // namespace test
}  // namespace onnxmini
