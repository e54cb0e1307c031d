// The residual fusion (level 2, saved as onnxruntime's com.microsoft FusedConv with its
// 4th input Z; the table is in graph_optimizer.cc):
//
//   fuse_conv_add   Conv -> Add(conv_out, Z) (either operand order) -> Conv with input 3 = Z
//                   (fused_attr::kResidual): Y = act(conv(X, W) + B + Z), Z added in the
//                   Conv's epilogue before any activation a later rule fuses.
//                   A float32 constant Z that adds one value per output channel ([1, M, 1, 1],
//                   [M, 1, 1], one element) is folded into B instead (a plain Conv).
//
// Z must provably have the Conv output's shape (an Add that broadcasts, e.g. a bias-like
// [1, C, 1, 1] constant, is not a residual): either both shapes are declared and fixed,
// or both values are the same "shape class": the same root value reached through ops that
// keep the shape (elementwise activations, BatchNormalization, scalar-constant arithmetic,
// a binary op over two values of one class) and through Convs that keep the spatial size
// (stride 1, padding = dilation * (kernel - 1)), with the same channel count at the end.
// The Conv output must be read by the Add only, and the Conv must not carry an activation
// already (the add must come first). The fused Conv takes the Add's place in the order,
// where Z exists.
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void fuse_conv_add(RuleContext& ctx);

}  // namespace onnxmini
