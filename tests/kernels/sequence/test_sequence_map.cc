// SequenceMap: the body runs once per item; extra sequence inputs are iterated
// in step, extra tensor inputs passed whole; several outputs; length mismatch
// and a wrong body fail naming the node.
#include <gtest/gtest.h>

#include "tests/kernels/sequence/sequence_test_util.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

// Body (x, y, bias) -> (x + y + bias, shape of x).
onnx::GraphProto add_body() {
  ModelBuilder b(17);
  b.input("x", DType::Float32, {-1});
  b.input("y", DType::Float32, {-1});
  b.input("bias", DType::Float32, {1});
  b.node("Add", {"x", "y"}, {"xy"});
  b.node("Add", {"xy", "bias"}, {"sum"});
  b.node("Shape", {"x"}, {"shape"});
  b.output("sum", DType::Float32, {-1}, true);
  b.output("shape", DType::Int64, {1}, true);
  return b.graph();
}

std::unique_ptr<Session> map_session() {
  ModelBuilder mb(17);
  sequence_input(mb, "X", DType::Float32);
  sequence_input(mb, "Y", DType::Float32);
  mb.input("B", DType::Float32, {1});
  mb.node("SequenceMap", {"X", "Y", "B"}, {"Sums", "Shapes"}).name("map").attr("body", add_body());
  mb.output("Sums");
  mb.output("Shapes");
  return mb.session();
}

}  // namespace

TEST(SequenceMap, IteratesSequencesInStepAndPassesTensorsWhole) {
  auto s = map_session();
  auto out = s->run({{"X", float_sequence({{1}, {2, 3}})},
                     {"Y", float_sequence({{10}, {20, 30}})},
                     {"B", Tensor::from_vector<float>({1}, {100})}});
  const auto& sums = out[0].sequence_items();
  ASSERT_EQ(sums.size(), 2u);
  EXPECT_TRUE(tensors_near(sums[0].tensor(), Tensor::from_vector<float>({1}, {111}), 0, 0));
  EXPECT_TRUE(tensors_near(sums[1].tensor(), Tensor::from_vector<float>({2}, {122, 133}), 0, 0));
  const auto& shapes = out[1].sequence_items();
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].tensor().data<int64_t>()[0], 1);
  EXPECT_EQ(shapes[1].tensor().data<int64_t>()[0], 2);
}

TEST(SequenceMap, EmptySequenceGivesEmptyOutputs) {
  auto out = map_session()->run(
      {{"X", Value::sequence({})}, {"Y", Value::sequence({})}, {"B", Tensor::from_vector<float>({1}, {0})}});
  EXPECT_TRUE(out[0].sequence_items().empty());
  EXPECT_TRUE(out[1].sequence_items().empty());
}

TEST(SequenceMap, SequencesOfDifferentLengthsFailNamingTheNode) {
  auto s = map_session();
  expect_error_containing(
      [&] {
        s->run({{"X", float_sequence({{1}, {2}})}, {"Y", float_sequence({{1}})}, {"B", Tensor::from_vector<float>({1}, {0})}});
      },
      {"SequenceMap 'map'", "input 1 is a sequence of 1", "input 0 of 2"});
}

TEST(SequenceMap, BodyWithTheWrongInputCountFailsAtLoad) {
  ModelBuilder mb(17);
  sequence_input(mb, "X", DType::Float32);
  mb.node("SequenceMap", {"X"}, {"Sums", "Shapes"}).name("map").attr("body", add_body());
  mb.output("Sums");
  expect_error_containing([&] { mb.session(); }, {"SequenceMap 'map'", "body takes 3 inputs"});
}
