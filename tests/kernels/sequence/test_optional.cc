// Optional, OptionalHasElement, OptionalGetElement: an optional holding a
// tensor or a sequence, an empty optional (present, unlike a missing input),
// optionals fed through Session::run, opset 18's plain inputs, and reading an
// empty optional failing with the node's name.
#include <gtest/gtest.h>

#include "tests/kernels/sequence/sequence_test_util.h"

using namespace onnxmini;
using namespace onnxmini::test;

TEST(Optional, WrapsATensorAndGivesItBack) {
  ModelBuilder mb(15);
  mb.input("X", DType::Float32, {2});
  mb.node("Optional", {"X"}, {"O"});
  mb.node("OptionalHasElement", {"O"}, {"Has"});
  mb.node("OptionalGetElement", {"O"}, {"Y"});
  mb.output("O");
  mb.output("Has");
  mb.output("Y");
  const Tensor x = Tensor::from_vector<float>({2}, {1, 2});
  auto out = mb.session()->run({{"X", x}});
  ASSERT_TRUE(out[0].is_optional());
  EXPECT_TRUE(out[0].has_element());
  EXPECT_EQ(out[0].type_string(), "optional(tensor(float))");
  EXPECT_TRUE(out[1].tensor().data<bool>()[0]);
  EXPECT_TRUE(tensors_near(out[2].tensor(), x, 0, 0));
}

TEST(Optional, WithoutInputIsEmptyButPresent) {
  ModelBuilder mb(15);
  mb.node("Optional", {}, {"O"});
  mb.node("OptionalHasElement", {"O"}, {"Has"});
  mb.output("O");
  mb.output("Has");
  auto out = mb.session()->run({});
  ASSERT_TRUE(out[0].is_optional());
  EXPECT_FALSE(out[0].is_none());
  EXPECT_FALSE(out[0].has_element());
  EXPECT_FALSE(out[1].tensor().data<bool>()[0]);
}

TEST(Optional, FedOptionalsWithAndWithoutAnElement) {
  ModelBuilder mb(15);
  optional_input(mb, "O", DType::Float32);
  mb.node("OptionalHasElement", {"O"}, {"Has"});
  mb.output("Has");
  auto s = mb.session();
  EXPECT_TRUE(s->run({{"O", Value::optional(Tensor::scalar<float>(1))}})[0].tensor().data<bool>()[0]);
  EXPECT_FALSE(s->run({{"O", Value::optional()}})[0].tensor().data<bool>()[0]);
}

TEST(Optional, HoldsASequence) {
  ModelBuilder mb(15);
  sequence_input(mb, "S", DType::Float32);
  mb.node("Optional", {"S"}, {"O"});
  mb.node("OptionalGetElement", {"O"}, {"Back"});
  mb.output("Back");
  auto out = mb.session()->run({{"S", float_sequence({{1}, {2, 3}})}});
  ASSERT_TRUE(out[0].is_sequence());
  EXPECT_EQ(out[0].sequence_items().size(), 2u);
}

TEST(Optional, Opset18AcceptsPlainAndMissingInputs) {
  ModelBuilder mb(18);
  mb.input("X", DType::Float32, {1});
  mb.node("OptionalHasElement", {"X"}, {"HasX"});
  mb.node("OptionalHasElement", {""}, {"HasNothing"});
  mb.node("OptionalGetElement", {"X"}, {"Y"});
  mb.output("HasX");
  mb.output("HasNothing");
  mb.output("Y");
  auto out = mb.session()->run({{"X", Tensor::from_vector<float>({1}, {7})}});
  EXPECT_TRUE(out[0].tensor().data<bool>()[0]);
  EXPECT_FALSE(out[1].tensor().data<bool>()[0]);
  EXPECT_EQ(out[2].tensor().data<float>()[0], 7.0f);
}

TEST(Optional, BeforeOpset18APlainValueIsAnElementButAMissingInputFails) {
  // A Loop-carried optional comes back from the body as a plain value (test_loop16_seq_none).
  ModelBuilder mb(16);
  mb.input("X", DType::Float32, {1});
  mb.node("OptionalHasElement", {"X"}, {"Has"});
  mb.output("Has");
  EXPECT_TRUE(mb.session()->run({{"X", Tensor::from_vector<float>({1}, {7})}})[0].tensor().data<bool>()[0]);

  ModelBuilder missing(16);
  missing.node("OptionalHasElement", {""}, {"Has"}).name("has");
  missing.output("Has");
  auto s = missing.session();
  expect_error_containing([&] { s->run({}); }, {"OptionalHasElement 'has'", "missing"});
}

TEST(Optional, GettingFromAnEmptyOptionalFailsNamingTheNode) {
  ModelBuilder mb(15);
  optional_input(mb, "O", DType::Float32);
  mb.node("OptionalGetElement", {"O"}, {"Y"}).name("get");
  mb.output("Y");
  auto s = mb.session();
  expect_error_containing([&] { s->run({{"O", Value::optional()}}); }, {"OptionalGetElement 'get'", "empty"});
}
