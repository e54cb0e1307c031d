// Split 1 takes the sizes from an optional second input (typed like the data, so float
// sizes are read as whole numbers) or the attribute; Tile 1 repeats `tiles` times along
// `axis`, both scalar inputs.
#include <gtest/gtest.h>

#include "tests/common/nn_test_util.h"

namespace onnxmini {
namespace test {
namespace {

TEST(SplitOldOpsets, Split1SizesFromInputOrAttribute) {
  const Tensor x = Tensor::from_vector<float>({5}, {1, 2, 3, 4, 5});
  for (bool from_input : {true, false}) {
    ModelBuilder mb(1);
    mb.input("X", DType::Float32, {5});
    if (from_input) {
      mb.initializer("S", Tensor::from_vector<float>({2}, {2, 3}));
      mb.node("Split", {"X", "S"}, {"A", "B"}).attr("axis", int64_t{0});
    } else {
      mb.node("Split", {"X"}, {"A", "B"}).attr("axis", int64_t{0}).attr("split", std::vector<int64_t>{2, 3});
    }
    mb.output("A").output("B");
    auto s = mb.session();
    auto out = run_all(*s, {{"X", x}});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(tensors_near(out[0], Tensor::from_vector<float>({2}, {1, 2}), 0, 0)) << from_input;
    EXPECT_TRUE(tensors_near(out[1], Tensor::from_vector<float>({3}, {3, 4, 5}), 0, 0)) << from_input;
  }
}

TEST(SplitOldOpsets, Split1RefusesFractionalSizes) {
  ModelBuilder mb(1);
  mb.input("X", DType::Float32, {5});
  mb.initializer("S", Tensor::from_vector<float>({2}, {2.5f, 2.5f}));
  mb.node("Split", {"X", "S"}, {"A", "B"}).name("sp");
  mb.output("A").output("B");
  std::string e = error_message([&] { auto s = mb.session(); run_all(*s, {{"X", random_tensor(DType::Float32, {5}, 1)}}); });
  EXPECT_NE(e.find("Split 'sp': split holds 2.5, which is not a whole number"), std::string::npos) << e;
}

TEST(TileOldOpsets, Tile1RepeatsAlongOneAxis) {
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    ModelBuilder mb(1);
    mb.input("X", DType::Float32, {2, 2});
    mb.initializer("tiles", Tensor::from_vector<float>({}, {3}));
    mb.initializer("axis", Tensor::from_vector<float>({}, {1}));
    mb.node("Tile", {"X", "tiles", "axis"}, {"Y"});
    mb.output("Y");
    auto s = mb.session(options_for(m));
    Tensor y = run_single(*s, {{"X", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}});
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({2, 6}, {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}), 0, 0));
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
