// LSTM, GRU and RNN against onnxruntime: the node tests in reference_cases/
// (written by make_reference_cases.py: bidirectional + sequence_lens, layout 1,
// peepholes, input_forget, clip, linear_before_reset, every activation, omitted
// outputs, SIMD tails), each run with the fast and with the reference kernels
// under the conformance runner's tolerances.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/conformance/conformance_runner.h"

namespace onnxmini {
namespace {

namespace fs = std::filesystem;

TEST(RnnReferenceCases, MatchOnnxruntime) {
  const fs::path root = fs::path(ONNXMINI_SOURCE_DIR) / "tests/kernels/rnn/reference_cases";
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(root)) {
    for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
      const conformance::CaseResult r = conformance::run_case(entry.path().string(), mode);
      EXPECT_TRUE(r.passed) << entry.path().filename() << ": " << r.message;
    }
    ++cases;
  }
  EXPECT_EQ(cases, 48);  // every case make_reference_cases.py writes
}

}  // namespace
}  // namespace onnxmini
