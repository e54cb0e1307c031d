// Checks the test helper itself on an op that exists since the foundation (Relu).
#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {
namespace {

TEST(ModelBuilder, BuildsAndRunsOneNode) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3});
  mb.node("Relu", {"X"}, {"Y"}).name("r1");
  mb.output("Y");
  auto s = mb.session();
  Tensor x = Tensor::from_vector<float>({2, 3}, {-1, 2, -3, 4, 0, -0.5f});
  Tensor y = run_single(*s, {{"X", x}});
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({2, 3}, {0, 2, 0, 4, 0, 0})));
  EXPECT_FALSE(tensors_near(y, Tensor::from_vector<float>({2, 3}, {0, 2, 0, 4, 0, 1})));
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
