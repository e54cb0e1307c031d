// The kernel table as the CLI (which links the shared library) sees it:
// docs/ops.md must equal `onnxmini ops --markdown`, and `onnxmini ops` must list
// exactly the registrations of the static test binary, so no kernel file drops
// out of the shared library's link either (tests/kernels/test_registry.cc
// checks the static side against the sources).
#include <gtest/gtest.h>

#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "onnxmini/onnxmini.h"

namespace {
std::string run_capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}
}  // namespace

TEST(OpTable, DocsMatchRegistry) {
  std::ifstream f(std::string(ONNXMINI_SOURCE_DIR) + "/docs/ops.md");
  ASSERT_TRUE(f) << "docs/ops.md is missing: run `onnxmini ops --markdown > docs/ops.md`";
  std::stringstream ss;
  ss << f.rdbuf();
  std::string generated = run_capture(std::string(ONNXMINI_CLI_PATH) + " ops --markdown");
  EXPECT_EQ(ss.str(), generated) << "docs/ops.md is stale: run `build/tools/onnxmini ops --markdown > docs/ops.md`";
}

// `onnxmini ops` prints one line per registration: domain, op, since-[until], kernel, source.
// The static binary also holds kernels that tests register (not from kernels/): skipped.
TEST(OpTable, CliListsTheRegistrationsOfTheStaticBinary) {
  std::vector<onnxmini::OpSupport> ops;
  for (auto& op : onnxmini::supported_ops())
    if (op.source.rfind("kernels/", 0) == 0) ops.push_back(std::move(op));
  ASSERT_FALSE(ops.empty());
  std::istringstream cli(run_capture(std::string(ONNXMINI_CLI_PATH) + " ops"));
  std::string line;
  size_t i = 0;
  for (; std::getline(cli, line); ++i) {
    std::istringstream fields(line);
    std::string domain, op, range, kernel, source;
    ASSERT_TRUE(fields >> domain >> op >> range >> kernel >> source) << "malformed line: " << line;
    if (i >= ops.size()) continue;  // counted below
    const auto& want = ops[i];
    const std::string want_range = std::to_string(want.since_version) + "-" +
                                   (want.until_version == INT_MAX ? "" : std::to_string(want.until_version));
    EXPECT_EQ(domain, want.domain.empty() ? "ai.onnx" : want.domain) << line;
    EXPECT_EQ(op, want.op_type) << line;
    EXPECT_EQ(range, want_range) << line;
    EXPECT_EQ(kernel, want.kernel) << line;
    EXPECT_EQ(source, want.source) << line;
  }
  EXPECT_EQ(i, ops.size()) << "`onnxmini ops` (shared library) and supported_ops() (static) list different counts";
}
