// Checked-in node-test folders of one op family (tests/kernels/<family>/reference_cases/,
// written by that family's make_reference_cases.py): every case must pass with the fast
// and with the reference kernels under the conformance runner's tolerances.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/conformance/conformance_runner.h"

namespace onnxmini::test {

// Runs every case folder under `root` (relative to the source tree) in both kernel
// modes, each failure reported by case name; returns how many cases it found.
inline int expect_reference_cases_pass(const std::string& root) {
  namespace fs = std::filesystem;
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(ONNXMINI_SOURCE_DIR) / root)) {
    for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
      const conformance::CaseResult r = conformance::run_case(entry.path().string(), mode);
      EXPECT_TRUE(r.passed) << entry.path().filename() << ": " << r.message;
    }
    ++cases;
  }
  return cases;
}

}  // namespace onnxmini::test
