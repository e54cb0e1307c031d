// Cast before opset 6 names the target type as a string ("FLOAT", "INT32"); a name
// outside TensorProto.DataType is refused naming the node and the value.
#include <gtest/gtest.h>

#include "tests/common/nn_test_util.h"

namespace onnxmini {
namespace test {
namespace {

Tensor cast_at(int64_t opset, const std::string& to) {
  ModelBuilder mb(opset);
  mb.input("X", DType::Float32, {3});
  mb.node("Cast", {"X"}, {"Y"}).attr("to", to).name("c");
  mb.output("Y");
  auto s = mb.session();
  return run_single(*s, {{"X", Tensor::from_vector<float>({3}, {1.75f, -2.5f, 0.f})}});
}

TEST(CastOldOpsets, ToIsATypeName) {
  Tensor y = cast_at(1, "INT32");
  ASSERT_EQ(y.dtype(), DType::Int32);
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<int32_t>({3}, {1, -2, 0}), 0, 0));
  y = cast_at(5, "DOUBLE");
  ASSERT_EQ(y.dtype(), DType::Float64);
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<double>({3}, {1.75, -2.5, 0}), 0, 0));
  EXPECT_EQ(cast_at(1, "BOOL").dtype(), DType::Bool);
}

TEST(CastOldOpsets, UnknownTypeNameIsRefused) {
  std::string e = error_message([] { cast_at(1, "float"); });
  EXPECT_NE(e.find("Cast 'c'"), std::string::npos) << e;
  EXPECT_NE(e.find("to = 'float' is not a TensorProto.DataType name"), std::string::npos) << e;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
