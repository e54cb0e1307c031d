// The one-hot embedding fusion (level 2, onnxmini-only: a saved model keeps the original
// nodes; the table is in graph_optimizer.cc):
//
//   fuse_one_hot_matmul  [Expand(X, S) ->] Equal(X, V constant) -> Cast(to float) -> MatMul(., W constant)
//                        [with the bias and activation that gemm_activation put into it]
//                        -> one OneHotMatMul node (domain ai.onnxmini,
//                           kernels/tensor/one_hot_matmul.cc)
//
// TensorFlow and JAX export an embedding lookup as this one-hot product (magika: bytes
// [1, 2048, 1] against 0..256, a [2048, 257] one-hot matrix times a [257, 64] table).
// V: an int32 / int64 constant of shape [N] or [1, .., 1, N] (either Equal operand); W: a
// float32 [N, D] constant with finite values only (0 * inf is NaN: the product would not
// ignore that row); the MatMul may carry a bias (input 2) and an activation other than PRelu
// (gemm_activation's attributes, copied to the fused node). The Expand,
// Equal and Cast outputs are read by the next node only and are no graph outputs. The fused node
// takes the MatMul's place in the order, where X, V and W exist.
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void fuse_one_hot_matmul(RuleContext& ctx);

}  // namespace onnxmini
