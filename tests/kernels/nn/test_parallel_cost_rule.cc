// The parallel cost rule at the kernels' split points (core/thread_pool.h,
// docs/threads.md "Small nodes run inline"): the nodes of a small CNN (depthwise
// Conv, element-wise ops, pools, strided Softmax, Sigmoid) give the same bits at 1, 2 and 3 threads, with
// the rule on (small shapes run inline, large ones split) and off
// (ONNXMINI_PARALLEL_COST_RULE=0: every shape splits by its grain, so the
// chunking itself is exercised on small tensors too).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct Case {
  std::string name, op;
  std::vector<Tensor> inputs;
  NodeSetup setup;
};

std::vector<Case> cases(int64_t C, int64_t H, int64_t W) {
  const Shape x{1, C, H, W};
  std::vector<Case> v;
  auto dw = [C](int64_t k) {
    return [C, k](NodeBuilder& n) {
      n.attr("group", C).attr("pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
    };
  };
  v.push_back({"dw3x3", "Conv", {random_tensor(DType::Float32, x, 1), random_tensor(DType::Float32, {C, 1, 3, 3}, 2),
                                 random_tensor(DType::Float32, {C}, 3)}, dw(3)});
  v.push_back({"dw5x5", "Conv", {random_tensor(DType::Float32, x, 4), random_tensor(DType::Float32, {C, 1, 5, 5}, 5),
                                 random_tensor(DType::Float32, {C}, 6)}, dw(5)});
  v.push_back({"add_scalar", "Add", {random_tensor(DType::Float32, x, 7), random_tensor(DType::Float32, {}, 8)}, nullptr});
  v.push_back({"mul_same", "Mul", {random_tensor(DType::Float32, x, 9), random_tensor(DType::Float32, x, 10)}, nullptr});
  v.push_back({"add_rows", "Add", {random_tensor(DType::Float32, x, 11), random_tensor(DType::Float32, {1, C, 1, 1}, 12)},
               nullptr});
  v.push_back({"maxpool", "MaxPool", {random_tensor(DType::Float32, x, 13)}, [](NodeBuilder& n) {
                 n.attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
               }});
  v.push_back({"gap", "GlobalAveragePool", {random_tensor(DType::Float32, x, 14)}, nullptr});
  // Strided Softmax (column blocks of 256: 3136 and 288 columns end in a partial block) and
  // a vectorised unary op (its chunks follow the pool's balanced split).
  auto axis = [](int64_t a) { return [a](NodeBuilder& n) { n.attr("axis", a); }; };
  v.push_back({"softmax_axis1", "Softmax", {random_tensor(DType::Float32, x, 15)}, axis(1)});
  v.push_back({"softmax_axis2", "Softmax", {random_tensor(DType::Float32, x, 16)}, axis(2)});
  v.push_back({"logsoftmax_axis1", "LogSoftmax", {random_tensor(DType::Float32, x, 17)}, axis(1)});
  v.push_back({"sigmoid", "Sigmoid", {random_tensor(DType::Float32, x, 18)}, nullptr});
  return v;
}

// The strided Softmax's column blocks against the reference (double accumulation, std::exp):
// fast_expf is within a few float ulps, so 1e-6 absolute / 1e-5 relative.
TEST(ParallelCostRule, StridedSoftmaxMatchesReference) {
  for (auto shape : {Shape{1, 16, 4, 2100}, Shape{3, 5, 7, 37}, Shape{2, 1, 3, 600}}) {
    for (int64_t a : {1, 2}) {
      for (const char* op : {"Softmax", "LogSoftmax"}) {
        const std::vector<Tensor> in{random_tensor(DType::Float32, shape, 19)};
        auto setup = [a](NodeBuilder& n) { n.attr("axis", a); };
        const Tensor want = run_op(13, op, in, setup, KernelMode::Reference, 1);
        for (int threads : {1, 2}) {
          EXPECT_TRUE(tensors_near(run_op(13, op, in, setup, KernelMode::Fast, threads), want, 1e-6, 1e-5))
              << op << " " << shape_to_string(shape) << " axis " << a << ", " << threads << " threads";
        }
      }
    }
  }
}

void expect_same_bits_at_1_2_3_threads(bool rule) {
  if (!rule) ::setenv("ONNXMINI_PARALLEL_COST_RULE", "0", 1);
  // ppocr_mobile_v2_cls's small layers (inline under the rule) and a 56x56 layer (split).
  for (auto shape : {std::vector<int64_t>{88, 3, 96}, std::vector<int64_t>{200, 2, 96}, std::vector<int64_t>{64, 56, 56}}) {
    for (const Case& c : cases(shape[0], shape[1], shape[2])) {
      const Tensor one = run_op(13, c.op, c.inputs, c.setup, KernelMode::Fast, 1);
      for (int threads : {2, 3}) {
        const Tensor many = run_op(13, c.op, c.inputs, c.setup, KernelMode::Fast, threads);
        EXPECT_TRUE(tensors_near(many, one, 0, 0))
            << c.name << " " << shape[0] << "x" << shape[1] << "x" << shape[2] << ", " << threads << " threads, rule "
            << (rule ? "on" : "off");
      }
    }
  }
  ::unsetenv("ONNXMINI_PARALLEL_COST_RULE");
}

// A 1x1 Conv on a 10x10 image with 128 -> 72 channels takes conv1x1_transposed, whose
// transpose + epilogue pass now splits by 16-channel blocks (72: four full blocks and a
// partial one) under the cost rule: same bits at 1, 2 and 3 threads, rule on and off.
TEST(ParallelCostRule, Conv1x1TransposedSameBitsAtOneTwoThreeThreads) {
  const std::vector<Tensor> in{random_tensor(DType::Float32, {1, 128, 10, 10}, 21),
                               random_tensor(DType::Float32, {72, 128, 1, 1}, 22), random_tensor(DType::Float32, {72}, 23)};
  for (bool rule : {true, false}) {
    if (!rule) ::setenv("ONNXMINI_PARALLEL_COST_RULE", "0", 1);
    const Tensor one = run_op(13, "Conv", in, nullptr, KernelMode::Fast, 1);
    for (int threads : {2, 3})
      EXPECT_TRUE(tensors_near(run_op(13, "Conv", in, nullptr, KernelMode::Fast, threads), one, 0, 0))
          << threads << " threads, rule " << (rule ? "on" : "off");
    ::unsetenv("ONNXMINI_PARALLEL_COST_RULE");
  }
}

TEST(ParallelCostRule, SameBitsAtOneTwoThreeThreadsRuleOn) { expect_same_bits_at_1_2_3_threads(true); }
TEST(ParallelCostRule, SameBitsAtOneTwoThreeThreadsRuleOff) { expect_same_bits_at_1_2_3_threads(false); }

}  // namespace
}  // namespace test
}  // namespace onnxmini
