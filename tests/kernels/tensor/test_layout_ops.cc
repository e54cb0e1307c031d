// Transpose, Concat, Split, Slice, Gather, GatherElements: fast path vs the
// reference kernels on random and large shapes (exact: these only move data),
// small cases checked against hand-computed values, and every error case.
#include <algorithm>

#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

// ---- Transpose ----

TEST(Transpose, HandComputed2D) {
  auto y = run_node("Transpose", 13, {iota_tensor(DType::Float32, {2, 3})}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.shape(), (Shape{3, 2}));  // default perm: reversed axes
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(Transpose, AllPermutationsRank4MatchReference) {
  std::vector<int64_t> perm = {0, 1, 2, 3};
  do {
    for (DType dt : {DType::Float32, DType::Int64, DType::UInt8})
      EXPECT_TRUE(fast_matches_reference("Transpose", 13, {iota_tensor(dt, {3, 5, 1, 7})},
                                         [&](NodeBuilder& n) { n.attr("perm", perm); }))
          << "perm " << perm[0] << perm[1] << perm[2] << perm[3];
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(Transpose, LargeTiledAndStridedPaths) {
  // (batch, R, C) -> (batch, C, R): the tiled path, sizes not multiples of the tile.
  EXPECT_TRUE(fast_matches_reference("Transpose", 13, {random_tensor(DType::Float32, {3, 301, 517}, 1)},
                                     [](NodeBuilder& n) { n.attr("perm", std::vector<int64_t>{0, 2, 1}); }));
  // NCHW -> NHWC merges to (N, C, HW) -> (N, HW, C): also tiled.
  EXPECT_TRUE(fast_matches_reference("Transpose", 13, {random_tensor(DType::Float64, {2, 67, 31, 29}, 2)},
                                     [](NodeBuilder& n) { n.attr("perm", std::vector<int64_t>{0, 2, 3, 1}); }));
  // General strided path, many rows crossing thread chunks.
  EXPECT_TRUE(fast_matches_reference("Transpose", 13, {random_tensor(DType::Int32, {37, 41, 43}, 3)},
                                     [](NodeBuilder& n) { n.attr("perm", std::vector<int64_t>{2, 0, 1}); }));
}

TEST(Transpose, Strings) {
  EXPECT_TRUE(fast_matches_reference("Transpose", 13, {iota_tensor(DType::String, {4, 3, 5})},
                                     [](NodeBuilder& n) { n.attr("perm", std::vector<int64_t>{1, 2, 0}); }));
}

TEST(Transpose, InvalidPerm) {
  auto msg = node_error("Transpose", 13, {iota_tensor(DType::Float32, {2, 3, 4})},
                        [](NodeBuilder& n) { n.attr("perm", std::vector<int64_t>{0, 0, 1}); });
  EXPECT_NE(msg.find("Transpose 'n1': invalid perm [0,0,1] for rank 3"), std::string::npos) << msg;
  msg = node_error("Transpose", 13, {iota_tensor(DType::Float32, {2, 3})},
                   [](NodeBuilder& n) { n.attr("perm", std::vector<int64_t>{1, 0, 2}); });
  EXPECT_NE(msg.find("perm [1,0,2] has 3 entries, the input has rank 2"), std::string::npos) << msg;
}

// ---- Concat / Split ----

TEST(Concat, HandComputedAndReference) {
  auto a = iota_tensor(DType::Float32, {2, 2}), b = iota_tensor(DType::Float32, {2, 1});
  auto y = run_node("Concat", 13, {a, b}, [](NodeBuilder& n) { n.attr("axis", int64_t{-1}); }, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 1, 0, 2, 3, 1}));
  for (int64_t axis = 0; axis < 3; ++axis) {
    Shape s1{40, 50, 60}, s2 = s1, s3 = s1;
    s2[axis] = 7;
    s3[axis] = 0;  // a zero-size input contributes nothing
    EXPECT_TRUE(fast_matches_reference(
        "Concat", 13, {random_tensor(DType::Float32, s1, 4), random_tensor(DType::Float32, s2, 5), Tensor(DType::Float32, s3)},
        [&](NodeBuilder& n) { n.attr("axis", axis); }));
  }
}

TEST(Concat, ShapeMismatchOnNonAxisDimension) {
  auto msg = node_error("Concat", 13, {iota_tensor(DType::Float32, {2, 3}), iota_tensor(DType::Float32, {4, 2})},
                        [](NodeBuilder& n) { n.attr("axis", int64_t{1}); });
  EXPECT_NE(msg.find("Concat 'n1': input 1 has shape 4x2, input 0 has 2x3: dimension 0 differs (4 vs 2)"),
            std::string::npos)
      << msg;
  msg = node_error("Concat", 13, {iota_tensor(DType::Float32, {2, 3})}, [](NodeBuilder& n) { n.attr("axis", int64_t{2}); });
  EXPECT_NE(msg.find("axis 2 is out of range [-2, 2)"), std::string::npos) << msg;
}

TEST(Split, AttributeInputAndNumOutputs) {
  auto x = iota_tensor(DType::Int64, {2, 6});
  // opset 11: split attribute
  auto a = run_node("Split", 11, {x}, [](NodeBuilder& n) { n.attr("axis", int64_t{1}).attr("split", std::vector<int64_t>{1, 5}); },
                    2, KernelMode::Fast);
  EXPECT_EQ(values_of(a[0]), (std::vector<double>{0, 6}));
  EXPECT_EQ(a[1].shape(), (Shape{2, 5}));
  // opset 13: split input
  auto b = run_node("Split", 13, {x, i64({4, 2})}, [](NodeBuilder& n) { n.attr("axis", int64_t{-1}); }, 2, KernelMode::Fast);
  EXPECT_EQ(values_of(b[1]), (std::vector<double>{4, 5, 10, 11}));
  // opset 18: num_outputs, uneven: chunks of ceil(6/4) = 2 -> 2,2,2,0
  auto c = run_node("Split", 18, {x}, [](NodeBuilder& n) { n.attr("axis", int64_t{1}).attr("num_outputs", int64_t{4}); }, 4,
                    KernelMode::Fast);
  EXPECT_EQ(c[2].shape(), (Shape{2, 2}));
  EXPECT_EQ(c[3].shape(), (Shape{2, 0}));
  // equal split, large, fast vs reference
  EXPECT_TRUE(fast_matches_reference("Split", 13, {random_tensor(DType::Float32, {64, 90, 33}, 6)},
                                     [](NodeBuilder& n) { n.attr("axis", int64_t{1}); }, 3));
}

TEST(Split, SizesMustSumToDimension) {
  auto msg = node_error("Split", 13, {iota_tensor(DType::Float32, {2, 6}), i64({2, 3})},
                        [](NodeBuilder& n) { n.attr("axis", int64_t{1}); }, 2);
  EXPECT_NE(msg.find("Split 'n1': split sizes [2,3] sum to 5, but dimension 1 of input 2x6 has size 6"), std::string::npos)
      << msg;
  msg = node_error("Split", 13, {iota_tensor(DType::Float32, {2, 7})}, [](NodeBuilder& n) { n.attr("axis", int64_t{1}); }, 2);
  EXPECT_NE(msg.find("does not split evenly into 2 outputs"), std::string::npos) << msg;
}

// ---- Slice ----

TEST(Slice, NegativeStepsAndClamping) {
  auto x = iota_tensor(DType::Float32, {10});
  // starts -1, ends -100 (clamped to before the start), step -3: 9, 6, 3, 0
  auto y = run_node("Slice", 13, {x, i64({-1}), i64({-100}), i64({0}), i64({-3})}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{9, 6, 3, 0}));
  // ends beyond the dim clamp: 7, 9
  y = run_node("Slice", 13, {x, i64({7}), i64({INT64_MAX}), Tensor(), i64({2})}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{7, 9}));
  // opset 9: attributes
  y = run_node("Slice", 9, {iota_tensor(DType::Float32, {3, 4})},
               [](NodeBuilder& n) {
                 n.attr("starts", std::vector<int64_t>{1}).attr("ends", std::vector<int64_t>{3}).attr("axes", std::vector<int64_t>{1});
               },
               1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{1, 2, 5, 6, 9, 10}));
}

TEST(Slice, RandomMatchesReference) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 30; ++trial) {
    Shape s = random_shape(rng, 3, 40);
    std::vector<int64_t> starts, ends, axes, steps;
    for (int64_t d = 0; d < 3; ++d) {
      std::uniform_int_distribution<int64_t> pos(-s[d] - 3, s[d] + 3);
      int64_t step = std::uniform_int_distribution<int64_t>(-3, 3)(rng);
      starts.push_back(pos(rng));
      ends.push_back(pos(rng));
      axes.push_back(d - 3);  // negative axes
      steps.push_back(step == 0 ? 1 : step);
    }
    EXPECT_TRUE(fast_matches_reference("Slice", 13,
                                       {random_tensor(DType::Float32, s, trial), i64(starts), i64(ends), i64(axes), i64(steps)},
                                       nullptr));
  }
  // large, crossing thread chunks
  EXPECT_TRUE(fast_matches_reference("Slice", 13,
                                     {random_tensor(DType::Int64, {300, 400}, 9), i64({5, 399}), i64({290, 0}), i64({0, 1}), i64({1, -2})},
                                     nullptr));
}

TEST(Slice, WholeInnerAxesMergeAndMatchReference) {
  // Axes kept whole (often trailing size-1 ones, as jax2tf exports) merge into
  // the axis before them; each axis here is kept whole, cut, strided or reversed
  // at random, on rank-4/5 shapes with size-1 axes, so every merge and stop
  // condition meets the reference.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t rank = 4 + trial % 2;
    Shape s;
    for (int64_t d = 0; d < rank; ++d) s.push_back(std::uniform_int_distribution<int64_t>(0, 2)(rng) == 0 ? 1 : 2 + rng() % 9);
    std::vector<int64_t> starts, ends, axes, steps;
    for (int64_t d = 0; d < rank; ++d) {
      const int kind = std::uniform_int_distribution<int>(0, 3)(rng);  // whole, cut, strided, reversed
      if (kind == 0) continue;  // not listed: kept whole
      axes.push_back(d);
      if (kind == 1) {
        starts.push_back(s[d] > 1 ? 1 : 0), ends.push_back(s[d]), steps.push_back(1);
      } else if (kind == 2) {
        starts.push_back(0), ends.push_back(INT64_MAX), steps.push_back(2);
      } else {
        starts.push_back(-1), ends.push_back(INT64_MIN), steps.push_back(-1);
      }
    }
    if (axes.empty()) axes.push_back(0), starts.push_back(0), ends.push_back(INT64_MAX), steps.push_back(1);
    EXPECT_TRUE(fast_matches_reference(
        "Slice", 13, {random_tensor(DType::Float32, s, trial), i64(starts), i64(ends), i64(axes), i64(steps)}, nullptr))
        << "shape " << shape_to_string(s) << " trial " << trial;
  }
  // The magika case: all of a [1,512,508,1] tensor, and its strided sibling.
  EXPECT_TRUE(fast_matches_reference("Slice", 13,
                                     {random_tensor(DType::Float32, {1, 64, 508, 1}, 3), i64({0, 0, 0, 0}),
                                      i64({INT64_MAX, INT64_MAX, INT64_MAX, 1}), i64({0, 1, 2, 3})},
                                     nullptr));
  EXPECT_TRUE(fast_matches_reference("Slice", 13,
                                     {random_tensor(DType::Float32, {1, 64, 256, 1}, 4), i64({0, 0, 0, 0}),
                                      i64({1000000000, 1000000000, 1000000000, 1000000000}), i64({0, 2, 1, 3}),
                                      i64({1, 2, 1, 1})},
                                     nullptr));
}

TEST(Slice, Errors) {
  auto x = iota_tensor(DType::Float32, {4});
  auto msg = node_error("Slice", 13, {x, i64({0}), i64({2}), i64({0}), i64({0})}, nullptr);
  EXPECT_NE(msg.find("Slice 'n1': step for axis 0 is 0"), std::string::npos) << msg;
  msg = node_error("Slice", 13, {x, i64({0}), i64({2}), i64({3})}, nullptr);
  EXPECT_NE(msg.find("axis 3 is out of range [-1, 1)"), std::string::npos) << msg;
}

// ---- Gather / GatherElements ----

TEST(Gather, HandComputedAndReference) {
  auto data = iota_tensor(DType::Float32, {3, 2});
  auto y = run_node("Gather", 13, {data, i64({2, -3, 2})}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of(y), (std::vector<double>{4, 5, 0, 1, 4, 5}));
  Tensor idx(DType::Int32, {20, 30});
  std::mt19937 rng(3);
  for (int64_t i = 0; i < idx.numel(); ++i) idx.mutable_data<int32_t>()[i] = std::uniform_int_distribution<int32_t>(-50, 49)(rng);
  for (int64_t axis = 0; axis < 3; ++axis)
    EXPECT_TRUE(fast_matches_reference("Gather", 13, {random_tensor(DType::Float64, {50, 50, 50}, 4), idx},
                                       [&](NodeBuilder& n) { n.attr("axis", axis); }));
}

TEST(Gather, IndexOutOfRange) {
  auto msg = node_error("Gather", 13, {iota_tensor(DType::Float32, {5, 2}), i64({1, 10})}, nullptr);
  EXPECT_NE(msg.find("Gather 'n1': index 10 out of range [-5, 5)"), std::string::npos) << msg;
  msg = node_error("Gather", 13, {iota_tensor(DType::Float32, {5, 2}), i64({-3})},
                   [](NodeBuilder& n) { n.attr("axis", int64_t{1}); });
  EXPECT_NE(msg.find("index -3 out of range [-2, 2)"), std::string::npos) << msg;
}

TEST(GatherElements, HandComputedAndReference) {
  auto data = iota_tensor(DType::Int32, {2, 2});  // [[0,1],[2,3]]
  auto idx = Tensor::from_vector<int64_t>({2, 2}, {0, 0, 1, -2});
  auto y = run_node("GatherElements", 13, {data, idx}, [](NodeBuilder& n) { n.attr("axis", int64_t{1}); }, 1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 0, 3, 2}));
  Tensor big(DType::Int64, {60, 40, 30});
  std::mt19937 rng(5);
  for (int64_t i = 0; i < big.numel(); ++i) big.mutable_data<int64_t>()[i] = std::uniform_int_distribution<int64_t>(0, 29)(rng);
  for (int64_t axis = 0; axis < 3; ++axis)
    EXPECT_TRUE(fast_matches_reference("GatherElements", 13, {random_tensor(DType::Float32, {70, 50, 30}, 6), big},
                                       [&](NodeBuilder& n) { n.attr("axis", axis); }));
}

TEST(GatherElements, Errors) {
  auto msg = node_error("GatherElements", 13, {iota_tensor(DType::Float32, {2, 2}), Tensor::from_vector<int64_t>({1, 2}, {0, 2})},
                        [](NodeBuilder& n) { n.attr("axis", int64_t{1}); });
  EXPECT_NE(msg.find("GatherElements 'n1': index 2 out of range [-2, 2)"), std::string::npos) << msg;
  msg = node_error("GatherElements", 13, {iota_tensor(DType::Float32, {2, 2}), i64({0})}, nullptr);
  EXPECT_NE(msg.find("indices have rank 1"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
