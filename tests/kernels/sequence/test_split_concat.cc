// SplitToSequence (no split with keepdims 0/1, a scalar split with a short last
// piece, explicit sizes) and ConcatFromSequence (along an existing axis and
// stacked on a new one), checked against slices computed here, plus the
// round trip and the errors.
#include <gtest/gtest.h>

#include <numeric>

#include "tests/kernels/sequence/sequence_test_util.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

// A 3x4 tensor holding 0..11.
Tensor grid() {
  std::vector<float> v(12);
  std::iota(v.begin(), v.end(), 0.0f);
  return Tensor::from_vector<float>({3, 4}, v);
}

// Columns [from, to) of grid() as a 3 x (to-from) tensor.
Tensor columns(int64_t from, int64_t to) {
  std::vector<float> v;
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = from; c < to; ++c) v.push_back(static_cast<float>(r * 4 + c));
  return Tensor::from_vector<float>({3, to - from}, v);
}

std::vector<Value> split(int64_t axis, int64_t keepdims, const Tensor* sizes) {
  ModelBuilder mb(11);
  mb.input("X", DType::Float32, {3, 4});
  std::vector<std::string> ins = {"X"};
  if (sizes) {
    mb.initializer("split", *sizes);
    ins.push_back("split");
  }
  mb.node("SplitToSequence", ins, {"S"}).attr("axis", axis).attr("keepdims", keepdims);
  mb.output("S");
  return mb.session()->run({{"X", grid()}})[0].sequence_items();
}

}  // namespace

TEST(SplitToSequence, NoSplitGivesSizeOnePiecesKeepingOrDroppingTheAxis) {
  auto kept = split(1, 1, nullptr);
  ASSERT_EQ(kept.size(), 4u);
  for (int64_t c = 0; c < 4; ++c) EXPECT_TRUE(tensors_near(kept[c].tensor(), columns(c, c + 1), 0, 0)) << c;
  auto dropped = split(-1, 0, nullptr);
  ASSERT_EQ(dropped.size(), 4u);
  for (int64_t c = 0; c < 4; ++c)
    EXPECT_TRUE(tensors_near(dropped[c].tensor(), columns(c, c + 1).view({3}), 0, 0)) << c;
}

TEST(SplitToSequence, ScalarSplitLeavesAShortLastPiece) {
  const Tensor three = Tensor::scalar<int64_t>(3);
  auto pieces = split(1, 0, &three);  // keepdims is ignored when split is given
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_TRUE(tensors_near(pieces[0].tensor(), columns(0, 3), 0, 0));
  EXPECT_TRUE(tensors_near(pieces[1].tensor(), columns(3, 4), 0, 0));
}

TEST(SplitToSequence, ExplicitSizesAlongAxisZero) {
  const Tensor sizes = Tensor::from_vector<int32_t>({2}, {1, 2});
  auto pieces = split(0, 1, &sizes);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].tensor().shape(), (Shape{1, 4}));
  EXPECT_EQ(pieces[1].tensor().shape(), (Shape{2, 4}));
  EXPECT_EQ(pieces[1].tensor().data<float>()[0], 4.0f);
  EXPECT_EQ(pieces[1].tensor().data<float>()[7], 11.0f);
}

TEST(SplitToSequence, SizesThatDoNotSumFailNamingTheNode) {
  ModelBuilder mb(11);
  mb.input("X", DType::Float32, {3, 4});
  mb.initializer("split", Tensor::from_vector<int64_t>({2}, {1, 1}));
  mb.node("SplitToSequence", {"X", "split"}, {"S"}).attr("axis", int64_t{1}).name("cut");
  mb.output("S");
  auto s = mb.session();
  expect_error_containing([&] { s->run({{"X", grid()}}); }, {"SplitToSequence 'cut'", "sum to 2", "length 4"});
}

TEST(ConcatFromSequence, SplitThenConcatRestoresTheTensorOnEveryAxis) {
  for (int64_t axis : {0, 1, -1}) {
    SCOPED_TRACE(axis);
    ModelBuilder mb(11);
    mb.input("X", DType::Float32, {3, 4});
    mb.initializer("split", Tensor::scalar<int64_t>(2));
    mb.node("SplitToSequence", {"X", "split"}, {"S"}).attr("axis", axis);
    mb.node("ConcatFromSequence", {"S"}, {"Y"}).attr("axis", axis);
    mb.output("Y");
    EXPECT_TRUE(tensors_near(mb.session()->run({{"X", grid()}})[0].tensor(), grid(), 0, 0));
  }
}

TEST(ConcatFromSequence, NewAxisStacksTheTensors) {
  ModelBuilder mb(11);
  sequence_input(mb, "S", DType::Float32);
  mb.node("ConcatFromSequence", {"S"}, {"Last"}).attr("axis", int64_t{-1}).attr("new_axis", int64_t{1});
  mb.node("ConcatFromSequence", {"S"}, {"First"}).attr("axis", int64_t{0}).attr("new_axis", int64_t{1});
  mb.output("Last");
  mb.output("First");
  auto out = mb.session()->run({{"S", float_sequence({{1, 2}, {3, 4}, {5, 6}})}});
  EXPECT_TRUE(tensors_near(out[0].tensor(), Tensor::from_vector<float>({2, 3}, {1, 3, 5, 2, 4, 6}), 0, 0));
  EXPECT_TRUE(tensors_near(out[1].tensor(), Tensor::from_vector<float>({3, 2}, {1, 2, 3, 4, 5, 6}), 0, 0));
}

TEST(ConcatFromSequence, MismatchedShapesAndEmptySequencesFailNamingTheNode) {
  ModelBuilder mb(11);
  sequence_input(mb, "S", DType::Float32);
  mb.node("ConcatFromSequence", {"S"}, {"Y"}).attr("axis", int64_t{0}).attr("new_axis", int64_t{1}).name("stack");
  mb.output("Y");
  auto s = mb.session();
  expect_error_containing([&] { s->run({{"S", float_sequence({{1, 2}, {3}})}}); },
                          {"ConcatFromSequence 'stack'", "tensor 1", "incompatible"});
  expect_error_containing([&] { s->run({{"S", Value::sequence({})}}); },
                          {"ConcatFromSequence 'stack'", "empty sequence"});
}

TEST(SplitToSequence, PiecesSurviveRepeatedRunsWithAMemoryPattern) {
  // Runs after the first reuse the recorded buffer layout: the pieces held in the
  // sequence must not share bytes with later allocations of the same run.
  ModelBuilder mb(11);
  mb.input("X", DType::Float32, {3, 4});
  mb.node("SplitToSequence", {"X"}, {"S"}).attr("axis", int64_t{0}).attr("keepdims", int64_t{0});
  mb.node("Neg", {"X"}, {"N"});
  mb.node("SplitToSequence", {"N"}, {"T"}).attr("axis", int64_t{1});
  mb.node("ConcatFromSequence", {"S"}, {"Y"}).attr("axis", int64_t{0}).attr("new_axis", int64_t{1});
  mb.node("ConcatFromSequence", {"T"}, {"Z"}).attr("axis", int64_t{1});
  mb.output("Y");
  mb.output("Z");
  auto s = mb.session();
  for (int run = 0; run < 4; ++run) {
    std::vector<float> v(12);
    std::iota(v.begin(), v.end(), static_cast<float>(run * 100));
    const Tensor x = Tensor::from_vector<float>({3, 4}, v);
    std::vector<float> neg(12);
    for (size_t i = 0; i < 12; ++i) neg[i] = -v[i];
    auto out = s->run({{"X", x}});
    EXPECT_TRUE(tensors_near(out[0].tensor(), x, 0, 0)) << run;
    EXPECT_TRUE(tensors_near(out[1].tensor(), Tensor::from_vector<float>({3, 4}, neg), 0, 0)) << run;
  }
}
