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
//
// The forms other exporters write (graph_fusion_norm_exports.cc), each with the same
// before-opset variant (onnxmini-only, saved as the original nodes):
//   fuse_layer_norm_tf  TF / Keras: mean = GlobalAveragePool | ReduceMean(last axis), d = X - mean,
//                     var = the same mean of d * d | Pow(d, 2), s = Reciprocal(Sqrt(var + eps)) |
//                     Div(1, .), sg = s * gamma [C] (scale=False: s), Y = X * sg + (beta [C] - mean * sg)
//                     (center=False: + Neg(mean) * sg)
//                     -> LayerNormalization(X, gamma, beta, epsilon; axis 2 after the pool, whose
//                     mean is over axes 2.., -1 after ReduceMean), opset >= 17
//   fuse_rms_norm     PyTorch / Llama: Pow(x, 2) | x * x -> ReduceMean(last axis) -> Add(eps) -> Sqrt
//                     -> x * Reciprocal | x * Div(1, .) | Div(x, .) -> Mul(gamma [C]), optionally
//                     x = Cast(X float16 / bfloat16 -> float32) and a Cast back before the gamma
//                     -> RMSNormalization(X, gamma, axis -1, epsilon), opset >= 23
// Without the gamma Mul (layer_norm, layer_norm_tf, rms_norm) the scale is a new constant of ones,
// sized from beta or X's declared last axis (NormPass::add_ones); unknown size: left alone.
//   fuse_gelu_tanh    0.5 * x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), x^3 as Pow(x, 3) or
//                     x * x * x -> Gelu(approximate "tanh"), opset >= 20
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void fuse_layer_norm(RuleContext& ctx);
void fuse_layer_norm_before_opset17(RuleContext& ctx);
void fuse_gelu(RuleContext& ctx);
void fuse_gelu_before_opset20(RuleContext& ctx);
void fuse_layer_norm_tf(RuleContext& ctx);
void fuse_layer_norm_tf_before_opset17(RuleContext& ctx);
void fuse_rms_norm(RuleContext& ctx);
void fuse_rms_norm_before_opset23(RuleContext& ctx);
void fuse_gelu_tanh(RuleContext& ctx);
void fuse_gelu_tanh_before_opset20(RuleContext& ctx);

}  // namespace onnxmini
