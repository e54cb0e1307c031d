// Fusion rules of the optimizer (level 2, extended; the table is in graph_optimizer.cc).
// A pattern applies only when the intermediate value has that single consumer, is not a
// graph output, and the weights involved are float32 constants. Fused-away nodes are
// removed at the end of each rule, so the remaining nodes keep their order (a fused
// node produces its final value earlier than before, never later).
//
// Plain ONNX results (saved as they are):
//   fuse_concat_gemms   Concat(Gemm(X, W1, b1), Gemm(X, W2, b2), ..., axis 1)
//                       -> one Gemm over [W1 W2 ...] and [b1 b2 ...] (new constants)
//   fuse_matmul_add     MatMul(A 2-D, B const) -> Add(C const row) -> Gemm(A, B, C)
//   fuse_conv_bn        Conv -> BatchNormalization: BN folded into the filter and bias
//   fuse_conv_activation  Conv -> Relu | Sigmoid | Clip: the activation in the Conv's epilogue;
//                       saved as onnxruntime's com.microsoft FusedConv (which onnxmini loads back)
// onnxmini-only results (kernels/fused_attributes.h; a saved model keeps the original nodes):
//   fuse_gemm_add       Gemm -> Add(V) [-> Add(V2) ...]: the addends become extra Gemm inputs,
//                       added in the GEMM epilogue when they are row or column vectors
//   fuse_bn_conv        BatchNormalization -> Conv: BN becomes the Conv's per-input-channel
//                       affine, applied while the Conv copies its input (padding stays zero)
//   fuse_conv_prelu     Conv -> PRelu (scalar or per-channel constant slope): into the epilogue
//   fuse_conv_activation_extra  Conv -> HardSigmoid | HardSwish | Swish | Mul(x, Sigmoid(x)) (the
//                       Sigmoid read by the Mul only): into the epilogue (no FusedConv form: saved unfused)
//   fuse_gemm_reshape_residual  Gemm -> Reshape(s) -> Add(R): one Gemm reshaping Y, then adding R
//                       (fused_attr::kReshape; R of the reshaped shape: the epilogue's residual)
//   fuse_conv_gelu      Conv -> Gelu (opset 20, or the one gelu*_before_opset20 made; approximate
//                       none or tanh): into the epilogue (no FusedConv form: saved unfused)
//   fuse_reduce_mean_max  ReduceMean(X) + ReduceMax(X), same single axis and keepdims, X float32:
//                       one ReduceMeanMax (domain ai.onnxmini) reading X once
//   fuse_gemm_activation  Gemm -> Relu | Sigmoid | Clip | HardSigmoid | HardSwish | Swish | Gelu (both
//                       approximations) | Mul(x, Sigmoid(x)): into the GEMM epilogue; and
//                       MatMul(A any rank, B const 2-D) -> Add(bias const [N]) [-> one of those]:
//                       bias (MatMul input 2) [and activation] into MatMul's folded GEMM epilogue
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void fuse_concat_gemms(RuleContext& ctx);
void fuse_matmul_add(RuleContext& ctx);
void fuse_conv_bn(RuleContext& ctx);
void fuse_gemm_add(RuleContext& ctx);
void fuse_bn_conv(RuleContext& ctx);
void fuse_conv_activation(RuleContext& ctx);
void fuse_conv_prelu(RuleContext& ctx);
void fuse_conv_activation_extra(RuleContext& ctx);
void fuse_conv_gelu(RuleContext& ctx);
void fuse_gemm_reshape_residual(RuleContext& ctx);
void fuse_reduce_mean_max(RuleContext& ctx);
void fuse_gemm_activation(RuleContext& ctx);

}  // namespace onnxmini
