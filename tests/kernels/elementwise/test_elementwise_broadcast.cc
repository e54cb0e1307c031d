// Fast (BroadcastPlan runs, 4 threads) vs reference (index math per element)
// for the broadcasting element-wise ops, over shapes that exercise every kind
// of run: equal shapes, scalar, row, column, middle axis, both sides, rank
// mismatch, empty, and outputs large enough to be split into several chunks.
#include <gtest/gtest.h>

#include "tests/kernels/elementwise/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct ShapePair {
  Shape a, b;
};

const std::vector<ShapePair>& broadcast_cases() {
  static const std::vector<ShapePair> cases = {
      {{2, 3, 4}, {2, 3, 4}},      // same shape: one run
      {{2, 3, 4}, {}},             // scalar
      {{2, 3, 4}, {4}},            // row (last axis)
      {{2, 3, 1}, {2, 3, 4}},      // column: A is the scalar side of each run
      {{2, 3, 4}, {3, 1}},         // middle axis
      {{2, 1, 4}, {1, 3, 1}},      // both sides broadcast
      {{5, 1, 3, 1}, {4, 1, 6}},   // rank mismatch, alternating
      {{1}, {7, 1, 1}},            // size-1 everywhere
      {{0, 3}, {3}},               // empty output
      {{300, 257}, {257}},         // 77K elements: several chunks, runs split between threads
      {{3, 40000}, {3, 1}},        // long runs split across chunks, scalar side
      {{70000, 2}, {1, 2}},        // many short runs: odometer carries
  };
  return cases;
}

void expect_binary_matches(const std::string& op, DType dt, int64_t opset = 14, const NodeSetup& setup = nullptr) {
  uint32_t seed = 1;
  for (const auto& c : broadcast_cases()) {
    Tensor a = random_values(dt, c.a, seed++);
    Tensor b = random_values(dt, c.b, seed++);
    EXPECT_TRUE(fast_matches_reference(opset, op, {a, b}, setup))
        << op << " " << dtype_name(dt) << " " << shape_to_string(c.a) << " with " << shape_to_string(c.b);
    EXPECT_TRUE(fast_matches_reference(opset, op, {b, a}, setup))
        << op << " " << dtype_name(dt) << " " << shape_to_string(c.b) << " with " << shape_to_string(c.a);
  }
}

TEST(ElementwiseBroadcast, ArithmeticFastMatchesReference) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"})
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) expect_binary_matches(op, dt);
  for (const char* op : {"Add", "Sub", "Mul"})
    for (DType dt : {DType::Int32, DType::Int64, DType::Int8, DType::UInt8, DType::UInt64})
      expect_binary_matches(op, dt);
}

TEST(ElementwiseBroadcast, IntegerDivAndModFastMatchReference) {
  uint32_t seed = 100;
  for (const char* op : {"Div", "Mod"})
    for (DType dt : {DType::Int32, DType::Int64, DType::Int8, DType::UInt16})
      for (const auto& c : broadcast_cases()) {
        Tensor a = random_values(dt, c.a, seed++, -20, 20);
        Tensor b = random_nonzero(dt, c.b, seed++);
        EXPECT_TRUE(fast_matches_reference(13, op, {a, b})) << op << " " << dtype_name(dt) << " "
                                                            << shape_to_string(c.a) << " / " << shape_to_string(c.b);
      }
}

TEST(ElementwiseBroadcast, PowMixedTypesFastMatchesReference) {
  uint32_t seed = 200;
  const std::vector<std::pair<DType, DType>> pairs = {{DType::Float32, DType::Float32}, {DType::Float32, DType::Int64},
                                                      {DType::Int64, DType::Float32}, {DType::Int32, DType::Int32},
                                                      {DType::Float64, DType::Float16}};
  for (const auto& p : pairs)
    for (const auto& c : broadcast_cases()) {
      Tensor a = random_values(p.first, c.a, seed++, 0.5, 3);
      Tensor b = random_values(p.second, c.b, seed++, -2, 3);
      EXPECT_TRUE(fast_matches_reference(15, "Pow", {a, b}))
          << dtype_name(p.first) << "^" << dtype_name(p.second) << " " << shape_to_string(c.a);
    }
}

TEST(ElementwiseBroadcast, ComparisonsAndLogicFastMatchReference) {
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
    for (DType dt : {DType::Float32, DType::Int64, DType::Int32, DType::Float16}) expect_binary_matches(op, dt, 16);
  for (const char* op : {"And", "Or", "Xor", "Equal"}) expect_binary_matches(op, DType::Bool, 16);
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) expect_binary_matches(op, DType::Int32, 18);
}

TEST(ElementwiseBroadcast, VariadicFastMatchesReference) {
  uint32_t seed = 300;
  const std::vector<std::vector<Shape>> cases = {
      {{2, 3, 4}},                         // one input: a copy
      {{2, 3, 4}, {4}, {3, 1}},            // three inputs, three kinds of broadcast
      {{300, 1, 1}, {1, 257}, {257}, {}},  // output larger than any input, several chunks
      {{0, 4}, {4}},
  };
  for (const char* op : {"Max", "Min", "Sum", "Mean"})
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16})
      for (const auto& shapes : cases) {
        std::vector<Tensor> in;
        for (const auto& s : shapes) in.push_back(random_values(dt, s, seed++));
        EXPECT_TRUE(fast_matches_reference(13, op, in)) << op << " " << dtype_name(dt) << " " << shapes.size();
      }
  for (const char* op : {"Max", "Min"})
    for (DType dt : {DType::Int32, DType::UInt8, DType::Int64}) {
      std::vector<Tensor> in = {random_values(dt, {3, 5}, seed++, 0, 50), random_values(dt, {5}, seed++, 0, 50)};
      EXPECT_TRUE(fast_matches_reference(13, op, in)) << op << " " << dtype_name(dt);
    }
}

TEST(ElementwiseBroadcast, WhereFastMatchesReference) {
  uint32_t seed = 400;
  const std::vector<std::vector<Shape>> cases = {
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},  // unit-stride loop
      {{3, 1}, {4}, {}},                  // all three broadcast differently
      {{1, 4}, {2, 3, 4}, {3, 1}},
      {{300, 257}, {257}, {300, 1}},      // several chunks
  };
  for (DType dt : {DType::Float32, DType::Int64, DType::Float16, DType::Bool})
    for (const auto& s : cases) {
      Tensor c = random_values(DType::Bool, s[0], seed++, 0, 1);
      Tensor x = random_values(dt, s[1], seed++);
      Tensor y = random_values(dt, s[2], seed++);
      EXPECT_TRUE(fast_matches_reference(16, "Where", {c, x, y})) << dtype_name(dt) << " " << shape_to_string(s[0]);
    }
}

TEST(ElementwiseBroadcast, PReluSlopeBroadcastsToInput) {
  uint32_t seed = 500;
  for (const Shape& slope : {Shape{}, Shape{4}, Shape{3, 1, 1}, Shape{1, 3, 5, 4}}) {
    Tensor x = random_values(DType::Float32, {2, 3, 5, 4}, seed++);
    Tensor s = random_values(DType::Float32, slope, seed++, 0, 1);
    EXPECT_TRUE(fast_matches_reference(16, "PRelu", {x, s})) << shape_to_string(slope);
  }
}

// Numpy broadcasting checked against values written out by hand (not taken from our output).
TEST(ElementwiseBroadcast, ColumnPlusRowByHand) {
  Tensor col = Tensor::from_vector<float>({3, 1}, {0, 10, 20});
  Tensor row = Tensor::from_vector<float>({4}, {1, 2, 3, 4});
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    Tensor y = run_op(14, "Add", {col, row}, nullptr, mode);
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({3, 4}, {1, 2, 3, 4, 11, 12, 13, 14, 21, 22, 23, 24})));
  }
}

// Opsets 1-6: B is placed at `axis` of A when broadcast=1.
TEST(ElementwiseBroadcast, LegacyBroadcastAxis) {
  Tensor a = Tensor::from_vector<float>({2, 3, 2}, {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1});
  Tensor b = Tensor::from_vector<float>({3}, {10, 20, 30});
  auto setup = [](NodeBuilder& n) { n.attr("broadcast", 1).attr("axis", 1); };
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    Tensor y = run_op(6, "Add", {a, b}, setup, mode);
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({2, 3, 2}, {10, 10, 20, 20, 30, 30, 11, 11, 21, 21, 31, 31})));
  }
  // Without axis, B aligns to the right as numpy does.
  Tensor b2 = Tensor::from_vector<float>({2}, {1, 2});
  Tensor y = run_op(6, "Mul", {a, b2}, [](NodeBuilder& n) { n.attr("broadcast", 1); });
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({2, 3, 2}, {0, 0, 0, 0, 0, 0, 1, 2, 1, 2, 1, 2})));
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
