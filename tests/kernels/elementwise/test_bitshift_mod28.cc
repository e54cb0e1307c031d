// BitShift on signed integers (arithmetic right shift, bits past the sign bit
// dropped on the left, out-of-range shift amounts per the opset 28 schema) and
// Mod-28 with fmod=0 on floats (numpy.mod: the divisor's sign, signed zeros),
// against references written here.
#include <cmath>

#include "tests/common/op_test_util.h"
#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

TEST(BitShiftSigned, EveryWidthAgainstReference) {
  const std::vector<int64_t> xs = {5, -5, -128, 127, -1, 64};
  const std::vector<int64_t> ys = {1, 2, 7, -1, 8, 70};
  for (const std::string dir : {"LEFT", "RIGHT"}) {
    auto set = [&](NodeBuilder& n) { n.attr("direction", dir); };
    auto y = run_node("BitShift", 11, {Tensor::from_vector<int8_t>({6}, {5, -5, -128, 127, -1, 64}),
                                       Tensor::from_vector<int8_t>({6}, {1, 2, 7, -1, 8, 70})},
                      set, 1, KernelMode::Fast)[0];
    for (size_t i = 0; i < xs.size(); ++i) {
      int8_t want;
      if (ys[i] < 0 || ys[i] >= 8) want = (dir == "RIGHT" && xs[i] < 0) ? -1 : 0;
      else if (dir == "LEFT") want = static_cast<int8_t>(static_cast<uint8_t>(xs[i]) << ys[i]);
      else want = static_cast<int8_t>(static_cast<int8_t>(xs[i]) >> ys[i]);
      EXPECT_EQ(y.data<int8_t>()[i], want) << dir << " " << xs[i] << " by " << ys[i];
    }
  }
  auto y = run_node("BitShift", 11, {Tensor::from_vector<int64_t>({2}, {INT64_MIN, -8}), i64({63, 1})},
                    [](NodeBuilder& n) { n.attr("direction", "RIGHT"); }, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{-1, -4}));
}

TEST(Mod28, FloorModOnFloats) {
  const std::vector<float> a = {5.5f, -5.5f, 5.5f, -5.5f, 0.f, -0.f, 3.f, -3.f};
  const std::vector<float> b = {2.f, 2.f, -2.f, -2.f, -3.f, 3.f, INFINITY, INFINITY};
  auto y = run_node("Mod", 28, {Tensor::from_vector<float>({8}, a), Tensor::from_vector<float>({8}, b)}, nullptr, 1,
                    KernelMode::Fast)[0];
  for (size_t i = 0; i < a.size(); ++i) {
    // numpy.mod: a - floor(a / b) * b, zero results carry b's sign, x mod inf of the other sign is inf.
    float want = std::fmod(a[i], b[i]);
    if (want != 0 && ((want < 0) != (b[i] < 0))) want += b[i];
    if (want == 0) want = std::copysign(0.f, b[i]);
    EXPECT_EQ(y.data<float>()[i], want) << a[i] << " mod " << b[i];
    EXPECT_EQ(std::signbit(y.data<float>()[i]), std::signbit(want)) << a[i] << " mod " << b[i];
  }
  EXPECT_EQ(y.data<float>()[0], 1.5f);
  EXPECT_EQ(y.data<float>()[1], 0.5f);
  EXPECT_EQ(y.data<float>()[7], INFINITY);
  auto msg = op_error(13, "Mod", {Tensor::from_vector<float>({1}, {1.f}), Tensor::from_vector<float>({1}, {1.f})});
  EXPECT_NE(msg.find("fmod=0 is not allowed for float inputs before opset 28"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
