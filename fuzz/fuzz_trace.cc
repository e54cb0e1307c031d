// Fuzz target: the profile trace reader (onnxmini's and onnxruntime's JSON traces,
// what `onnxmini profile summary|compare` and onnxmini.profiling read). A trace
// that parses is summarized three ways, compared with itself and rendered in every
// format. onnxmini::Error is the accepted way to refuse a file; a crash, a hang or
// another exception type escaping the API is a finding. Comparing a trace with
// itself must give a ratio of 1 (or 0 for rows without time) on every row.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_limits.h"
#include "onnxmini/error.h"
#include "onnxmini/profile.h"

namespace profile = onnxmini::profile;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  onnxmini_fuzz::set_limits();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  profile::Trace trace;
  try {
    trace = profile::parse_trace(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const onnxmini::Error&) {
    return 0;
  }
  try {
    for (auto by : {profile::GroupBy::Op, profile::GroupBy::Node, profile::GroupBy::Shape}) {
      profile::SummaryOptions options;
      options.by = by;
      options.top = static_cast<int>(size % 4);
      const profile::Summary summary = profile::summarize(trace, options);
      const profile::Table table = profile::summary_table(summary);
      for (auto format : {profile::Format::Text, profile::Format::Csv, profile::Format::Json, profile::Format::Markdown})
        table.render(format, profile::summary_title(summary));
    }
    const profile::Comparison self = profile::compare(trace, trace, {});
    for (const auto& row : self.rows) {
      const double r = row.ratio();
      if (r != 0 && (r < 0.999999 || r > 1.000001)) std::abort();
    }
    profile::comparison_table(self).render(profile::Format::Text, profile::comparison_title(self));
  } catch (const onnxmini::Error&) {
  }
  return 0;
}
