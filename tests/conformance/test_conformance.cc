// The ONNX backend node tests listed in tests/conformance/manifest.txt (Debian's
// onnx 1.12 set) and tests/conformance/manifest_onnx123.txt (pip's onnx 1.23 set,
// exported into the build tree by scripts/export_node_tests.py, CTest's fixture
// onnx_node_tests_export). A test marked `pass` must pass with the fast kernels
// and with the reference kernels (the test oracles, so they must be right too);
// `skip: <reason>` is reported as skipped with the reason. When a set's test data
// folder is absent, its cases skip.
//
// scripts/conformance.py drives the second test below (ConformanceSweep.RunList)
// to try every node test of the covered ops and propose manifest statuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "conformance_runner.h"
#include "onnxmini/onnxmini.h"

namespace fs = std::filesystem;
using namespace onnxmini::conformance;
using onnxmini::KernelMode;

namespace onnxmini {
namespace conformance {
// How gtest shows a case's parameter (in ctest's test names, too): the entry, not its bytes.
void PrintTo(const ManifestEntry& e, std::ostream* os) { *os << e.test << (e.pass ? " pass" : " skip"); }
}  // namespace conformance
}  // namespace onnxmini

namespace {

std::string manifest_path() { return std::string(ONNXMINI_SOURCE_DIR) + "/tests/conformance/manifest.txt"; }
std::string pip_manifest_path() {
  return std::string(ONNXMINI_SOURCE_DIR) + "/tests/conformance/manifest_onnx123.txt";
}

// The `pass` entries: the manifests list every test of their set, and a skipped one
// (its reason is in the manifest and docs/conformance.md) would only add a CTest entry.
std::vector<ManifestEntry> manifest_entries(const std::string& path) {
  try {
    std::vector<ManifestEntry> all = read_manifest(path), passing;
    for (auto& e : all)
      if (e.pass) passing.push_back(std::move(e));
    return passing;
  } catch (const std::exception& e) {
    // Surfaced by ConformanceManifest.Parses; no parameterized cases then.
    return {};
  }
}

class NodeTest : public ::testing::TestWithParam<ManifestEntry> {
 protected:
  virtual std::string root() const { return node_test_root(); }
  virtual const char* absent_hint() const { return "install libonnx-testdata"; }
  void check(KernelMode mode) {
    const ManifestEntry& e = GetParam();
    const fs::path folder = fs::path(root()) / e.test;
    if (!fs::exists(folder / "model.onnx")) GTEST_SKIP() << "test data not installed: " << folder << " (" << absent_hint() << ")";
    if (!e.pass) GTEST_SKIP() << e.reason;
    const CaseResult r = run_case(folder.string(), mode);
    EXPECT_TRUE(r.passed) << e.test << " (" << onnxmini::to_string(mode) << " kernels): " << r.message;
  }
};

TEST_P(NodeTest, MatchesExpectedOutputs) { check(KernelMode::Fast); }
TEST_P(NodeTest, ReferenceKernelsMatchExpectedOutputs) { check(KernelMode::Reference); }

INSTANTIATE_TEST_SUITE_P(Onnx, NodeTest, ::testing::ValuesIn(manifest_entries(manifest_path())),
                         [](const ::testing::TestParamInfo<ManifestEntry>& info) { return info.param.test; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NodeTest);

// The pip set: same checks, another folder and manifest.
class PipNodeTest : public NodeTest {
 protected:
  std::string root() const override { return pip_node_test_root(); }
  const char* absent_hint() const override {
    return "run scripts/export_node_tests.py --out <it> with a Python that has onnx (CTest's onnx_node_tests_export)";
  }
};

TEST_P(PipNodeTest, MatchesExpectedOutputs) { check(KernelMode::Fast); }
TEST_P(PipNodeTest, ReferenceKernelsMatchExpectedOutputs) { check(KernelMode::Reference); }

INSTANTIATE_TEST_SUITE_P(OnnxPip, PipNodeTest, ::testing::ValuesIn(manifest_entries(pip_manifest_path())),
                         [](const ::testing::TestParamInfo<ManifestEntry>& info) { return info.param.test; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PipNodeTest);

TEST(ConformanceManifest, Parses) {
  for (const std::string& path : {manifest_path(), pip_manifest_path()}) {
    std::vector<ManifestEntry> entries;
    ASSERT_NO_THROW(entries = read_manifest(path)) << path;
    EXPECT_GT(entries.size(), 100u) << path;
    for (const auto& e : entries)
      if (!e.pass) EXPECT_FALSE(e.reason.empty()) << e.test;
  }
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
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    const CaseResult wrong = run_case(tmp.string(), mode);
    EXPECT_FALSE(wrong.passed);
    EXPECT_NE(wrong.message.find("differ"), std::string::npos) << wrong.message;
  }
  fs::remove_all(tmp);
  EXPECT_TRUE(run_case(add.string()).passed);
}

// Copies node test `test` with the first element of output_0 scaled by
// (1 + rel): a result that far from the truth must pass exactly when `passes`.
void expect_tolerance(const std::string& test, double rel, bool passes) {
  const fs::path src = fs::path(node_test_root()) / test;
  if (!fs::exists(src / "model.onnx")) GTEST_SKIP() << "test data not installed";
  const fs::path tmp = fs::temp_directory_path() / ("onnxmini_conformance_" + test);
  fs::remove_all(tmp);
  fs::copy(src, tmp, fs::copy_options::recursive);
  const fs::path out = tmp / "test_data_set_0" / "output_0.pb";
  std::string name;
  onnxmini::Tensor t = onnxmini::read_tensor_pb(out.string(), &name).clone();
  ASSERT_EQ(t.dtype(), onnxmini::DType::Float32);
  float& x = t.mutable_data<float>()[0];
  ASSERT_GT(std::fabs(x), 0.1f) << "pick an element well above the absolute tolerances";
  x = static_cast<float>(x * (1 + rel));
  onnxmini::write_tensor_pb(out.string(), t, name);
  const CaseResult r = run_case(tmp.string());
  EXPECT_EQ(r.passed, passes) << test << " off by " << rel << ": " << r.message;
  fs::remove_all(tmp);
}

TEST(ConformanceRunner, OpsThatMoveDataMustBeExact) {
  EXPECT_EQ(bounds_for("Transpose").size(), 2u);
  expect_tolerance("test_transpose_default", 1e-6, false);  // within onnx's rtol 1e-3, still wrong
}

TEST(ConformanceRunner, ReductionsAreHeldToRtol1e4) {
  expect_tolerance("test_reduce_sum_square_default_axes_keepdims_random", 5e-4, false);  // onnx's bound alone: pass
  expect_tolerance("test_reduce_sum_square_default_axes_keepdims_random", 5e-5, true);
}

TEST(ConformanceRunner, OtherOpsUseOnnxTolerance) {
  EXPECT_EQ(bounds_for("Conv").size(), 1u);
  expect_tolerance("test_basic_conv_with_padding", 5e-4, true);
  expect_tolerance("test_basic_conv_with_padding", 5e-3, false);
}

// Sweep mode for scripts/conformance.py: ONNXMINI_CONFORMANCE_LIST names a file of
// test folder names; one line per test is appended to ONNXMINI_CONFORMANCE_REPORT:
//   start <test>            (flushed before running, so a crash is attributable)
//   done <test> <pass|fail> <max_abs_error> <message>
// A test passes when it passes with the fast and with the reference kernels (as
// NodeTest requires of a `pass` entry); the message names the failing mode.
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
    const std::string folder = (fs::path(node_test_root()) / test).string();
    CaseResult r = run_case(folder, KernelMode::Fast);
    if (r.passed) {
      const CaseResult ref = run_case(folder, KernelMode::Reference);
      if (!ref.passed) r.message = "reference kernels: " + ref.message;
      r.passed = ref.passed;
      r.max_abs_error = std::max(r.max_abs_error, ref.max_abs_error);
    }
    std::string msg = r.message;
    for (char& c : msg)
      if (c == '\n' || c == '\t') c = ' ';
    out << "done " << test << ' ' << (r.passed ? "pass" : "fail") << ' ' << r.max_abs_error << ' ' << msg
        << std::endl;
  }
}

}  // namespace
