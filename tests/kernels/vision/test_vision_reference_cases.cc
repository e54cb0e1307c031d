// Col2Im and CenterCropPad against onnx.reference: the node tests in
// reference_cases/ (written by make_reference_cases.py; the installed ONNX test
// data has none for these opset-18 ops), plus LRN and Col2Im in float64, float16,
// bfloat16 and (Col2Im) int32 / int64, which no node test covers; each run with
// the fast and with the reference kernels under the conformance runner's tolerances.
#include "tests/common/reference_case_folder.h"

TEST(VisionReferenceCases, MatchOnnxReference) {
  // every case make_reference_cases.py writes
  EXPECT_EQ(onnxmini::test::expect_reference_cases_pass("tests/kernels/vision/reference_cases"), 20);
}
