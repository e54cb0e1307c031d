// BatchNormalization and InstanceNormalization before opset 7: is_test, momentum and
// consumed_inputs are accepted, spatial=1 normalises per channel, and a node with
// only Y runs in inference (the old spec's "Output case #2: Y (test mode)").
#include <gtest/gtest.h>

#include <functional>

#include "tests/common/nn_test_util.h"

namespace onnxmini {
namespace test {
namespace {

// The BatchNormHandComputed case (eps 0: exact values) at an old opset with `setup`'s attributes.
Tensor batch_norm_at(int64_t opset, KernelMode mode, const std::function<void(NodeBuilder)>& setup) {
  ModelBuilder mb(opset);
  mb.input("X", DType::Float32, {1, 2, 1, 2});
  mb.initializer("s", Tensor::from_vector<float>({2}, {2, 3}));
  mb.initializer("b", Tensor::from_vector<float>({2}, {1, -1}));
  mb.initializer("m", Tensor::from_vector<float>({2}, {1, 2}));
  mb.initializer("v", Tensor::from_vector<float>({2}, {4, 9}));
  setup(mb.node("BatchNormalization", {"X", "s", "b", "m", "v"}, {"Y"}).attr("epsilon", 0.0f).name("bn"));
  mb.output("Y");
  auto s = mb.session(options_for(mode));
  return run_single(*s, {{"X", Tensor::from_vector<float>({1, 2, 1, 2}, {3, 5, 8, 5})}});
}

TEST(NormOldOpsets, BatchNorm6SpatialIsPerChannel) {
  const Tensor expect = Tensor::from_vector<float>({1, 2, 1, 2}, {3, 5, 5, 2});
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    EXPECT_TRUE(tensors_near(batch_norm_at(6, m, [](NodeBuilder n) {
      n.attr("is_test", int64_t{1}).attr("spatial", int64_t{1}).attr("momentum", 0.9f);
    }), expect));
    // spatial defaults to 1 and is_test to 0; with only Y requested the node is in test mode.
    EXPECT_TRUE(tensors_near(batch_norm_at(6, m, [](NodeBuilder) {}), expect));
    // Opset 1's consumed_inputs (a legacy in-place hint) changes nothing.
    EXPECT_TRUE(tensors_near(batch_norm_at(1, m, [](NodeBuilder n) {
      n.attr("is_test", int64_t{1}).attr("consumed_inputs", std::vector<int64_t>{0, 0, 0, 1, 1});
    }), expect));
  }
}

TEST(NormOldOpsets, BatchNorm6SpatialZeroWantsPerElementParameters) {
  // spatial=0 normalises per (c, d) element, so 1-D per-channel parameters are refused by name.
  std::string e = error_message([] { batch_norm_at(6, KernelMode::Fast, [](NodeBuilder n) { n.attr("spatial", int64_t{0}); }); });
  EXPECT_NE(e.find("BatchNormalization 'bn': scale has shape 2, expected 2x1x2"), std::string::npos) << e;
}

TEST(NormOldOpsets, InstanceNorm1MatchesInstanceNorm6) {
  const Shape xs{2, 3, 5};
  Tensor x = random_tensor(DType::Float32, xs, 7);
  std::vector<Tensor> outs;
  for (int64_t opset : {1, 6}) {
    ModelBuilder mb(opset);
    mb.input("X", DType::Float32, xs);
    mb.initializer("s", random_tensor(DType::Float32, {3}, 1)).initializer("b", random_tensor(DType::Float32, {3}, 2));
    NodeBuilder n = mb.node("InstanceNormalization", {"X", "s", "b"}, {"Y"});
    if (opset == 1) n.attr("consumed_inputs", std::vector<int64_t>{0, 0, 0});
    mb.output("Y");
    auto s = mb.session();
    outs.push_back(run_single(*s, {{"X", x}}));
  }
  EXPECT_TRUE(tensors_near(outs[0], outs[1], 0, 0));
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
