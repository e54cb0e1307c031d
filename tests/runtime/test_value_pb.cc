// read_value_pb / write_value_pb: sequences (of tensors, nested, empty) and
// optionals (empty, holding a tensor or a sequence) survive a round trip, the
// bytes of a sequence parse with the onnx Python package's layout (checked by
// tests/python/test_sequences.py), and a wrong type hint or a map fails.
#include <gtest/gtest.h>

#include <cstdio>

#include "onnxmini/tensor_io.h"
#include "tests/kernels/sequence/sequence_test_util.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

// Structural equality of two values (tensors exactly).
bool same(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  if (a.is_tensor()) return tensors_near(a.tensor(), b.tensor(), 0, 0);
  if (a.is_sequence()) {
    if (a.sequence_items().size() != b.sequence_items().size()) return false;
    for (size_t i = 0; i < a.sequence_items().size(); ++i)
      if (!same(a.sequence_items()[i], b.sequence_items()[i])) return false;
    return true;
  }
  if (a.is_optional())
    return a.has_element() == b.has_element() && (!a.has_element() || same(a.optional_element(), b.optional_element()));
  return a.is_none();
}

}  // namespace

TEST(ValuePb, SequencesRoundTrip) {
  const Value seq = float_sequence({{1, 2}, {3}, {}});
  std::string name;
  const Value back = parse_value_pb(serialize_value_pb(seq, "S"), "seq(tensor(float))", &name);
  EXPECT_EQ(name, "S");
  EXPECT_TRUE(same(seq, back));

  const Value nested = Value::sequence({seq, Value::sequence({})});
  EXPECT_TRUE(same(nested, parse_value_pb(serialize_value_pb(nested), "seq(seq(tensor(float)))")));
  EXPECT_TRUE(same(Value::sequence({}), parse_value_pb(serialize_value_pb(Value::sequence({})), "seq(tensor(float))")));
}

TEST(ValuePb, OptionalsRoundTripThroughAFile) {
  const std::string path = testing::TempDir() + "/onnxmini_value_pb_optional.pb";
  for (const Value& v : {Value::optional(), Value::optional(Tensor::from_vector<int64_t>({2}, {4, 5})),
                         Value::optional(float_sequence({{1}}))}) {
    SCOPED_TRACE(v.type_string());
    write_value_pb(path, v, "O");
    std::string name;
    const Value back = read_value_pb(path, "optional(tensor(int64))", &name);
    EXPECT_EQ(name, "O");
    EXPECT_TRUE(same(v, back));
  }
  std::remove(path.c_str());
}

TEST(ValuePb, TensorsStayTensorProtos) {
  const Tensor t = Tensor::from_vector<float>({2}, {1, 2});
  EXPECT_EQ(serialize_value_pb(t, "X"), serialize_tensor_pb(t, "X"));
  EXPECT_TRUE(same(t, parse_value_pb(serialize_value_pb(t), "tensor(float)")));
}

TEST(ValuePb, MapsAndGarbageFail) {
  Map m{Tensor::from_vector<int64_t>({1}, {1}), Tensor::from_vector<float>({1}, {2})};
  EXPECT_THROW(serialize_value_pb(Value::map(m)), Error);
  expect_error_containing([] { parse_value_pb(std::string("\x1a\x05\x01", 3), "seq(tensor(float))"); },
                          {"SequenceProto", "runs past the end"});
}
