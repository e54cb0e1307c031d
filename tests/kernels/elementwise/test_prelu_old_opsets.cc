// PRelu before opset 7: a 1-D slope of size C runs along the channel axis (axis 1),
// not numpy-aligned to the last axis as from opset 7 on; a size-1 slope is shared.
#include <gtest/gtest.h>

#include "tests/common/nn_test_util.h"

namespace onnxmini {
namespace test {
namespace {

Tensor prelu_at(int64_t opset, const Tensor& x, const Tensor& slope, KernelMode mode) {
  ModelBuilder mb(opset);
  mb.input("X", DType::Float32, x.shape());
  mb.initializer("slope", slope);
  mb.node("PRelu", {"X", "slope"}, {"Y"}).name("p");
  mb.output("Y");
  auto s = mb.session(options_for(mode));
  return run_single(*s, {{"X", x}});
}

TEST(PReluOldOpsets, SlopeOfSizeCIsPerChannel) {
  // X is 1 x 2 x 2 (C = 2 = last dim, where numpy and per-channel broadcasting disagree).
  const Tensor x = Tensor::from_vector<float>({1, 2, 2}, {-1, -2, -3, 4});
  const Tensor slope = Tensor::from_vector<float>({2}, {10, 100});
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    for (int64_t opset : {1, 6})
      EXPECT_TRUE(tensors_near(prelu_at(opset, x, slope, m), Tensor::from_vector<float>({1, 2, 2}, {-10, -20, -300, 4})))
          << "opset " << opset;
    // Opset 7 broadcasts numpy-style: the slope runs along the last axis.
    EXPECT_TRUE(tensors_near(prelu_at(7, x, slope, m), Tensor::from_vector<float>({1, 2, 2}, {-10, -200, -30, 4})));
  }
}

TEST(PReluOldOpsets, SharedSlopeAndErrors) {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  EXPECT_TRUE(tensors_near(prelu_at(6, x, Tensor::from_vector<float>({1}, {0.5f}), KernelMode::Fast),
                           Tensor::from_vector<float>({2, 3}, {-0.5f, 2, -1.5f, 4, -2.5f, 6})));
  // A 1-D slope of a size other than 1 or C is refused with the shapes.
  std::string e = error_message([&] { prelu_at(6, x, Tensor::from_vector<float>({2}, {1, 2}), KernelMode::Fast); });
  EXPECT_NE(e.find("PRelu 'p': shapes 2x3 and 2 cannot broadcast"), std::string::npos) << e;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
