// The ONNX backend node tests listed in tests/conformance/manifest.txt. A test
// marked `pass` must pass; `skip: <reason>` is reported as skipped with the
// reason. When the test data folder is absent, every case skips.
//
// scripts/conformance.py drives the second test below (ConformanceSweep.RunList)
// to try every node test of the covered ops and propose manifest statuses.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "conformance_runner.h"

namespace fs = std::filesystem;
using namespace onnxmini::conformance;

namespace {

std::string manifest_path() { return std::string(ONNXMINI_SOURCE_DIR) + "/tests/conformance/manifest.txt"; }

std::vector<ManifestEntry> manifest_entries() {
  try {
    return read_manifest(manifest_path());
  } catch (const std::exception& e) {
    // Surfaced by ConformanceManifest.Parses; no parameterized cases then.
    return {};
  }
}

class NodeTest : public ::testing::TestWithParam<ManifestEntry> {};

TEST_P(NodeTest, MatchesExpectedOutputs) {
  const ManifestEntry& e = GetParam();
  const fs::path folder = fs::path(node_test_root()) / e.test;
  if (!fs::exists(folder / "model.onnx")) GTEST_SKIP() << "test data not installed: " << folder;
  if (!e.pass) GTEST_SKIP() << e.reason;
  const CaseResult r = run_case(folder.string());
  EXPECT_TRUE(r.passed) << e.test << ": " << r.message;
}

INSTANTIATE_TEST_SUITE_P(Onnx, NodeTest, ::testing::ValuesIn(manifest_entries()),
                         [](const ::testing::TestParamInfo<ManifestEntry>& info) { return info.param.test; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NodeTest);

TEST(ConformanceManifest, Parses) {
  std::vector<ManifestEntry> entries;
  ASSERT_NO_THROW(entries = read_manifest(manifest_path()));
  EXPECT_GT(entries.size(), 100u);
  for (const auto& e : entries)
    if (!e.pass) EXPECT_FALSE(e.reason.empty()) << e.test;
}

TEST(ConformanceManifest, RejectsMalformedLines) {
  const fs::path p = fs::temp_directory_path() / "onnxmini_bad_manifest.txt";
  {
    std::ofstream(p) << "test_add pass\ntest_sub maybe\n";
  }
  EXPECT_THROW(read_manifest(p.string()), std::runtime_error);
  {
    std::ofstream(p) << "test_add skip:\n";
  }
  EXPECT_THROW(read_manifest(p.string()), std::runtime_error);
  fs::remove(p);
}

// The comparison must notice a wrong output: run a real node test against
// deliberately swapped expected data.
TEST(ConformanceRunner, DetectsWrongOutput) {
  const fs::path add = fs::path(node_test_root()) / "test_add";
  if (!fs::exists(add / "model.onnx")) GTEST_SKIP() << "test data not installed";
  const fs::path tmp = fs::temp_directory_path() / "onnxmini_conformance_wrong";
  fs::remove_all(tmp);
  fs::copy(add, tmp, fs::copy_options::recursive);
  // Expected output := first input (x), which differs from x + y.
  fs::copy_file(tmp / "test_data_set_0" / "input_0.pb", tmp / "test_data_set_0" / "output_0.pb",
                fs::copy_options::overwrite_existing);
  const CaseResult wrong = run_case(tmp.string());
  EXPECT_FALSE(wrong.passed);
  EXPECT_NE(wrong.message.find("differ"), std::string::npos) << wrong.message;
  fs::remove_all(tmp);
  EXPECT_TRUE(run_case(add.string()).passed);
}

// Sweep mode for scripts/conformance.py: ONNXMINI_CONFORMANCE_LIST names a file of
// test folder names; one line per test is appended to ONNXMINI_CONFORMANCE_REPORT:
//   start <test>            (flushed before running, so a crash is attributable)
//   done <test> <pass|fail> <max_abs_error> <message>
TEST(ConformanceSweep, RunList) {
  const char* list = std::getenv("ONNXMINI_CONFORMANCE_LIST");
  const char* report = std::getenv("ONNXMINI_CONFORMANCE_REPORT");
  if (!list || !report) GTEST_SKIP() << "sweep mode: set ONNXMINI_CONFORMANCE_LIST and ONNXMINI_CONFORMANCE_REPORT";
  std::ifstream in(list);
  ASSERT_TRUE(in) << list;
  std::ofstream out(report, std::ios::app);
  std::string test;
  while (in >> test) {
    out << "start " << test << std::endl;
    const CaseResult r = run_case((fs::path(node_test_root()) / test).string());
    std::string msg = r.message;
    for (char& c : msg)
      if (c == '\n' || c == '\t') c = ' ';
    out << "done " << test << ' ' << (r.passed ? "pass" : "fail") << ' ' << r.max_abs_error << ' ' << msg
        << std::endl;
  }
}

}  // namespace
