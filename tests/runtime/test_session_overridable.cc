// Session::overridable_initializers(): initializers that the model also lists as graph
// inputs are reported apart from inputs() (as onnxruntime's get_overridable_initializers),
// with their declared type and shape, and a feed of that name replaces the value for one run.
#include <gtest/gtest.h>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {
namespace {

TEST(SessionOverridable, ListedApartFromInputsAndReplaceableByAFeed) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3});
  mb.input("B", DType::Float32, {3});
  mb.initializer("B", Tensor::from_vector<float>({3}, {1, 2, 3}));
  mb.initializer("C", Tensor::from_vector<float>({3}, {10, 10, 10}));  // not an input: a constant
  mb.node("Add", {"X", "B"}, {"XB"}).name("add_b");
  mb.node("Add", {"XB", "C"}, {"Y"}).name("add_c");
  mb.output("Y");
  auto session = mb.session();

  ASSERT_EQ(session->inputs().size(), 1u);
  EXPECT_EQ(session->inputs()[0].name, "X");
  const std::vector<ValueInfo> over = session->overridable_initializers();
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0].name, "B");
  EXPECT_EQ(over[0].type, "tensor(float)");
  ASSERT_EQ(over[0].shape.size(), 1u);
  EXPECT_EQ(over[0].shape[0].value, 3);

  const Tensor x = Tensor::from_vector<float>({2, 3}, {0, 0, 0, 1, 1, 1});
  auto stored = session->run({{"X", Value(x)}});
  EXPECT_TRUE(tensors_near(stored[0].tensor(), Tensor::from_vector<float>({2, 3}, {11, 12, 13, 12, 13, 14}), 0, 0));
  auto replaced = session->run({{"X", Value(x)}, {"B", Value(Tensor::from_vector<float>({3}, {0, 0, 0}))}});
  EXPECT_TRUE(tensors_near(replaced[0].tensor(), Tensor::from_vector<float>({2, 3}, {10, 10, 10, 11, 11, 11}), 0, 0));
}

TEST(SessionOverridable, NoneWhenNoInitializerIsAnInput) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {3});
  mb.initializer("B", Tensor::from_vector<float>({3}, {1, 2, 3}));
  mb.node("Add", {"X", "B"}, {"Y"}).name("add");
  mb.output("Y");
  EXPECT_TRUE(mb.session()->overridable_initializers().empty());
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
