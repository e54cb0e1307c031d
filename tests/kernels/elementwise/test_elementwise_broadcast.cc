// Fast (BroadcastPlan runs, 4 threads) vs reference (index math per element)
// for the broadcasting element-wise ops, over shapes that exercise every kind
// of run: equal shapes, scalar, row, column, middle axis, both sides, rank
// mismatch, empty, and outputs large enough to be split into several chunks;
// 2-D plans with short rows (row blocks, float32 SIMD rows on every ISA).
#include <gtest/gtest.h>

#include "tests/common/simd_isas.h"
#include "tests/common/op_test_util.h"

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

// ---- 2-D plans with short rows ----
// Row lengths 1..33 (below, at and past the SIMD widths 8 and 16, with every
// tail) and 1..100 rows, in the four 2-D patterns: row scalar ([R,1] op [R,C]),
// column vector ([C] op [R,C]), both broadcast ([R,1] op [1,C]) and two vectors
// with different row strides ([R,C] op [2,R,C]). The fast kernels must
// agree bit for bit with the reference (the same IEEE operation per element).
std::vector<ShapePair> short_row_cases() {
  const int64_t rows[] = {1, 2, 7, 16, 17, 100};
  std::vector<ShapePair> v;
  for (int64_t c = 1; c <= 33; ++c) {
    const int64_t r = rows[c % 6];
    v.push_back({{r, 1}, {r, c}});
    v.push_back({{r, c}, {c}});
    v.push_back({{r, 1}, {1, c}});
    v.push_back({{c}, {r, 3, c}});  // 3-D shapes, 2-D plan [3r, c]
    v.push_back({{r, c}, {2, r, c}});  // two vectors: plan [2, r*c], A's row stride 0
  }
  v.push_back({{3000, 1}, {3000, 24}});  // 72K outputs: several row blocks across threads
  v.push_back({{24}, {3000, 24}});
  return v;
}

TEST(ElementwiseBroadcast, ShortRowsFastMatchesReference) {
  uint32_t seed = 100;
  for (const char* op : {"Add", "Sub", "Mul", "Div"})
    for (DType dt : {DType::Float32, DType::Float64, DType::Int32, DType::Float16})
      for (const auto& c : short_row_cases()) {
        // Both operand orders: the scalar / vector side is A, then B.
        Tensor a = random_values(dt, c.a, seed++), b = random_values(dt, c.b, seed++);
        if (dt == DType::Int32 && std::string(op) == "Div") b = random_nonzero(dt, c.b, seed++);
        EXPECT_TRUE(fast_matches_reference(14, op, {a, b})) << op << " " << dtype_name(dt) << " "
                                                           << shape_to_string(c.a) << " " << shape_to_string(c.b);
        if (dt == DType::Int32 && std::string(op) == "Div") continue;
        EXPECT_TRUE(fast_matches_reference(14, op, {b, a})) << op << " " << dtype_name(dt) << " "
                                                           << shape_to_string(c.b) << " " << shape_to_string(c.a);
      }
}

// Each ISA's float32 row kernel against the formula, over row ranges that do not
// start at 0, operands with row stride 0, and NaN / inf / signed-zero values.
TEST(ElementwiseBroadcast, SimdBinaryRowsEveryIsa) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-3.0f, 3.0f);
  const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f};
  auto apply = [](int op, float a, float b) {
    return op == simd::kAdd ? a + b : op == simd::kSub ? a - b : op == simd::kMul ? a * b : a / b;
  };
  for (const simd::F32Kernels* k : simd_tables())
    for (int op = 0; op < simd::kNumBinOps; ++op)
      for (int64_t cols = 1; cols <= 33; ++cols)
        for (int pattern = 0; pattern < 4; ++pattern) {
          const bool va = pattern != 1, vb = pattern != 2;
          const int64_t rows = 5, a_row = pattern == 3 ? 0 : cols + 3, b_row = cols + 1;
          std::vector<float> a(rows * (cols + 3) + 1), b(rows * (cols + 1) + 1), y(rows * cols, -7.0f);
          for (auto& v : a) v = rng() % 7 == 0 ? specials[rng() % 5] : d(rng);
          for (auto& v : b) v = rng() % 7 == 0 ? specials[rng() % 5] : d(rng);
          const simd::BinaryRows p{a.data(), a_row, va, b.data(), b_row, vb, y.data(), cols};
          k->binary[op](p, 1, rows);  // row 0 must stay untouched
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) {
              const float want = r == 0 ? -7.0f : apply(op, a[r * a_row + (va ? c : 0)], b[r * b_row + (vb ? c : 0)]);
              const float got = y[r * cols + c];
              ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want)))
                  << isa_of(*k) << " op " << op << " cols " << cols << " pattern " << pattern << " at " << r << ","
                  << c << ": " << got << " vs " << want;
            }
        }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
