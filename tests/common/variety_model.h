// One small model with a node of every kernel family that reports a choice of
// path (kernel_variant) or an ISA: Conv, Relu, Transpose, ReduceSum, ArgMax, Add,
// Softmax, MatMul (prepacked), Sigmoid, Gemm, ReduceMean + ReduceMax (fused into
// ai.onnxmini ReduceMeanMax at level 2 and above, Conv + Relu likewise), Attention
// and RMSNormalization. The profiler's variant tests and Session::explain's tests
// run it.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {

inline ModelBuilder variety_model() {
  ModelBuilder mb(23);  // Attention and RMSNormalization: opset 23
  mb.input("X", DType::Float32, {2, 16, 8, 8});
  mb.input("V", DType::Float32, {64, 32});
  mb.input("Q", DType::Float32, {1, 2, 24, 16});
  mb.initializer("W", random_tensor(DType::Float32, {16, 16, 3, 3}, 3));
  mb.initializer("B", random_tensor(DType::Float32, {32, 48}, 4));
  mb.initializer("G", random_tensor(DType::Float32, {48, 40}, 5));
  mb.initializer("scale", random_tensor(DType::Float32, {32}, 6));
  mb.initializer("axes", Tensor::from_vector<int64_t>({1}, {3}));
  // X [2,16,8,8] -> Conv -> Relu -> Transpose(NHWC) -> ReduceSum(axis 3) -> ArgMax
  mb.node("Conv", {"X", "W"}, {"c"}).name("conv").attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  mb.node("Relu", {"c"}, {"r"}).name("relu");
  mb.node("Transpose", {"r"}, {"t"}).name("transpose").attr("perm", std::vector<int64_t>{0, 2, 3, 1});
  mb.node("ReduceSum", {"t", "axes"}, {"s"}).name("reduce").attr("keepdims", 0);
  mb.node("ArgMax", {"s"}, {"am"}).name("argmax").attr("axis", 2);
  // Mean and max of one tensor over one axis (CBAM-style): one ReduceMeanMax when optimized.
  mb.node("ReduceMean", {"r", "axes"}, {"rmean"}).name("reduce_mean").attr("keepdims", 1);
  mb.node("ReduceMax", {"r", "axes"}, {"rmax"}).name("reduce_max").attr("keepdims", 1);
  // V [64,32] -> Add -> Softmax -> MatMul (constant B) -> Sigmoid -> Gemm (constant G)
  mb.node("Add", {"V", "V"}, {"a"}).name("add");
  mb.node("Softmax", {"a"}, {"sm"}).name("softmax");
  mb.node("RMSNormalization", {"sm", "scale"}, {"rms"}).name("rmsnorm");
  mb.node("MatMul", {"rms", "B"}, {"mm"}).name("matmul");
  mb.node("Sigmoid", {"mm"}, {"sg"}).name("sigmoid");
  mb.node("Gemm", {"sg", "G"}, {"gm"}).name("gemm");
  // Self-attention of Q [1,2,24,16] (4-D: batch, heads, sequence, head size).
  mb.node("Attention", {"Q", "Q", "Q"}, {"att"}).name("attention");
  mb.output("am");
  mb.output("rmean");
  mb.output("rmax");
  mb.output("gm");
  mb.output("att");
  return mb;
}

inline std::vector<std::pair<std::string, Tensor>> variety_feeds() {
  return {{"X", random_tensor(DType::Float32, {2, 16, 8, 8}, 1)},
          {"V", random_tensor(DType::Float32, {64, 32}, 2)},
          {"Q", random_tensor(DType::Float32, {1, 2, 24, 16}, 7)}};
}

// Nodes of variety_model() at level 0 (each runs as one kernel_time event).
constexpr size_t kVarietyNodes = 14;

}  // namespace test
}  // namespace onnxmini
