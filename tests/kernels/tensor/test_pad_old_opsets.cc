// Pad 1 names its pads attribute `paddings` (same begin..., end... layout as opset 2's `pads`).
#include <gtest/gtest.h>

#include "tests/common/nn_test_util.h"

namespace onnxmini {
namespace test {
namespace {

TEST(PadOldOpsets, Pad1ReadsPaddings) {
  std::vector<Tensor> outs;
  for (int64_t opset : {1, 2}) {
    ModelBuilder mb(opset);
    mb.input("X", DType::Float32, {2, 2});
    mb.node("Pad", {"X"}, {"Y"}).attr(opset == 1 ? "paddings" : "pads", std::vector<int64_t>{0, 1, 1, 0})
        .attr("value", 9.0f);
    mb.output("Y");
    auto s = mb.session();
    outs.push_back(run_single(*s, {{"X", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}}));
  }
  // One column before, one row after, filled with 9.
  const Tensor expect = Tensor::from_vector<float>({3, 3}, {9, 1, 2, 9, 3, 4, 9, 9, 9});
  EXPECT_TRUE(tensors_near(outs[0], expect, 0, 0));
  EXPECT_TRUE(tensors_near(outs[1], expect, 0, 0));
}

TEST(PadOldOpsets, Pad1WithoutPaddingsIsRefused) {
  ModelBuilder mb(1);
  mb.input("X", DType::Float32, {2, 2});
  mb.node("Pad", {"X"}, {"Y"}).attr("pads", std::vector<int64_t>{0, 1, 1, 0}).name("p");
  mb.output("Y");
  std::string e = error_message([&] { auto s = mb.session(); });
  EXPECT_NE(e.find("paddings"), std::string::npos) << e;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
