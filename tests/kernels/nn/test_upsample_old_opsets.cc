// Upsample-1 (experimental): N x C x H x W scaled by height_scale / width_scale, modes
// nearest and "bilinear"; it must equal Upsample-7 with scales (1, 1, h, w).
#include <gtest/gtest.h>

#include "tests/common/nn_test_util.h"

namespace onnxmini {
namespace test {
namespace {

Tensor upsample_at(int64_t opset, const std::string& mode, const Tensor& x, KernelMode m) {
  ModelBuilder mb(opset);
  mb.input("X", DType::Float32, x.shape());
  NodeBuilder n = mb.node("Upsample", {"X"}, {"Y"}).attr("mode", mode).name("up");
  if (opset < 7) n.attr("height_scale", 2.0f).attr("width_scale", 3.0f);
  else n.attr("scales", std::vector<float>{1, 1, 2, 3});
  mb.output("Y");
  auto s = mb.session(options_for(m));
  return run_single(*s, {{"X", x}});
}

TEST(UpsampleOldOpsets, Upsample1MatchesUpsample7) {
  const Tensor x = random_tensor(DType::Float32, {1, 2, 3, 2}, 3);
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    Tensor nearest = upsample_at(1, "nearest", x, m);
    EXPECT_EQ(nearest.shape(), (Shape{1, 2, 6, 6}));
    EXPECT_TRUE(tensors_near(nearest, upsample_at(7, "nearest", x, m), 0, 0));
    // Nearest with floor: output (0, 0, 1, 2) reads input (0, 0, 0, 0).
    EXPECT_EQ(nearest.data<float>()[1 * 6 + 2], x.data<float>()[0]);
    EXPECT_TRUE(tensors_near(upsample_at(1, "bilinear", x, m), upsample_at(7, "linear", x, m), 0, 0));
  }
}

TEST(UpsampleOldOpsets, Upsample1NeedsBothScales) {
  ModelBuilder mb(1);
  mb.input("X", DType::Float32, {1, 1, 2, 2});
  mb.node("Upsample", {"X"}, {"Y"}).attr("height_scale", 2.0f).name("up");
  mb.output("Y");
  std::string e = error_message([&] { auto s = mb.session(); });
  EXPECT_NE(e.find("attributes height_scale and width_scale are required"), std::string::npos) << e;
  EXPECT_NE(e.find("'up'"), std::string::npos) << e;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
