// The squeeze-and-excitation fusion (level 2, onnxmini-only: a saved model keeps the
// original nodes; the table is in graph_optimizer.cc):
//
//   fuse_squeeze_excite  GlobalAveragePool(X) -> Conv 1x1 [fused act1] -> Conv 1x1 [fused act2]
//                        -> Mul(X, gate) (either operand order) [-> Add(X, product)]
//                        -> one SqueezeExcite node (domain ai.onnxmini, kernels/nn/squeeze_excite.h)
//
// Both Convs: float32 constant filter with every spatial dimension 1, constant (or no) bias,
// group 1, strides 1, no padding, no other fusion (residual, input affine) than an
// activation, and W2 = C x Cm for W1 = Cm x C. The pool output, the squeezed value, the
// gate and (for the Add form) the product are read by the next node only and are no
// graph outputs. It runs after conv_activation / conv_activation_extra / conv_prelu, so
// the Convs' activations are already in their epilogues; the fused node takes the Mul's
// (or Add's) place in the order, where X and the weights exist.
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void fuse_squeeze_excite(RuleContext& ctx);

}  // namespace onnxmini
