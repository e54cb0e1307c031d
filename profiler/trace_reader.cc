// Parses the JSON array with nlohmann_json. Runs are counted the way
// onnx-array-api does it: a kernel event belongs to the run whose
// "SequentialExecutor::Execute" event comes next in the file (onnxruntime and
// onnxmini write a run's node events before its Execute event).
//
// Control flow: onnxruntime (and onnxmini) also write one Execute event per body
// execution (If branch, Loop iteration, Scan step), after the body's node events and
// before the kernel event of the node that ran it, which spans them. Events are in
// the order they end, so the events nested in an event are the ones just before it
// whose span lies inside its span: a stack rebuilds the tree. Nesting alternates (an
// Execute holds kernel events, a kernel event holds Executes), which keeps 0 us events
// in the same microsecond (truncated ts) from being taken for children of their
// siblings. Execute events inside
// a kernel event are body executions, not runs; their time is taken out of the
// kernel event's own time (self_us).
#include "onnxmini/profile.h"

#include <cstdlib>
#include <algorithm>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "onnxmini/error.h"

namespace onnxmini {
namespace profile {

namespace {

const char kKernelSuffix[] = "_kernel_time";

bool ends_with(const std::string& s, const char* suffix, size_t n) {
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Scalar args are strings in onnxruntime's format; accept numbers too.
std::string arg_text(const nlohmann::json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

// A numeric arg (a string in onnxmini's traces); 0 when absent or not a number.
double arg_number(const nlohmann::json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end()) return 0;
  if (it->is_number()) return it->get<double>();
  if (!it->is_string()) return 0;
  const std::string& s = it->get_ref<const std::string&>();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end && *end == '\0' && !s.empty() ? v : 0;
}

// Times in microseconds. A number outside [0, limit] (negative, beyond int64, a huge
// float, NaN) is an error naming the field: converting it would be undefined behaviour,
// and the bounds keep every sum of a trace's times far inside int64.
constexpr int64_t kMaxTimestampUs = int64_t{1} << 53;  // the integers a JSON double holds exactly
constexpr int64_t kMaxDurationUs = int64_t{1} << 40;   // ~12.7 days for one event

int64_t int_field(const nlohmann::json& e, const char* key, const std::string& where, int64_t limit) {
  auto it = e.find(key);
  if (it == e.end() || !it->is_number()) throw Error(ErrorCode::InvalidArgument, where + ": field '" + key + "' is missing or not a number");
  bool in_range = false;
  int64_t v = 0;
  if (it->is_number_unsigned()) {
    const uint64_t u = it->get<uint64_t>();
    in_range = u <= static_cast<uint64_t>(limit);
    v = in_range ? static_cast<int64_t>(u) : 0;
  } else if (it->is_number_integer()) {
    v = it->get<int64_t>();
    in_range = v >= 0 && v <= limit;
  } else {
    const double d = it->get<double>();
    in_range = d >= 0 && d <= static_cast<double>(limit);  // false for NaN
    v = in_range ? static_cast<int64_t>(d) : 0;
  }
  if (!in_range)
    throw Error(ErrorCode::InvalidArgument, where + ": field '" + key + "' = " + it->dump() + " is outside [0, " +
                                                std::to_string(limit) + "] microseconds");
  return v;
}

// An event that may contain others, waiting for the event that contains it.
struct Span {
  int64_t ts = 0, end = 0;
  int kernel = -1;         // index into Trace::kernels; -1: an Execute event
  int64_t execute_dur = 0;  // Execute events: their dur
  size_t order = 0;         // Execute events: index into `executes`
};

// ts and dur are truncated separately, so a child's end may pass its parent's by 1 us.
bool inside(const Span& child, int64_t ts, int64_t end) { return child.ts >= ts && child.end <= end + 1; }

}  // namespace

static Trace parse_events(const std::string& text, const std::string& path) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax, and numbers beyond double (out_of_range 406)
    throw Error(ErrorCode::InvalidArgument, "profile '" + path + "' is not valid JSON: " + e.what());
  }
  // Chrome's object form {"traceEvents": [...]} is accepted too.
  if (doc.is_object() && doc.contains("traceEvents")) doc = doc["traceEvents"];
  if (!doc.is_array()) throw Error(ErrorCode::InvalidArgument, "profile '" + path + "' is not a JSON array of events");
  Trace trace;
  trace.path = path;
  std::vector<Span> open;              // events not yet known to be inside another
  std::vector<size_t> kernel_order;    // per kernel event: position among kernels and Executes
  std::vector<std::pair<size_t, bool>> executes;  // per Execute: (position, inside a kernel)
  size_t position = 0;
  std::vector<int> in_execute;   // per kernel event: the Execute event containing it, -1: none yet
  std::vector<int> owner;        // per Execute event: the kernel event that ran it, -1: a run
  for (size_t i = 0; i < doc.size(); ++i) {
    const nlohmann::json& e = doc[i];
    const std::string where = "profile '" + path + "' event " + std::to_string(i);
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) throw Error(ErrorCode::InvalidArgument, where + ": not an event with a name");
    const std::string name = e["name"].get<std::string>();
    if (name == "SequentialExecutor::Execute") {
      Span sp;
      sp.ts = int_field(e, "ts", where, kMaxTimestampUs);
      sp.execute_dur = int_field(e, "dur", where, kMaxDurationUs);
      sp.end = sp.ts + sp.execute_dur;
      // The nodes it ran are inside it; none of them contains a later event.
      sp.order = executes.size();
      while (!open.empty() && open.back().kernel >= 0 && inside(open.back(), sp.ts, sp.end)) {
        in_execute[open.back().kernel] = static_cast<int>(sp.order);
        open.pop_back();
      }
      owner.push_back(-1);
      executes.emplace_back(position++, false);
      open.push_back(sp);
      continue;
    }
    if (name == "model_run") {
      trace.run_us.push_back(int_field(e, "dur", where, kMaxDurationUs));
      open.clear();
      continue;
    }
    if (!ends_with(name, kKernelSuffix, sizeof kKernelSuffix - 1)) continue;
    static const nlohmann::json kEmpty = nlohmann::json::object();
    const nlohmann::json& args = e.contains("args") && e["args"].is_object() ? e["args"] : kEmpty;
    KernelEvent k;
    k.node = name.substr(0, name.size() - (sizeof kKernelSuffix - 1));
    k.op = arg_text(args, "op_name");
    k.provider = arg_text(args, "provider");
    if (args.contains("input_type_shape")) k.input_shapes = args["input_type_shape"].dump();
    if (args.contains("output_type_shape")) k.output_shapes = args["output_type_shape"].dump();
    const std::string index = arg_text(args, "node_index");
    if (!index.empty() && index.find_first_not_of("0123456789") == std::string::npos) {
      int64_t value = 0;
      const auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), value);
      if (ec != std::errc() || end != index.data() + index.size())
        throw Error(ErrorCode::InvalidArgument, where + ": node_index '" + index + "' does not fit in 64 bits");
      k.node_index = value;
    }
    k.variant = arg_text(args, "kernel_variant");
    k.isa = arg_text(args, "isa");
    k.flops = arg_number(args, "flops");
    k.bytes = arg_number(args, "bytes_read") + arg_number(args, "bytes_written");
    k.dur_us = int_field(e, "dur", where, kMaxDurationUs);
    k.ts_us = int_field(e, "ts", where, kMaxTimestampUs);
    const int self = static_cast<int>(trace.kernels.size());
    int64_t bodies_us = 0;
    while (!open.empty() && open.back().kernel < 0 && inside(open.back(), k.ts_us, k.ts_us + k.dur_us)) {
      const Span& body = open.back();
      bodies_us += body.execute_dur;
      executes[body.order].second = true;
      owner[body.order] = self;
      open.pop_back();
    }
    k.self_us = std::max<int64_t>(0, k.dur_us - bodies_us);
    Span sp;
    sp.ts = k.ts_us;
    sp.end = k.ts_us + k.dur_us;
    sp.kernel = self;
    open.push_back(sp);
    in_execute.push_back(-1);
    kernel_order.push_back(position++);
    trace.kernels.push_back(std::move(k));
  }
  // A kernel event belongs to the run of the first top-level Execute after it.
  size_t next_execute = 0;
  int run = 0;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    for (; next_execute < executes.size() && executes[next_execute].first < kernel_order[i]; ++next_execute)
      if (!executes[next_execute].second) ++run;
    trace.kernels[i].run = run;
  }
  for (const auto& x : executes) (x.second ? trace.subgraph_executions : trace.num_runs) += 1;
  // Depth: one more than the node that ran the body it sits in. That node's event comes
  // later in the file, so walk from the last event back.
  for (size_t i = trace.kernels.size(); i-- > 0;) {
    const int e = in_execute[i];
    if (e >= 0 && owner[e] >= 0) trace.kernels[i].depth = trace.kernels[owner[e]].depth + 1;
  }
  return trace;
}

Trace parse_trace(const std::string& text, const std::string& path) {
  try {
    return parse_events(text, path);
  } catch (const nlohmann::json::exception& e) {  // e.g. dumping an arg holding invalid UTF-8
    throw Error(ErrorCode::InvalidArgument, "profile '" + path + "' cannot be read: " + e.what());
  }
}

Trace read_trace(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorCode::IoError, "cannot read profile '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_trace(ss.str(), path);
}

}  // namespace profile
}  // namespace onnxmini
