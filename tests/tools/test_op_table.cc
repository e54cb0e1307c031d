// The kernel table is checked: docs/ops.md must equal `onnxmini ops --markdown`,
// and no two registrations of one op may claim the same opset.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

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

TEST(OpTable, NoOverlappingRegistrations) {
  auto ops = onnxmini::supported_ops();
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    const auto& a = ops[i];
    const auto& b = ops[i + 1];
    if (a.domain == b.domain && a.op_type == b.op_type)
      EXPECT_LT(a.until_version, b.since_version) << a.op_type << " registered twice for overlapping opsets ("
                                                  << a.kernel << ", " << b.kernel << ")";
  }
}
