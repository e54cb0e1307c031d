// Gemm before opset 7: C broadcasts only with broadcast=1; with broadcast=0 (the
// default) it must be exactly M x N, and a row C is refused naming the node.
#include <gtest/gtest.h>

#include "tests/common/nn_test_util.h"

namespace onnxmini {
namespace test {
namespace {

// [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50], alpha 2, beta 0.5.
Tensor gemm_at(int64_t opset, const Tensor& c, int64_t broadcast, KernelMode mode) {
  ModelBuilder mb(opset);
  mb.input("A", DType::Float32, {2, 2});
  mb.initializer("B", Tensor::from_vector<float>({2, 2}, {5, 6, 7, 8}));
  mb.initializer("C", c);
  NodeBuilder n = mb.node("Gemm", {"A", "B", "C"}, {"Y"}).attr("alpha", 2.0f).attr("beta", 0.5f).name("g");
  if (broadcast >= 0) n.attr("broadcast", broadcast);
  mb.output("Y");
  auto s = mb.session(options_for(mode));
  return run_single(*s, {{"A", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}});
}

TEST(GemmOldOpsets, Broadcast1BroadcastsARow) {
  const Tensor row = Tensor::from_vector<float>({2}, {2, 4});
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference})
    for (int64_t opset : {1, 6})
      EXPECT_TRUE(tensors_near(gemm_at(opset, row, 1, m), Tensor::from_vector<float>({2, 2}, {39, 46, 87, 102})))
          << "opset " << opset;
}

TEST(GemmOldOpsets, Broadcast0TakesAFullC) {
  const Tensor full = Tensor::from_vector<float>({2, 2}, {2, 4, 6, 8});
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference})
    for (int64_t broadcast : {-1, 0})  // -1: attribute absent, default 0
      EXPECT_TRUE(tensors_near(gemm_at(6, full, broadcast, m), Tensor::from_vector<float>({2, 2}, {39, 46, 89, 104})));
}

TEST(GemmOldOpsets, Broadcast0RefusesARow) {
  const Tensor row = Tensor::from_vector<float>({2}, {2, 4});
  for (int64_t broadcast : {-1, 0}) {
    std::string e = error_message([&] { gemm_at(6, row, broadcast, KernelMode::Fast); });
    EXPECT_NE(e.find("Gemm 'g': C has shape 2, expected 2x2: before opset 7 C broadcasts only with broadcast=1"),
              std::string::npos) << e;
  }
  // Opset 7 dropped the attribute: the same row broadcasts.
  EXPECT_TRUE(tensors_near(gemm_at(7, row, -1, KernelMode::Fast), Tensor::from_vector<float>({2, 2}, {39, 46, 87, 102})));
}

// Before opset 11 the spec requires C, but a model that leaves it out (exporters of
// the time never did; hand-written models may) loads and runs as C = 0 rather than
// failing: what opset 11 made official.
TEST(GemmOldOpsets, MissingCBeforeOpset11IsZero) {
  for (int64_t opset : {1, 6, 7, 9})
    for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
      ModelBuilder mb(opset);
      mb.input("A", DType::Float32, {2, 2});
      mb.initializer("B", Tensor::from_vector<float>({2, 2}, {5, 6, 7, 8}));
      mb.node("Gemm", {"A", "B"}, {"Y"}).attr("alpha", 2.0f).name("g");
      mb.output("Y");
      auto s = mb.session(options_for(m));
      EXPECT_TRUE(tensors_near(run_single(*s, {{"A", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}}),
                               Tensor::from_vector<float>({2, 2}, {38, 44, 86, 100})))
          << "opset " << opset;
    }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
