// Fusions that recover normalization ops from their decomposed form (level 2, plain ONNX
// results, saved as they are; the table is in graph_optimizer.cc). As in graph_fusion.h,
// every intermediate must have only the pattern's node as reader and must not be a graph
// output; the constants are float32 and checked by value.
//
//   fuse_layer_norm   ReduceMean(X, last axis) -> Sub(X, mean) -> Pow(d, 2) | Mul(d, d)
//                     -> ReduceMean(last axis) -> Add(eps > 0) -> Sqrt -> Div(d, .)
//                     -> Mul(gamma [C]) [-> Add(beta [C])]
//                     -> LayerNormalization(X, gamma, beta, axis -1, epsilon), opset >= 17 only
//
// onnxmini-only result (a saved model keeps the original nodes):
//   fuse_layer_norm_before_opset17  the same pattern in a model importing opset < 17: the
//                     node is LayerNormalization asking for the opset-17 kernel, which such
//                     a model may not name (onnxruntime's own fusion uses a contrib schema)
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void fuse_layer_norm(RuleContext& ctx);
void fuse_layer_norm_before_opset17(RuleContext& ctx);

}  // namespace onnxmini
