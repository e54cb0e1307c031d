// The public trace analysis (include/onnxmini/profile.h) from C++: the example of
// docs/profiler.md ("From C++") runs here on onnxruntime's reference traces, and the
// doc's code block must be this file's example, verbatim.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "onnxmini/error.h"

// ---- example (docs/profiler.md) ----
#include <onnxmini/profile.h>

#include <ostream>

// Where the time goes in `base_path` (runs after the first), as the CLI's Markdown
// table, then the op types that take over 10 % longer per run in `other_path`.
void where_time_goes(const std::string& base_path, const std::string& other_path, std::ostream& out) {
  namespace prof = onnxmini::profile;
  const prof::Trace base = prof::read_trace(base_path);  // onnxmini's or onnxruntime's trace
  prof::SummaryOptions so;
  so.by = prof::GroupBy::Op;
  so.skip_runs = 1;
  const prof::Summary s = prof::summarize(base, so);
  out << prof::summary_table(s).render(prof::Format::Markdown, prof::summary_title(s));

  prof::CompareOptions co;
  co.by = prof::GroupBy::Op;
  co.skip_runs = 1;
  const prof::Comparison c = prof::compare(base, prof::read_trace(other_path), co);
  for (const prof::CompareRow& r : c.rows)
    if (r.side == "=" && r.ratio() > 1.1) out << r.op << " slower: x" << r.ratio() << "\n";
}
// ---- end of example ----

namespace {

namespace fs = std::filesystem;
namespace prof = onnxmini::profile;

const fs::path kRef = fs::path(ONNXMINI_SOURCE_DIR).parent_path() / "shared" / "reference" / "ort-traces";

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Kernel time per op type over runs >= 1, per run, straight from the kernel events.
std::map<std::string, double> per_run_by_op(const prof::Trace& t) {
  std::map<std::string, double> us;
  for (const prof::KernelEvent& k : t.kernels)
    if (k.run >= 1) us[k.op] += double(k.dur_us);
  for (auto& [op, v] : us) v /= prof::trace_runs(t) - 1;
  return us;
}

TEST(ProfileApi, DocExampleOnOnnxruntimeTraces) {
  const fs::path base = kRef / "small_ort-1.20_opt-all_2-threads.json";
  const fs::path other = kRef / "small_ort-1.20_no-opt_1-thread.json";
  if (!fs::exists(base) || !fs::exists(other)) GTEST_SKIP() << "reference traces not found";
  std::ostringstream out;
  where_time_goes(base.string(), other.string(), out);
  const std::string text = out.str();
  EXPECT_NE(text.find("| op | count | total_us | mean_us | per_run_us | share_pct |"), std::string::npos) << text;
  EXPECT_NE(text.find("runs: 5 (skipped 1)"), std::string::npos) << text;
  // The slower list, recomputed from the events.
  const auto b = per_run_by_op(prof::read_trace(base.string())), o = per_run_by_op(prof::read_trace(other.string()));
  int slower = 0;
  for (const auto& [op, us] : b) {
    auto it = o.find(op);
    const bool listed = text.find(op + " slower: x") != std::string::npos;
    EXPECT_EQ(listed, it != o.end() && us > 0 && it->second / us > 1.1) << op;
    slower += listed;
  }
  EXPECT_GT(slower, 0);  // the unoptimized single-thread run is slower on Conv at least
}

TEST(ProfileApi, DocShowsThisExample) {
  const std::string doc = read_file(fs::path(ONNXMINI_SOURCE_DIR) / "docs" / "profiler.md");
  const std::string src = read_file(fs::path(ONNXMINI_SOURCE_DIR) / "tests" / "profiler" / "test_profile_api.cc");
  const std::string begin = "// ---- example (docs/profiler.md) ----\n", end = "// ---- end of example ----";
  const size_t b = src.find(begin), e = src.find(end);
  ASSERT_TRUE(b != std::string::npos && e != std::string::npos);
  const std::string example = src.substr(b + begin.size(), e - b - begin.size());
  EXPECT_NE(doc.find("```cpp\n" + example + "```"), std::string::npos)
      << "docs/profiler.md must show the example of tests/profiler/test_profile_api.cc verbatim";
}

TEST(ProfileApi, ParseErrorsNameTheTraceAndTheEvent) {
  try {
    prof::parse_trace(R"([{"name": "a_kernel_time", "ts": 1}])", "t.json");
    FAIL() << "no error";
  } catch (const onnxmini::Error& e) {
    EXPECT_EQ(e.code(), onnxmini::ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("profile 't.json' event 0: field 'dur'"), std::string::npos) << e.what();
  }
}

// Times that int64 cannot hold (a fuzzer's 1.9e126), negative ones, NaN-free but huge
// unsigned ones: each an error naming the field and the value, never a conversion
// (undefined behaviour under UBSan, fuzz/regressions/trace/).
TEST(ProfileApi, TimesOutOfRangeAreErrors) {
  const char* bad[] = {"1.88889e+126", "-5", "18446744073709551615", "1.5e300", "1099511627777"};
  for (const char* dur : bad) {
    const std::string trace = std::string(R"([{"name": "a_kernel_time", "ts": 1, "dur": )") + dur +
                              R"(, "args": {"op_name": "Relu"}}])";
    try {
      prof::parse_trace(trace, "t.json");
      FAIL() << "no error for dur " << dur;
    } catch (const onnxmini::Error& e) {
      EXPECT_EQ(e.code(), onnxmini::ErrorCode::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("field 'dur' = "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("outside [0, 1099511627776] microseconds"), std::string::npos) << e.what();
    }
  }
  // A number beyond double's range is a JSON error of ours, not nlohmann's exception.
  try {
    prof::parse_trace(R"([{"name": "a_kernel_time", "ts": 1, "dur": 1.1e11111}])", "t.json");
    FAIL() << "no error for 1.1e11111";
  } catch (const onnxmini::Error& e) {
    EXPECT_NE(std::string(e.what()).find("profile 't.json' is not valid JSON"), std::string::npos) << e.what();
  }
  // A node_index of digits beyond int64.
  try {
    prof::parse_trace(R"([{"name": "a_kernel_time", "ts": 1, "dur": 2, "args": {"node_index": "99999999999999999999"}}])",
                      "t.json");
    FAIL() << "no error for a 20-digit node_index";
  } catch (const onnxmini::Error& e) {
    EXPECT_NE(std::string(e.what()).find("node_index '99999999999999999999' does not fit in 64 bits"), std::string::npos)
        << e.what();
  }
  // The largest accepted values still parse.
  EXPECT_NO_THROW(prof::parse_trace(
      R"([{"name": "a_kernel_time", "ts": 9007199254740992, "dur": 1099511627776, "args": {"op_name": "Relu"}}])",
      "t.json"));
}

}  // namespace
