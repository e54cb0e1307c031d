// Col2Im and CenterCropPad against onnx.reference: the node tests in
// reference_cases/ (written by make_reference_cases.py; the installed ONNX test
// data has none for these opset-18 ops), plus LRN and Col2Im in float64, float16,
// bfloat16 and (Col2Im) int32 / int64, which no node test covers; each run with
// the fast and with the reference kernels under the conformance runner's tolerances.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/conformance/conformance_runner.h"

namespace onnxmini {
namespace {

namespace fs = std::filesystem;

TEST(VisionReferenceCases, MatchOnnxReference) {
  const fs::path root = fs::path(ONNXMINI_SOURCE_DIR) / "tests/kernels/vision/reference_cases";
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(root)) {
    for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
      const conformance::CaseResult r = conformance::run_case(entry.path().string(), mode);
      EXPECT_TRUE(r.passed) << entry.path().filename() << ": " << r.message;
    }
    ++cases;
  }
  EXPECT_EQ(cases, 20);  // every case make_reference_cases.py writes
}

}  // namespace
}  // namespace onnxmini
