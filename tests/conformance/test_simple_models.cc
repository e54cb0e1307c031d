// The ONNX test data's small multi-node model tests (kind "simple": the eight
// test_sequence_model* graphs, which are the only tests of SequenceConstruct,
// SequenceAt, SequenceErase, SequenceLength, SequenceEmpty and
// ConcatFromSequence, plus test_expand_shape_model*, test_shrink, ...), from
// both sets: Debian's data/simple beside its node tests, and pip onnx's, exported
// by scripts/export_node_tests.py into <pip node-test root>/simple. Every folder
// must pass with the fast and the reference kernels, except those of kUnsupported
// (reported as skipped with the reason). A set whose folder is absent skips.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "conformance_runner.h"

namespace fs = std::filesystem;
using namespace onnxmini::conformance;
using onnxmini::KernelMode;

namespace {

// Test-name prefix -> why the model cannot run (features outside onnxmini's scope or not yet built).
const std::vector<std::pair<std::string, std::string>> kUnsupported = {
    {"test_gradient_of_", "Gradient (ai.onnx.preview.training) is a training op"},
};

std::string unsupported_reason(const std::string& test) {
  for (const auto& [prefix, why] : kUnsupported)
    if (test.rfind(prefix, 0) == 0) return why;
  return "";
}

// Runs every model folder under `root`; returns how many ran (0 when `root` is absent).
int run_all(const fs::path& root) {
  std::vector<fs::path> folders;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(root, ec))
    if (fs::exists(d.path() / "model.onnx")) folders.push_back(d.path());
  std::sort(folders.begin(), folders.end());
  int ran = 0;
  for (const auto& folder : folders) {
    const std::string test = folder.filename().string();
    const std::string why = unsupported_reason(test);
    for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
      const CaseResult r = run_case(folder.string(), mode);
      if (why.empty())
        EXPECT_TRUE(r.passed) << folder << " (" << onnxmini::to_string(mode) << " kernels): " << r.message;
      else  // a model listed as unsupported that now passes: take it off the list
        EXPECT_FALSE(r.passed) << folder << " passes now: remove it from kUnsupported (" << why << ")";
    }
    if (!why.empty()) std::cout << "[ skipped  ] " << test << ": " << why << "\n";
    ++ran;
  }
  return ran;
}

TEST(OnnxSimpleModels, DebianSet) {
  const fs::path root = fs::path(node_test_root()).parent_path() / "simple";
  if (!fs::is_directory(root)) GTEST_SKIP() << "test data not installed: " << root;
  EXPECT_GE(run_all(root), 8) << "the eight test_sequence_model* folders at least";
}

TEST(OnnxPipSimpleModels, PipSet) {
  const fs::path root = fs::path(pip_node_test_root()) / "simple";
  if (!fs::is_directory(root))
    GTEST_SKIP() << "not exported: " << root << " (CTest's onnx_node_tests_export, scripts/export_node_tests.py)";
  EXPECT_GE(run_all(root), 8) << "the eight test_sequence_model* folders at least";
}

}  // namespace
