// Fusions that recover normalization ops from their decomposed form (level 2, plain ONNX
// results, saved as they are; the table is in graph_optimizer.cc). As in graph_fusion.h,
// every intermediate must have only the pattern's node as reader and must not be a graph
// output; the constants are float32 and checked by value.
//
//   fuse_layer_norm   ReduceMean(X, last axis) -> Sub(X, mean) -> Pow(d, 2) | Mul(d, d)
//                     -> ReduceMean(last axis) -> Add(eps > 0) -> Sqrt -> Div(d, .)
//                     -> Mul(gamma [C]) [-> Add(beta [C])]
//                     -> LayerNormalization(X, gamma, beta, axis -1, epsilon), opset >= 17 only
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void fuse_layer_norm(RuleContext& ctx);

}  // namespace onnxmini
