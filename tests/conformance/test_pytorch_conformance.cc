// The ONNX test data's PyTorch folders (data/pytorch-converted: nn modules exported at
// opset 6, data/pytorch-operator: small multi-node graphs), next to the node tests in
// the libonnx-testdata tree. Every folder is expected to pass with the fast and the
// reference kernels, so there is no manifest: a folder that stops passing is a
// regression. Without the test data there are no cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "conformance_runner.h"

namespace fs = std::filesystem;
using namespace onnxmini::conformance;
using onnxmini::KernelMode;

namespace {

struct PytorchCase {
  std::string set;     // "pytorch-converted" or "pytorch-operator"
  std::string folder;  // test folder name
};

// The folders of both sets, found beside the node tests' root (…/data/node).
std::vector<PytorchCase> pytorch_cases() {
  std::vector<PytorchCase> out;
  const fs::path data = fs::path(node_test_root()).parent_path();
  for (const char* set : {"pytorch-converted", "pytorch-operator"}) {
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& d : fs::directory_iterator(data / set, ec))
      if (fs::exists(d.path() / "model.onnx")) names.push_back(d.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const auto& n : names) out.push_back({set, n});
  }
  return out;
}

class PytorchTest : public ::testing::TestWithParam<PytorchCase> {
 protected:
  void check(KernelMode mode) {
    const PytorchCase& c = GetParam();
    const fs::path folder = fs::path(node_test_root()).parent_path() / c.set / c.folder;
    const CaseResult r = run_case(folder.string(), mode);
    EXPECT_TRUE(r.passed) << folder << " (" << onnxmini::to_string(mode) << " kernels): " << r.message;
  }
};

TEST_P(PytorchTest, MatchesExpectedOutputs) { check(KernelMode::Fast); }
TEST_P(PytorchTest, ReferenceKernelsMatchExpectedOutputs) { check(KernelMode::Reference); }

INSTANTIATE_TEST_SUITE_P(Onnx, PytorchTest, ::testing::ValuesIn(pytorch_cases()),
                         [](const ::testing::TestParamInfo<PytorchCase>& info) {
                           // "converted_test_Linear", "operator_test_operator_mm"
                           return info.param.set.substr(info.param.set.find('-') + 1) + "_" + info.param.folder;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PytorchTest);

}  // namespace
