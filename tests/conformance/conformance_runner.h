// ONNX backend node tests (the op conformance suite) run through onnxmini.
// One test folder holds model.onnx and test_data_set_N/{input_K,output_K}.pb.
// Outputs are compared as onnx's backend runner does (np.testing.assert_allclose
// with rtol 1e-3, atol 1e-7, NaN equal to NaN; strings and integers exactly;
// shapes and dtypes must match).
#pragma once
#include <string>
#include <vector>

namespace onnxmini {
namespace conformance {

// onnx/backend/test/case/node/__init__.py: the defaults every node test uses.
constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

struct CaseResult {
  bool passed = false;
  double max_abs_error = 0;  // over every compared float element of every data set
  std::string message;       // why it failed ("" when passed)
};

// Runs every test_data_set_* of `folder` (fast kernels, 1 thread).
CaseResult run_case(const std::string& folder);

struct ManifestEntry {
  std::string test;    // folder name, e.g. "test_add_bcast"
  bool pass = false;   // status "pass"; otherwise a skip
  std::string reason;  // for "skip: <reason>"
};
// Parses tests/conformance/manifest.txt: "<test> pass" or "<test> skip: <reason>";
// '#' starts a comment. Throws on a malformed line.
std::vector<ManifestEntry> read_manifest(const std::string& path);

// The folder holding the node tests (ONNXMINI_NODE_TESTS or the Debian default).
std::string node_test_root();

}  // namespace conformance
}  // namespace onnxmini
