// Fusions that recover normalization ops from their decomposed form (level 2, plain ONNX
// results, saved as they are; the table is in graph_optimizer.cc). As in graph_fusion.h,
// every intermediate must have only the pattern's node as reader and must not be a graph
// output; the constants are float32 and checked by value.
//
//   fuse_layer_norm   ReduceMean(X, last axis) -> Sub(X, mean) -> Pow(d, 2) | Mul(d, d)
//                     -> ReduceMean(last axis) -> Add(eps > 0) -> Sqrt -> Div(d, .)
//                     -> Mul(gamma [C]) [-> Add(beta [C])]
//                     -> LayerNormalization(X, gamma, beta, axis -1, epsilon), opset >= 17 only
//   fuse_gelu         0.5 * x * (1 + Erf(x / sqrt 2)) (any grouping of the Muls; Div by sqrt 2 or
//                     Mul by 1 / sqrt 2; constants within float32 rounding) -> Gelu, opset >= 20
//
// onnxmini-only results (a saved model keeps the original nodes):
//   fuse_layer_norm_before_opset17  the same pattern in a model importing opset < 17: the
//                     node is LayerNormalization asking for the opset-17 kernel, which such
//                     a model may not name (onnxruntime's own fusion uses a contrib schema)
//   fuse_gelu_before_opset20  likewise for the Gelu pattern (the opset-20 Gelu kernel)
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void fuse_layer_norm(RuleContext& ctx);
void fuse_layer_norm_before_opset17(RuleContext& ctx);
void fuse_gelu(RuleContext& ctx);
void fuse_gelu_before_opset20(RuleContext& ctx);

}  // namespace onnxmini
