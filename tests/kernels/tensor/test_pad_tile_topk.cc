// Expand, Tile, Pad, Shape, Size, ConstantOfShape, Range, TopK: hand-computed
// cases, fast vs reference on random / large shapes, and the error cases.
#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

// ---- Expand / Tile ----

TEST(Expand, BidirectionalBroadcast) {
  auto x = Tensor::from_vector<float>({3, 1}, {1, 2, 3});
  auto y = run_node("Expand", 13, {x, i64({2, 1, 2})}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));  // the 1 in the shape keeps the input's 3
  EXPECT_EQ(values_of(y), (std::vector<double>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  EXPECT_TRUE(fast_matches_reference("Expand", 13, {random_tensor(DType::Float32, {1, 70, 1, 33}, 1), i64({40, 1, 25, 33})}, nullptr));
  EXPECT_TRUE(fast_matches_reference("Expand", 13, {iota_tensor(DType::String, {3, 1}), i64({4, 3, 5})}, nullptr));
}

TEST(Expand, ImpossibleShape) {
  auto msg = node_error("Expand", 13, {iota_tensor(DType::Float32, {3, 2}), i64({4, 3})}, nullptr);
  EXPECT_NE(msg.find("Expand 'n1': cannot expand input of shape 3x2 to shape [4,3]: dimension 0 is 3 vs 4"),
            std::string::npos)
      << msg;
}

TEST(Tile, HandComputedAndReference) {
  auto y = run_node("Tile", 13, {iota_tensor(DType::Int64, {2, 2}), i64({1, 2})}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_TRUE(fast_matches_reference("Tile", 13, {random_tensor(DType::Float32, {7, 13, 5}, 2), i64({9, 3, 40})}, nullptr));
}

TEST(Tile, BadRepeats) {
  auto msg = node_error("Tile", 13, {iota_tensor(DType::Float32, {2, 2}), i64({1, -2})}, nullptr);
  EXPECT_NE(msg.find("Tile 'n1': repeats [1,-2] has a negative entry -2"), std::string::npos) << msg;
  msg = node_error("Tile", 13, {iota_tensor(DType::Float32, {2, 2}), i64({2})}, nullptr);
  EXPECT_NE(msg.find("repeats [2] has 1 entries, the input has rank 2"), std::string::npos) << msg;
}

// ---- Pad ----

std::vector<double> pad1d(const std::string& mode, std::vector<int64_t> pads, int opset = 13) {
  auto x = Tensor::from_vector<float>({4}, {1, 2, 3, 4});
  auto set = [&](NodeBuilder& n) { n.attr("mode", mode); };
  return values_of(run_node("Pad", opset, {x, i64(pads), Tensor::scalar<float>(9)}, set, 1, KernelMode::Fast)[0]);
}

TEST(Pad, ModesHandComputed) {
  EXPECT_EQ(pad1d("constant", {2, 1}), (std::vector<double>{9, 9, 1, 2, 3, 4, 9}));
  EXPECT_EQ(pad1d("reflect", {3, 2}), (std::vector<double>{4, 3, 2, 1, 2, 3, 4, 3, 2}));
  EXPECT_EQ(pad1d("edge", {2, 2}), (std::vector<double>{1, 1, 1, 2, 3, 4, 4, 4}));
  EXPECT_EQ(pad1d("wrap", {2, 3}, 19), (std::vector<double>{3, 4, 1, 2, 3, 4, 1, 2, 3}));
  EXPECT_EQ(pad1d("constant", {-1, 2}), (std::vector<double>{2, 3, 4, 9, 9}));  // negative pads crop
}

TEST(Pad, OpsetVariants) {
  // opset 2: pads and value attributes
  auto y = run_node("Pad", 2, {iota_tensor(DType::Float32, {1, 2})},
                    [](NodeBuilder& n) { n.attr("pads", std::vector<int64_t>{0, 1, 0, 0}).attr("value", 5.f); }, 1,
                    KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{5, 0, 1}));
  // opset 18: axes input (only axis -1 padded), int64 data, default constant 0
  y = run_node("Pad", 18, {iota_tensor(DType::Int64, {2, 2}), i64({1, 0}), Tensor(), i64({-1})}, nullptr, 1,
               KernelMode::Fast)[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 0, 1, 0, 2, 3}));
}

TEST(Pad, RandomMatchesReference) {
  for (std::string mode : {"constant", "reflect", "edge", "wrap"}) {
    EXPECT_TRUE(fast_matches_reference("Pad", 19,
                                       {random_tensor(DType::Float32, {30, 7, 50}, 3), i64({2, 0, 9, -3, 5, 11}),
                                        Tensor::scalar<float>(-1)},
                                       [&](NodeBuilder& n) { n.attr("mode", mode); }))
        << mode;
    EXPECT_TRUE(fast_matches_reference("Pad", 19, {iota_tensor(DType::UInt8, {5, 6}), i64({1, 2, 3, 4})},
                                       [&](NodeBuilder& n) { n.attr("mode", mode); }))
        << mode;
    // silero_vad_v6's STFT pad: long rows, borders of 128 on each side.
    EXPECT_TRUE(fast_matches_reference("Pad", 19, {random_tensor(DType::Float32, {4, 576}, 5), i64({0, 128, 0, 128})},
                                       [&](NodeBuilder& n) { n.attr("mode", mode); }))
        << mode;
  }
}

TEST(Pad, Errors) {
  auto msg = node_error("Pad", 13, {iota_tensor(DType::Float32, {2, 2}), i64({1, 1})}, nullptr);
  EXPECT_NE(msg.find("Pad 'n1': pads [1,1] has 2 entries, expected 4"), std::string::npos) << msg;
  msg = node_error("Pad", 13, {iota_tensor(DType::Float32, {2}), i64({-2, -1})}, nullptr);
  EXPECT_NE(msg.find("give a negative dimension -1"), std::string::npos) << msg;
  msg = node_error("Pad", 13, {iota_tensor(DType::Float32, {2}), i64({1, 1})}, [](NodeBuilder& n) { n.attr("mode", "mirror"); });
  EXPECT_NE(msg.find("unknown mode 'mirror'"), std::string::npos) << msg;
}

// ---- Shape / Size / ConstantOfShape / Range ----

TEST(ShapeOps, ShapeStartEndAndSize) {
  auto x = Tensor(DType::Float32, {2, 3, 4, 5});
  EXPECT_EQ(values_of(run_node("Shape", 13, {x}, nullptr, 1, KernelMode::Fast)[0]), (std::vector<double>{2, 3, 4, 5}));
  auto y = run_node("Shape", 15, {x}, [](NodeBuilder& n) { n.attr("start", int64_t{-3}).attr("end", int64_t{-1}); }, 1,
                    KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{3, 4}));
  y = run_node("Shape", 15, {x}, [](NodeBuilder& n) { n.attr("start", int64_t{-10}).attr("end", int64_t{10}); }, 1,
               KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{2, 3, 4, 5}));  // clamped
  y = run_node("Size", 13, {x}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.rank(), 0u);
  EXPECT_EQ(y.get_as_double(0), 120);
}

TEST(ShapeOps, ConstantOfShapeAndRange) {
  auto y = run_node("ConstantOfShape", 20, {i64({2, 3})},
                    [](NodeBuilder& n) { n.attr("value", Tensor::from_vector<int32_t>({1}, {7})); }, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.dtype(), DType::Int32);
  EXPECT_EQ(values_of(y), std::vector<double>(6, 7));
  y = run_node("ConstantOfShape", 9, {i64({0})}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.dtype(), DType::Float32);
  EXPECT_EQ(y.numel(), 0);
  auto msg = node_error("ConstantOfShape", 9, {i64({2, -1})}, nullptr);
  EXPECT_NE(msg.find("ConstantOfShape 'n1': shape [2,-1] has a negative dimension"), std::string::npos) << msg;

  y = run_node("Range", 11, {Tensor::scalar<int32_t>(10), Tensor::scalar<int32_t>(1), Tensor::scalar<int32_t>(-3)}, nullptr,
               1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{10, 7, 4}));
  y = run_node("Range", 11, {Tensor::scalar<float>(1), Tensor::scalar<float>(2), Tensor::scalar<float>(0.25f)}, nullptr, 1,
               KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{1, 1.25, 1.5, 1.75}));
  y = run_node("Range", 11, {Tensor::scalar<int64_t>(5), Tensor::scalar<int64_t>(1), Tensor::scalar<int64_t>(2)}, nullptr, 1,
               KernelMode::Fast)[0];
  EXPECT_EQ(y.numel(), 0);
  msg = node_error("Range", 11, {Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(1), Tensor::scalar<int64_t>(0)}, nullptr);
  EXPECT_NE(msg.find("Range 'n1': delta is 0"), std::string::npos) << msg;
}

// ---- TopK ----

TEST(TopK, TiesLowerIndexFirstAndSmallest) {
  auto x = Tensor::from_vector<float>({1, 6}, {3, 1, 3, 2, 1, 3});
  auto out = run_node("TopK", 11, {x, i64({3})}, nullptr, 2, KernelMode::Fast);
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{3, 3, 3}));
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{0, 2, 5}));
  out = run_node("TopK", 11, {x, i64({2})}, [](NodeBuilder& n) { n.attr("largest", int64_t{0}); }, 2, KernelMode::Fast);
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{1, 1}));
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{1, 4}));
  // opset 1: k attribute, along axis 0
  out = run_node("TopK", 1, {Tensor::from_vector<int64_t>({3, 1}, {5, 9, 7})}, [](NodeBuilder& n) { n.attr("k", int64_t{2}).attr("axis", int64_t{0}); },
                 2, KernelMode::Fast);
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{9, 7}));
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{1, 2}));
}

TEST(TopK, RandomWithTiesMatchesReference) {
  Tensor x(DType::Int32, {40, 300, 20});  // few distinct values: many ties
  std::mt19937 rng(11);
  for (int64_t i = 0; i < x.numel(); ++i) x.mutable_data<int32_t>()[i] = std::uniform_int_distribution<int32_t>(0, 9)(rng);
  for (int64_t axis : {0, 1, -1})
    for (int64_t largest : {0, 1})
      EXPECT_TRUE(fast_matches_reference("TopK", 11, {x, i64({7})},
                                         [&](NodeBuilder& n) { n.attr("axis", axis).attr("largest", largest); }, 2));
  EXPECT_TRUE(fast_matches_reference("TopK", 11, {random_tensor(DType::Float32, {64, 1000}, 12), i64({1000})}, nullptr, 2));
}

TEST(TopK, KLargerThanAxis) {
  auto msg = node_error("TopK", 11, {iota_tensor(DType::Float32, {2, 3}), i64({5})}, nullptr, 2);
  EXPECT_NE(msg.find("TopK 'n1': k 5 is larger than dimension 1 (size 3)"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
