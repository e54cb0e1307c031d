// LSTM, GRU and RNN against onnxruntime: the node tests in reference_cases/
// (written by make_reference_cases.py: bidirectional + sequence_lens, layout 1,
// peepholes, input_forget, clip, linear_before_reset, every activation, omitted
// outputs, SIMD tails), each run with the fast and with the reference kernels
// under the conformance runner's tolerances.
#include "tests/common/reference_case_folder.h"

TEST(RnnReferenceCases, MatchOnnxruntime) {
  // every case make_reference_cases.py writes
  EXPECT_EQ(onnxmini::test::expect_reference_cases_pass("tests/kernels/rnn/reference_cases"), 48);
}
