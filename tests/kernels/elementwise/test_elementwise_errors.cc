// Every error the element-wise kernels report: the message names the node
// ("Add 'n1'") and the offending value.
#include <gtest/gtest.h>

#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

// The message is not empty and contains every listed part.
#define EXPECT_ERROR(msg, ...)                                                                 \
  do {                                                                                         \
    const std::string m_ = (msg);                                                              \
    EXPECT_FALSE(m_.empty()) << "no error";                                                    \
    for (const char* part : {__VA_ARGS__}) EXPECT_NE(m_.find(part), std::string::npos) << m_; \
  } while (0)

TEST(ElementwiseErrors, BroadcastMismatch) {
  Tensor a = random_values(DType::Float32, {2, 3}, 1);
  Tensor b = random_values(DType::Float32, {4, 3}, 2);
  EXPECT_ERROR(op_error(14, "Add", {a, b}), "Add 'n1'", "2x3", "4x3", "cannot broadcast");
  EXPECT_ERROR(op_error(13, "Sum", {a, a, b}), "Sum 'n1'", "cannot broadcast");
  Tensor c = random_values(DType::Bool, {5}, 3);
  EXPECT_ERROR(op_error(16, "Where", {c, a, a}), "Where 'n1'", "cannot broadcast");
}

TEST(ElementwiseErrors, DtypeMismatch) {
  Tensor f = random_values(DType::Float32, {3}, 1);
  Tensor d = random_values(DType::Float64, {3}, 2);
  EXPECT_ERROR(op_error(14, "Mul", {f, d}), "Mul 'n1'", "different dtypes", "float", "double");
  EXPECT_ERROR(op_error(13, "Equal", {f, d}), "Equal 'n1'", "different dtypes");
  EXPECT_ERROR(op_error(13, "Max", {f, d}), "Max 'n1'", "input 1 has dtype double");
  EXPECT_ERROR(op_error(16, "Where", {random_values(DType::Bool, {3}, 3), f, d}), "Where 'n1'", "different dtypes");
  EXPECT_ERROR(op_error(16, "Where", {f, f, f}), "Where 'n1'", "condition has dtype float");
}

TEST(ElementwiseErrors, UnsupportedDtype) {
  Tensor i = random_values(DType::Int32, {3}, 1);
  EXPECT_ERROR(op_error(13, "Sqrt", {i}), "Sqrt 'n1'", "int32", "supported: float");
  EXPECT_ERROR(op_error(7, "And", {i, i}), "And 'n1'", "int32", "supported: bool");
  EXPECT_ERROR(op_error(13, "Sum", {i, i}), "Sum 'n1'", "int32");
}

TEST(ElementwiseErrors, IntegerDivisionByZero) {
  Tensor a = Tensor::from_vector<int64_t>({3}, {1, 2, 3});
  Tensor b = Tensor::from_vector<int64_t>({3}, {1, 0, 3});
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    EXPECT_ERROR(error_message([&] { run_op(14, "Div", {a, b}, nullptr, mode); }), "Div 'n1'",
                 "integer division by zero", "element 1");
    EXPECT_ERROR(error_message([&] { run_op(13, "Mod", {a, b}, nullptr, mode); }), "Mod 'n1'",
                 "integer division by zero");
  }
  // Float division by zero is IEEE (inf), not an error.
  Tensor fa = Tensor::from_vector<float>({1}, {1.f});
  Tensor fb = Tensor::from_vector<float>({1}, {0.f});
  EXPECT_EQ(op_error(14, "Div", {fa, fb}), "");
}

TEST(ElementwiseErrors, ModFloatNeedsFmod) {
  Tensor f = random_values(DType::Float32, {3}, 1);
  EXPECT_ERROR(op_error(13, "Mod", {f, f}), "Mod 'n1'", "fmod=0", "float");
}

TEST(ElementwiseErrors, PReluSlopeMustBroadcastToX) {
  Tensor x = random_values(DType::Float32, {2, 3}, 1);
  Tensor s = random_values(DType::Float32, {4, 2, 3}, 2);  // broadcasts, but to a larger shape than X
  EXPECT_ERROR(op_error(16, "PRelu", {x, s}), "PRelu 'n1'", "slope of shape 4x2x3", "X of shape 2x3");
}

TEST(ElementwiseErrors, ClipBoundsMustBeScalarsOfXType) {
  Tensor x = random_values(DType::Float32, {3}, 1);
  EXPECT_ERROR(op_error(13, "Clip", {x, random_values(DType::Float32, {2}, 2)}), "Clip 'n1'", "min must be a scalar");
  EXPECT_ERROR(op_error(13, "Clip", {x, Tensor(), Tensor::scalar<double>(1)}), "Clip 'n1'", "max has dtype double");
}

TEST(ElementwiseErrors, LegacyBroadcastRules) {
  Tensor a = random_values(DType::Float32, {2, 3}, 1);
  Tensor b = random_values(DType::Float32, {3}, 2);
  EXPECT_ERROR(op_error(6, "Add", {a, b}), "Add 'n1'", "broadcast=0");
  EXPECT_ERROR(op_error(6, "Add", {a, b}, [](NodeBuilder& n) { n.attr("broadcast", 1).attr("axis", 0); }),
               "Add 'n1'", "does not match");
}

TEST(ElementwiseErrors, BadAttributes) {
  Tensor u = Tensor::from_vector<uint8_t>({1}, {1});
  EXPECT_ERROR(op_error(11, "BitShift", {u, u}, [](NodeBuilder& n) { n.attr("direction", "UP"); }), "BitShift 'n1'",
               "direction must be LEFT or RIGHT");
  Tensor f = random_values(DType::Float32, {3}, 1);
  EXPECT_ERROR(op_error(20, "Gelu", {f}, [](NodeBuilder& n) { n.attr("approximate", "fast"); }), "Gelu 'n1'",
               "approximate");
  // 27 (FLOAT6E2M3 in onnx 1.23) is past the types this runtime stores (float8 / int4 / int2 / e8m0
  // are supported since issue #13).
  EXPECT_ERROR(op_error(19, "Cast", {f}, [](NodeBuilder& n) { n.attr("to", int64_t{27}); }), "Cast 'n1'",
               "type 27", "not supported");
}

TEST(ElementwiseErrors, CastStringThatIsNotANumber) {
  Tensor s = Tensor::from_vector<std::string>({2}, {"1", "abc"});
  EXPECT_ERROR(op_error(13, "Cast", {s}, [](NodeBuilder& n) { n.attr("to", static_cast<int64_t>(DType::Int32)); }),
               "Cast 'n1'", "'abc'", "element 1");
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
