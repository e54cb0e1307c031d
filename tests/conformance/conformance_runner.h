// ONNX backend node tests (the op conformance suite) run through onnxmini.
// One test folder holds model.onnx and test_data_set_N/{input_K,output_K}.pb.
// Outputs are compared as onnx's backend runner does (np.testing.assert_allclose
// with rtol 1e-3, atol 1e-7, NaN equal to NaN; strings and integers exactly;
// shapes and dtypes must match), and more strictly for the ops whose results
// do not depend on float rounding order (bounds_for).
#pragma once
#include <string>
#include <vector>

#include "onnxmini/kernel_options.h"

namespace onnxmini {
namespace conformance {

// onnx/backend/test/case/node/__init__.py: the defaults every node test uses.
constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

// A float output element passes a bound when |got - expected| <= atol + rtol * |expected|.
struct Bound {
  double rtol = kRtol, atol = kAtol;
};
// The bounds every element of a single-node test of `op_type` must pass (all of
// them): onnx's for every op; for an op that only moves or selects elements
// (Transpose, Gather, ArgMax, ReduceMax, ...) also {0, 0}, i.e. bit-exact; for
// the accumulating reductions and Range also rtol 1e-4, atol 1e-5, the bound the
// layout/reduction kernels were developed against (it is stricter than onnx's
// for |expected| above ~0.01).
std::vector<Bound> bounds_for(const std::string& op_type);

struct CaseResult {
  bool passed = false;
  double max_abs_error = 0;  // over every compared float element of every data set
  std::string message;       // why it failed ("" when passed)
};

// Runs every test_data_set_* of `folder` with `mode` kernels on 1 thread. A model
// of one node is held to bounds_for(its op type); others to onnx's bound alone.
CaseResult run_case(const std::string& folder, KernelMode mode = KernelMode::Fast);

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
// The folder holding the pip onnx package's node tests, exported by
// scripts/export_node_tests.py (ONNXMINI_PIP_NODE_TESTS or BUILD_DIR/onnx_node_tests).
std::string pip_node_test_root();

}  // namespace conformance
}  // namespace onnxmini
