// Reading onnxruntime-format traces in tests: one profiled run of a model, and string
// fields of its node events (kernel_variant, isa, ...), without each test file carrying
// its own copy of the file handling.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {

// The trace (JSON text) of one run of `mb` with `o`, profiling switched on here; the file is
// removed after reading.
inline std::string profiled_trace(const ModelBuilder& mb, SessionOptions o,
                                  const std::vector<std::pair<std::string, Tensor>>& feeds) {
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "profiled_trace_";
  auto session = mb.session(o);
  run_all(*session, feeds);
  const std::string file = session->end_profiling();
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::remove(file.c_str());
  return ss.str();
}

// The value of the first string field `key` at or after offset `from` whose value starts
// with `prefix` ("" if none). Node events are written in run order, so from = the offset
// of "<node>_kernel_time" reads that node's fields.
inline std::string trace_value(const std::string& trace, const std::string& key, size_t from = 0,
                               const std::string& prefix = "") {
  const std::string k = "\"" + key + "\" : \"" + prefix;
  const size_t at = trace.find(k, from == std::string::npos ? 0 : from);
  if (at == std::string::npos) return "";
  const size_t b = at + k.size() - prefix.size();
  return trace.substr(b, trace.find('"', b) - b);
}

// The kernel_variant of the first traced node whose variant starts with `prefix`.
inline std::string profiled_variant(const ModelBuilder& mb, SessionOptions o,
                                    const std::vector<std::pair<std::string, Tensor>>& feeds,
                                    const std::string& prefix = "") {
  return trace_value(profiled_trace(mb, std::move(o), feeds), "kernel_variant", 0, prefix);
}

}  // namespace test
}  // namespace onnxmini
