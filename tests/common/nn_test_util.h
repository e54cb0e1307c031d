// Shared helpers for the nn / linalg kernel tests: run one model with the fast
// and the reference kernels and compare.
#pragma once
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {

// Runs the model built by `mb` in both kernel modes (fast with `threads`
// threads) on the same feeds and returns {fast outputs, reference outputs}.
inline std::pair<std::vector<Tensor>, std::vector<Tensor>> run_fast_and_reference(
    const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds, int threads = 2) {
  auto fast = mb.session(options_for(KernelMode::Fast, threads));
  auto ref = mb.session(options_for(KernelMode::Reference, 1));
  return {run_all(*fast, feeds), run_all(*ref, feeds)};
}

// Float tolerance for a result that sums `k` products of values in [-1, 1]:
// rounding grows about linearly with the reduction length (2u per term).
inline double reduction_atol(DType t, int64_t k) {
  const double u = t == DType::Float64 ? 1.1e-16 : 6e-8;
  return 1e-6 * (t == DType::Float64 ? 1e-6 : 1.0) + 4.0 * u * static_cast<double>(std::max<int64_t>(k, 1));
}

}  // namespace test
}  // namespace onnxmini
