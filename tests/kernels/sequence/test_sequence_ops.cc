// SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase,
// SequenceLength: positions (negative, default, the append slot), sequences fed
// and returned through Session::run, and the errors, each naming the node.
#include <gtest/gtest.h>

#include "tests/kernels/sequence/sequence_test_util.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

Tensor vec(std::vector<float> v) { return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v); }
Tensor pos(int64_t p) { return Tensor::scalar<int64_t>(p); }

std::vector<float> values(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

std::vector<std::vector<float>> items_of(const Value& seq) {
  std::vector<std::vector<float>> out;
  for (const Value& item : seq.sequence_items()) out.push_back(values(item));
  return out;
}

}  // namespace

TEST(Sequence, ConstructLengthAndAtWithNegativePositions) {
  ModelBuilder mb(11);
  mb.input("A", DType::Float32, {1});
  mb.input("B", DType::Float32, {2});
  mb.input("C", DType::Float32, {3});
  mb.input("P", DType::Int64, {});
  mb.node("SequenceConstruct", {"A", "B", "C"}, {"S"});
  mb.node("SequenceLength", {"S"}, {"N"});
  mb.node("SequenceAt", {"S", "P"}, {"Item"}).name("at");
  mb.output("S");
  mb.output("N");
  mb.output("Item");
  auto s = mb.session();
  const std::vector<std::pair<std::string, Value>> base = {{"A", vec({1})}, {"B", vec({2, 3})}, {"C", vec({4, 5, 6})}};
  for (int64_t p : {0, 2, -1, -3}) {
    auto feeds = base;
    feeds.emplace_back("P", pos(p));
    auto out = s->run(feeds);
    EXPECT_EQ(items_of(out[0]), (std::vector<std::vector<float>>{{1}, {2, 3}, {4, 5, 6}}));
    EXPECT_EQ(out[1].tensor().data<int64_t>()[0], 3);
    EXPECT_EQ(values(out[2]), items_of(out[0])[p < 0 ? p + 3 : p]) << p;
  }
  for (int64_t p : {3, -4}) {
    auto feeds = base;
    feeds.emplace_back("P", pos(p));
    expect_error_containing([&] { s->run(feeds); }, {"SequenceAt 'at'", "out of range", std::to_string(p).c_str()});
  }
}

TEST(Sequence, InsertAtPositionsAndAppendByDefault) {
  ModelBuilder mb(11);
  sequence_input(mb, "S", DType::Float32);
  mb.input("X", DType::Float32, {1});
  mb.input("P", DType::Int64, {});
  mb.node("SequenceInsert", {"S", "X", "P"}, {"At"});
  mb.node("SequenceInsert", {"S", "X"}, {"Appended"});
  mb.output("At");
  mb.output("Appended");
  auto s = mb.session();
  const Value seq = float_sequence({{1}, {2}});
  auto out = s->run({{"S", seq}, {"X", vec({9})}, {"P", pos(0)}});
  EXPECT_EQ(items_of(out[0]), (std::vector<std::vector<float>>{{9}, {1}, {2}}));
  EXPECT_EQ(items_of(out[1]), (std::vector<std::vector<float>>{{1}, {2}, {9}}));
  out = s->run({{"S", seq}, {"X", vec({9})}, {"P", pos(2)}});  // the append slot is a valid position
  EXPECT_EQ(items_of(out[0]), (std::vector<std::vector<float>>{{1}, {2}, {9}}));
  out = s->run({{"S", seq}, {"X", vec({9})}, {"P", pos(-1)}});
  EXPECT_EQ(items_of(out[0]), (std::vector<std::vector<float>>{{1}, {9}, {2}}));
  EXPECT_EQ(items_of(seq), (std::vector<std::vector<float>>{{1}, {2}})) << "the input sequence must not change";
}

TEST(Sequence, EraseAtPositionsAndTheLastByDefault) {
  ModelBuilder mb(11);
  sequence_input(mb, "S", DType::Float32);
  mb.input("P", DType::Int32, {});
  mb.node("SequenceErase", {"S", "P"}, {"At"}).name("erase_at");
  mb.node("SequenceErase", {"S"}, {"Last"});
  mb.output("At");
  mb.output("Last");
  auto s = mb.session();
  const Value seq = float_sequence({{1}, {2}, {3}});
  auto out = s->run({{"S", seq}, {"P", Tensor::scalar<int32_t>(-3)}});
  EXPECT_EQ(items_of(out[0]), (std::vector<std::vector<float>>{{2}, {3}}));
  EXPECT_EQ(items_of(out[1]), (std::vector<std::vector<float>>{{1}, {2}}));
  expect_error_containing([&] { s->run({{"S", seq}, {"P", Tensor::scalar<int32_t>(3)}}); },
                          {"SequenceErase 'erase_at'", "position 3 is out of range [-3, 2]"});
}

TEST(Sequence, EmptyThenInsertAndLengthZero) {
  ModelBuilder mb(11);
  mb.input("X", DType::Float32, {2});
  mb.node("SequenceEmpty", {}, {"E"});
  mb.node("SequenceLength", {"E"}, {"N0"});
  mb.node("SequenceInsert", {"E", "X"}, {"S"});
  mb.node("SequenceLength", {"S"}, {"N1"});
  mb.output("N0");
  mb.output("N1");
  mb.output("S");
  auto s = mb.session();
  auto out = s->run({{"X", vec({5, 6})}});
  EXPECT_EQ(out[0].tensor().data<int64_t>()[0], 0);
  EXPECT_EQ(out[1].tensor().data<int64_t>()[0], 1);
  EXPECT_EQ(items_of(out[2]), (std::vector<std::vector<float>>{{5, 6}}));

  ModelBuilder bad(11);
  bad.input("P", DType::Int64, {});
  bad.node("SequenceEmpty", {}, {"E"});
  bad.node("SequenceAt", {"E", "P"}, {"Item"}).name("read_empty");
  bad.output("Item");
  auto s2 = bad.session();
  expect_error_containing([&] { s2->run({{"P", pos(0)}}); }, {"SequenceAt 'read_empty'", "empty sequence"});
}

TEST(Sequence, MixedDtypesFailNamingTheNode) {
  ModelBuilder mb(11);
  mb.input("F", DType::Float32, {1});
  mb.input("I", DType::Int64, {1});
  mb.node("SequenceConstruct", {"F", "I"}, {"S"}).name("mixed");
  mb.output("S");
  auto s = mb.session();
  expect_error_containing([&] { s->run({{"F", vec({1})}, {"I", Tensor::from_vector<int64_t>({1}, {1})}}); },
                          {"SequenceConstruct 'mixed'", "int64", "float"});

  ModelBuilder ins(11);
  sequence_input(ins, "S", DType::Float32);
  ins.input("I", DType::Int64, {1});
  ins.node("SequenceInsert", {"S", "I"}, {"T"}).name("insert_int");
  ins.output("T");
  auto s2 = ins.session();
  expect_error_containing([&] { s2->run({{"S", float_sequence({{1}})}, {"I", Tensor::from_vector<int64_t>({1}, {1})}}); },
                          {"SequenceInsert 'insert_int'", "one element type"});
}

TEST(Sequence, NonSequenceInputFailsNamingTheNode) {
  ModelBuilder mb(11);
  mb.input("X", DType::Float32, {1});
  mb.node("SequenceLength", {"X"}, {"N"}).name("len");
  mb.output("N");
  auto s = mb.session();
  expect_error_containing([&] { s->run({{"X", vec({1})}}); }, {"SequenceLength 'len'", "expected a sequence"});
}
