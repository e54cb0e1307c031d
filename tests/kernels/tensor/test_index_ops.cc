// Trilu, GatherND, ScatterND, ScatterElements / Scatter, OneHot, EyeLike,
// NonZero, Compress, ReverseSequence, Unique, BitCast: against references
// written out here (index arithmetic spelled out element by element) or
// hand-computed values, and the error cases (indices out of range including
// INT64_MIN, negative depth, mismatched shapes) asserted on the message.
#include <cstring>

#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

Tensor i64s(const Shape& shape, const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>(shape, v); }

TEST(Trilu, MatchesReferenceForEveryK) {
  const Shape shape = {2, 5, 7};
  Tensor x = random_tensor(DType::Float32, shape, 3);
  for (int upper : {0, 1})
    for (int64_t k : {int64_t{-9}, int64_t{-2}, int64_t{0}, int64_t{1}, int64_t{4}, int64_t{10}, INT64_MAX, INT64_MIN}) {
      auto y = run_node("Trilu", 14, {x, Tensor::scalar<int64_t>(k)}, [&](NodeBuilder& n) { n.attr("upper", upper); }, 1,
                        KernelMode::Fast, 4)[0];
      for (int64_t m = 0; m < 2; ++m)
        for (int64_t i = 0; i < 5; ++i)
          for (int64_t j = 0; j < 7; ++j) {
            const int64_t at = (m * 5 + i) * 7 + j;
            // j - i >= k without overflow for the extreme k.
            const bool keep = upper ? (static_cast<double>(j - i) >= static_cast<double>(k))
                                    : (static_cast<double>(j - i) <= static_cast<double>(k));
            ASSERT_EQ(y.data<float>()[at], keep ? x.data<float>()[at] : 0.f) << "upper " << upper << " k " << k;
          }
    }
  auto msg = node_error("Trilu", 14, {random_tensor(DType::Float32, {4}, 1)}, nullptr);
  EXPECT_NE(msg.find("Trilu 'n1': input must have rank >= 2, got shape 4"), std::string::npos) << msg;
}

TEST(GatherND, MatchesReferenceWithBatchDims) {
  Tensor data = random_tensor(DType::Float32, {2, 3, 4, 5}, 7);
  // batch_dims 1, tuples of 2 indices: output [2, 6, 5].
  std::vector<int64_t> idx;
  std::mt19937 rng(1);
  for (int i = 0; i < 2 * 6; ++i) {
    idx.push_back(std::uniform_int_distribution<int64_t>(-3, 2)(rng));
    idx.push_back(std::uniform_int_distribution<int64_t>(-4, 3)(rng));
  }
  auto y = run_node("GatherND", 13, {data, i64s({2, 6, 2}, idx)}, [](NodeBuilder& n) { n.attr("batch_dims", 1); }, 1,
                    KernelMode::Fast, 4)[0];
  ASSERT_EQ(y.shape(), (Shape{2, 6, 5}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 6; ++t) {
      int64_t i1 = idx[(b * 6 + t) * 2], i2 = idx[(b * 6 + t) * 2 + 1];
      if (i1 < 0) i1 += 3;
      if (i2 < 0) i2 += 4;
      for (int64_t e = 0; e < 5; ++e)
        ASSERT_EQ(y.data<float>()[(b * 6 + t) * 5 + e], data.data<float>()[((b * 3 + i1) * 4 + i2) * 5 + e]);
    }
  auto msg = node_error("GatherND", 13, {data, i64s({1, 2}, {0, INT64_MIN})}, nullptr);
  EXPECT_NE(msg.find("GatherND 'n1': index -9223372036854775808 (tuple 0, entry 1) is out of range [-3, 3)"),
            std::string::npos)
      << msg;
  msg = node_error("GatherND", 13, {data, i64s({1, 5}, {0, 0, 0, 0, 0})}, nullptr);
  EXPECT_NE(msg.find("indices' last dimension 5 must be in [1, 4]"), std::string::npos) << msg;
}

// ScatterND reference: copy, then apply each tuple's slab in order.
TEST(ScatterND, ReductionsMatchReference) {
  Tensor data = random_tensor(DType::Float32, {4, 3, 2}, 5);
  Tensor idx = i64s({5, 1}, {0, 2, -4, 3, 2});  // 0 appears twice (as 0 and -4): reductions combine
  Tensor upd = random_tensor(DType::Float32, {5, 3, 2}, 6);
  for (const std::string red : {"none", "add", "mul", "max", "min"}) {
    auto y = run_node("ScatterND", 18, {data, idx, upd}, [&](NodeBuilder& n) { n.attr("reduction", red); }, 1,
                      KernelMode::Fast)[0];
    std::vector<float> want(data.data<float>(), data.data<float>() + 24);
    const std::vector<int64_t> rows = {0, 2, 0, 3, 2};
    for (size_t t = 0; t < rows.size(); ++t)
      for (int e = 0; e < 6; ++e) {
        float& w = want[rows[t] * 6 + e];
        const float u = upd.data<float>()[t * 6 + e];
        w = red == "none" ? u : red == "add" ? w + u : red == "mul" ? w * u : red == "max" ? std::max(w, u) : std::min(w, u);
      }
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({4, 3, 2}, want), 0, 0)) << red;
  }
  auto msg = node_error("ScatterND", 16, {data, idx, upd}, [](NodeBuilder& n) { n.attr("reduction", "max"); });
  EXPECT_NE(msg.find("reduction 'max' is not supported at opset 16"), std::string::npos) << msg;
  msg = node_error("ScatterND", 18, {data, i64s({1, 1}, {4}), random_tensor(DType::Float32, {1, 3, 2}, 1)}, nullptr);
  EXPECT_NE(msg.find("ScatterND 'n1': index 4 (tuple 0, entry 0) is out of range [-4, 4)"), std::string::npos) << msg;
  msg = node_error("ScatterND", 18, {data, idx, random_tensor(DType::Float32, {5, 3}, 1)}, nullptr);
  EXPECT_NE(msg.find("updates shape 5x3 should be 5x3x2"), std::string::npos) << msg;
}

TEST(ScatterElements, AxisAndReductionsMatchReference) {
  Tensor data = Tensor::from_vector<int32_t>({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Tensor idx = i64s({2, 3}, {0, -1, 1, 2, 2, 0});
  Tensor upd = Tensor::from_vector<int32_t>({2, 3}, {10, 20, 30, 40, 50, 60});
  for (const std::string red : {"none", "add", "mul", "max", "min"}) {
    auto y = run_node("ScatterElements", 18, {data, idx, upd},
                      [&](NodeBuilder& n) { n.attr("axis", 0).attr("reduction", red); }, 1, KernelMode::Fast)[0];
    std::vector<int32_t> want(data.data<int32_t>(), data.data<int32_t>() + 12);
    const std::vector<int64_t> rows = {0, 2, 1, 2, 2, 0};
    for (int i = 0; i < 6; ++i) {
      int32_t& w = want[rows[i] * 4 + i % 3];
      const int32_t u = upd.data<int32_t>()[i];
      w = red == "none" ? u : red == "add" ? w + u : red == "mul" ? w * u : red == "max" ? std::max(w, u) : std::min(w, u);
    }
    EXPECT_EQ(values_of(y), values_of(Tensor::from_vector<int32_t>({3, 4}, want))) << red;
  }
  // Scatter (opset 9-10) is ScatterElements without reduction.
  auto y = run_node("Scatter", 10, {data, idx, upd}, [](NodeBuilder& n) { n.attr("axis", 1); }, 1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{10, 30, 3, 20, 60, 6, 50, 8, 9, 10, 11, 12}));
  auto msg = node_error("ScatterElements", 13, {data, i64s({1, 1}, {INT64_MIN}), Tensor::from_vector<int32_t>({1, 1}, {1})},
                        nullptr);
  EXPECT_NE(msg.find("ScatterElements 'n1': index -9223372036854775808 at position 0 is out of range [-3, 3) on axis 0"),
            std::string::npos)
      << msg;
}

TEST(OneHot, AxesNegativeAndOutOfRangeIndices) {
  Tensor idx = Tensor::from_vector<float>({2, 2}, {0, -1, 2.7f, 5});  // 2.7 -> 2; 5 is outside [-3, 3): all off
  Tensor values = Tensor::from_vector<int64_t>({2}, {-1, 7});
  auto y = run_node("OneHot", 11, {idx, Tensor::scalar<int64_t>(3), values}, [](NodeBuilder& n) { n.attr("axis", 1); },
                    1, KernelMode::Fast)[0];
  ASSERT_EQ(y.shape(), (Shape{2, 3, 2}));
  // y[a, d, b] = on where idx[a, b] == d.
  EXPECT_EQ(values_of(y), (std::vector<double>{7, -1, -1, -1, -1, 7, -1, -1, -1, -1, 7, -1}));
  auto msg = node_error("OneHot", 11, {idx, Tensor::scalar<int64_t>(-2), values}, nullptr);
  EXPECT_NE(msg.find("OneHot 'n1': depth -2 must be positive"), std::string::npos) << msg;
  msg = node_error("OneHot", 11, {idx, Tensor::scalar<int64_t>(3), values}, [](NodeBuilder& n) { n.attr("axis", 4); });
  EXPECT_NE(msg.find("axis 4 is out of range [-3, 2]"), std::string::npos) << msg;
}

TEST(EyeLikeNonZeroCompress, HandComputed) {
  auto y = run_node("EyeLike", 9, {random_tensor(DType::Float32, {3, 4}, 1)},
                    [](NodeBuilder& n) { n.attr("k", 1).attr("dtype", int64_t{7}); }, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  y = run_node("EyeLike", 22, {random_tensor(DType::Float32, {3, 2}, 1)}, [](NodeBuilder& n) { n.attr("k", -1); }, 1,
               KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 0, 1, 0, 0, 1}));

  Tensor x = Tensor::from_vector<float>({2, 3}, {0, 1.5f, -0.f, 2, 0, std::nanf("")});
  y = run_node("NonZero", 13, {x}, nullptr, 1, KernelMode::Fast)[0];
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 1, 1, 1, 0, 2}));

  Tensor c = Tensor::from_vector<bool>({2}, {false, true});
  y = run_node("Compress", 11, {iota_tensor(DType::Int64, {3, 2}), c}, [](NodeBuilder& n) { n.attr("axis", 0); }, 1,
               KernelMode::Fast)[0];
  EXPECT_EQ(y.shape(), (Shape{1, 2}));
  EXPECT_EQ(values_of(y), (std::vector<double>{2, 3}));
  y = run_node("Compress", 11, {iota_tensor(DType::Int64, {3, 2}), c}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{1}));
  auto msg = node_error("Compress", 11, {iota_tensor(DType::Int64, {3, 2}), Tensor::from_vector<bool>({3}, {1, 0, 1})},
                        [](NodeBuilder& n) { n.attr("axis", 1); });
  EXPECT_NE(msg.find("Compress 'n1': condition has 3 entries but the axis has 2"), std::string::npos) << msg;
}

TEST(ReverseSequence, BothLayoutsAndBadLengths) {
  Tensor x = iota_tensor(DType::Int64, {4, 2, 2});  // [T=4, B=2, 2]
  auto y = run_node("ReverseSequence", 10, {x, i64({3, 1})}, nullptr, 1, KernelMode::Fast)[0];
  // batch 0 reverses t 0..2, batch 1 keeps everything (length 1).
  EXPECT_EQ(values_of(y), (std::vector<double>{8, 9, 2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15}));
  y = run_node("ReverseSequence", 10, {iota_tensor(DType::Int64, {2, 3}), i64({2, 3})},
               [](NodeBuilder& n) { n.attr("time_axis", 1).attr("batch_axis", 0); }, 1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{1, 0, 2, 5, 4, 3}));
  auto msg = node_error("ReverseSequence", 10, {x, i64({5, 1})}, nullptr);
  EXPECT_NE(msg.find("ReverseSequence 'n1': sequence_lens[0] = 5 is out of range [0, 4]"), std::string::npos) << msg;
}

TEST(Unique, SortedUnsortedAndAxis) {
  Tensor x = Tensor::from_vector<float>({6}, {2, 1, 1, 3, 4, 3});
  auto out = run_node("Unique", 11, {x}, [](NodeBuilder& n) { n.attr("sorted", 0); }, 4, KernelMode::Fast);
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{2, 1, 3, 4}));
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{0, 1, 3, 4}));
  EXPECT_EQ(values_of(out[2]), (std::vector<double>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values_of(out[3]), (std::vector<double>{1, 2, 2, 1}));
  out = run_node("Unique", 11, {x}, nullptr, 4, KernelMode::Fast);
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{1, 0, 3, 4}));
  EXPECT_EQ(values_of(out[2]), (std::vector<double>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values_of(out[3]), (std::vector<double>{2, 1, 2, 1}));
  // Rows of a 3x3 matrix (axis 0): rows 0 and 1 are equal.
  Tensor m = Tensor::from_vector<int32_t>({3, 3}, {1, 0, 0, 1, 0, 0, 0, 2, 3});
  out = run_node("Unique", 11, {m}, [](NodeBuilder& n) { n.attr("axis", 0); }, 4, KernelMode::Fast);
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{0, 2, 3, 1, 0, 0}));
  EXPECT_EQ(values_of(out[2]), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(values_of(out[3]), (std::vector<double>{1, 2}));
}

TEST(BitCast, ReinterpretsBitsAndChecksWidth) {
  Tensor x = Tensor::from_vector<float>({2}, {1.0f, -2.5f});
  auto y = run_node("BitCast", 26, {x}, [](NodeBuilder& n) { n.attr("to", int64_t{6}); }, 1, KernelMode::Fast)[0];
  ASSERT_EQ(y.dtype(), DType::Int32);
  for (int i = 0; i < 2; ++i) {
    int32_t bits;
    std::memcpy(&bits, &x.data<float>()[i], 4);
    EXPECT_EQ(y.data<int32_t>()[i], bits);
  }
  auto msg = node_error("BitCast", 26, {x}, [](NodeBuilder& n) { n.attr("to", int64_t{7}); });
  EXPECT_NE(msg.find("BitCast 'n1': input dtype float (32 bits) and to = int64 (64 bits) differ in width"),
            std::string::npos)
      << msg;
}

// The 2- and 4-bit types are one code per byte in memory, but their width is 2 or 4
// bits: uint8 -> int2 is refused, uint4 -> int4 reinterprets the code.
TEST(BitCast, SubByteTypesCountTheirBits) {
  Tensor u8 = Tensor::from_vector<uint8_t>({2}, {1, 3});
  auto msg = node_error("BitCast", 26, {u8}, [](NodeBuilder& n) { n.attr("to", int64_t(DType::Int2)); });
  EXPECT_NE(msg.find("input dtype uint8 (8 bits) and to = int2 (2 bits) differ in width"), std::string::npos) << msg;

  Tensor u4(DType::UInt4, Shape{3});
  const uint8_t codes[3] = {0x0F, 0x08, 0x07};
  std::memcpy(u4.raw_mut(), codes, 3);
  auto y = run_node("BitCast", 26, {u4}, [](NodeBuilder& n) { n.attr("to", int64_t(DType::Int4)); }, 1,
                    KernelMode::Fast)[0];
  ASSERT_EQ(y.dtype(), DType::Int4);
  EXPECT_EQ(values_of(y), (std::vector<double>{-1, -8, 7}));
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
