// Transpose / Reshape sinking (level 1, plain ONNX, every value bit for bit; the table
// is in graph_optimizer.cc). Layout converters (tf2onnx, paddle2onnx) leave chains like
// Transpose(NHWC->NCHW) -> Relu -> Add(bias) -> Transpose(NCHW->NHWC): the elementwise
// ops in between commute with the Transposes, so moving the first Transpose down the
// chain makes it meet the second: the two become one Transpose (which cancel_transposes
// removes when they undo each other). The rules only move a Transpose / Reshape when it
// meets another one, so the number of Transposes executed never grows.
//
//   sink_transpose        Transpose(x, p) -> elementwise ops -> Transpose(q)
//                           => ops(x) -> Transpose(p then q) (identity: cancel_transposes drops it)
//                         Each op in the chain: a unary elementwise op (extra inputs scalar
//                         constants: Clip's bounds), or a binary elementwise op whose other
//                         operand is a constant (permuted by the inverse of p after being
//                         unsqueezed to full rank) or a scalar.
//                         A Transpose with several readers sinks when every reader leads
//                         that way to a Transpose (or is one): each end absorbs p.
//                         Op(Transpose(a, p), Transpose(b, p)), a and b of the same declared
//                           shape => Transpose(Op(a, b), p): one Transpose instead of two.
//   sink_reshape          Reshape(x, s1) -> unary elementwise ops -> Reshape(s2), s2 a constant
//                           without 0 (or allowzero) => ops(x) -> Reshape(s2)
//   sink_reshape_bias     Add(Reshape(x, s), bias) [-> unary elementwise ops], bias constant
//                           [1, .., 1, N], s's last entry N = x's last dim (declared, or x =
//                           MatMul / Gemm with constant B), s constant or Concat(.., [N])
//                           => Add(x, bias as [N]) [-> ops] -> Reshape(s): the MatMul meets its
//                           bias Add (matmul_add_gemm, gemm_activation fuse them at level 2)
//   transpose_to_reshape  Transpose(x, p) that moves only axes of size 1 (x's declared shape)
//                           => Reshape (a view of x's buffer: no copy)
//
// Every intermediate value of a chain must have exactly one reader (not a graph output,
// not read by a subgraph); values whose shape changes lose their declared value_info.
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void sink_transpose(RuleContext& ctx);
void sink_reshape(RuleContext& ctx);
void sink_reshape_bias(RuleContext& ctx);
void transpose_to_reshape(RuleContext& ctx);

}  // namespace onnxmini
