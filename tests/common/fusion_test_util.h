// Shared by the graph-optimization tests: run a model unfused (level 0) and
// optimized (ORT_ENABLE_ALL), with fast and reference kernels, and compare.
#pragma once
#include <gtest/gtest.h>

#include "tests/common/nn_test_util.h"
#include "tests/common/profile_test_util.h"

namespace onnxmini {
namespace test {

inline SessionOptions opts(int level, KernelMode mode = KernelMode::Fast, int threads = 1) {
  SessionOptions o = options_for(mode, threads);
  o.graph_optimization_level = level;
  return o;
}

// Runs `mb` unfused and fused (fast kernels, and reference kernels when `reference`),
// checks outputs agree and returns the fused graph's node count.
inline size_t check_fusion(const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds, int64_t k,
                    int threads = 1) {
  auto plain = mb.session(opts(0, KernelMode::Fast, threads));
  auto fused = mb.session(opts(ORT_ENABLE_ALL, KernelMode::Fast, threads));
  auto fused_ref = mb.session(opts(ORT_ENABLE_ALL, KernelMode::Reference));
  auto plain_ref = mb.session(opts(0, KernelMode::Reference));
  const auto a = run_all(*plain, feeds), b = run_all(*fused, feeds);
  const auto c = run_all(*fused_ref, feeds), d = run_all(*plain_ref, feeds);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(tensors_near(b[i], a[i], reduction_atol(DType::Float32, k), 1e-4)) << "fused fast vs unfused fast";
    EXPECT_TRUE(tensors_near(c[i], d[i], reduction_atol(DType::Float32, k), 1e-4)) << "fused ref vs unfused ref";
    EXPECT_TRUE(tensors_near(b[i], d[i], reduction_atol(DType::Float32, k), 1e-4)) << "fused fast vs unfused ref";
  }
  EXPECT_EQ(plain->describe().nodes.size(), static_cast<size_t>(const_cast<ModelBuilder&>(mb).proto().graph().node_size()));
  return fused->describe().nodes.size();
}

}  // namespace test
}  // namespace onnxmini
