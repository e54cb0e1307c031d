// Parses the JSON array with nlohmann_json. Runs are counted the way
// onnx-array-api does it: a kernel event belongs to the run whose
// "SequentialExecutor::Execute" event comes next in the file (onnxruntime and
// onnxmini write a run's node events before its Execute event).
#include "onnxmini/profile.h"

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

int64_t int_field(const nlohmann::json& e, const char* key, const std::string& where) {
  auto it = e.find(key);
  if (it == e.end() || !it->is_number()) throw Error(ErrorCode::InvalidArgument, where + ": field '" + key + "' is missing or not a number");
  return it->get<int64_t>();
}

}  // namespace

Trace parse_trace(const std::string& text, const std::string& path) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(ErrorCode::InvalidArgument, "profile '" + path + "' is not valid JSON: " + e.what());
  }
  // Chrome's object form {"traceEvents": [...]} is accepted too.
  if (doc.is_object() && doc.contains("traceEvents")) doc = doc["traceEvents"];
  if (!doc.is_array()) throw Error(ErrorCode::InvalidArgument, "profile '" + path + "' is not a JSON array of events");
  Trace trace;
  trace.path = path;
  for (size_t i = 0; i < doc.size(); ++i) {
    const nlohmann::json& e = doc[i];
    const std::string where = "profile '" + path + "' event " + std::to_string(i);
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) throw Error(ErrorCode::InvalidArgument, where + ": not an event with a name");
    const std::string name = e["name"].get<std::string>();
    if (name == "SequentialExecutor::Execute") {
      ++trace.num_runs;
      continue;
    }
    if (name == "model_run") {
      trace.run_us.push_back(int_field(e, "dur", where));
      continue;
    }
    if (!ends_with(name, kKernelSuffix, sizeof kKernelSuffix - 1)) continue;
    static const nlohmann::json kEmpty = nlohmann::json::object();
    const nlohmann::json& args = e.contains("args") && e["args"].is_object() ? e["args"] : kEmpty;
    KernelEvent k;
    k.run = trace.num_runs;
    k.node = name.substr(0, name.size() - (sizeof kKernelSuffix - 1));
    k.op = arg_text(args, "op_name");
    k.provider = arg_text(args, "provider");
    if (args.contains("input_type_shape")) k.input_shapes = args["input_type_shape"].dump();
    if (args.contains("output_type_shape")) k.output_shapes = args["output_type_shape"].dump();
    const std::string index = arg_text(args, "node_index");
    if (!index.empty() && index.find_first_not_of("0123456789") == std::string::npos) k.node_index = std::stoll(index);
    k.dur_us = int_field(e, "dur", where);
    k.ts_us = int_field(e, "ts", where);
    trace.kernels.push_back(std::move(k));
  }
  return trace;
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
