// Affine and HardSwish fusions around convolutions (level 2; the table is in graph_optimizer.cc).
// Converters such as Paddle2ONNX write PP-LCNetV3's "learnable affine blocks" and HardSwish as
// chains of scalar Mul / Add / Clip / Div nodes between the Convs (ppocr_v4_rec: 7 element-wise
// nodes per Conv); these rules fold them away.
//
// Plain ONNX results (saved as they are):
//   fuse_conv_scale_shift  Conv -> Mul(c) / Add(d) / Sub(d) [-> ...] with c, d constants of one
//                          element or one per output channel -> one Conv with W * c and B * c + d
//                          (onnxruntime's ConvMulFusion / ConvAddFusion do the same)
//   fuse_scale_shift_conv  Mul(x, c) [-> Add(d)] with scalar constants -> Conv with no padding
//                          (every pad 0) -> one Conv with W * c and B + d * sum(W) per output channel
//   fuse_hard_swish        x * Clip(x + 3, 0, 6) / 6 (the Div, or a Mul by 1/6; every Add / Mul in
//                          either operand order) -> HardSwish(x) (opset 14+)
// onnxmini-only (a saved model keeps the original nodes):
//   fuse_hard_swish_before_opset14  the same in a model importing opset < 14 -> the opset-14 kernel
//   fuse_nchwc_output_affine  (level 3, after nchwc_layout) NchwcConv -> Mul(c) / Add(d) / Sub(d)
//                          [-> ...] with one-element or blocked per-channel constants -> NchwcConv
//                          applying y * S + D after its activation (fused_attr::kOutputScale /
//                          kOutputShift): the affine after a learnable block's HardSwish, which
//                          no Conv weight can take when the next Conv pads its input
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void fuse_conv_scale_shift(RuleContext& ctx);
void fuse_scale_shift_conv(RuleContext& ctx);
void fuse_hard_swish(RuleContext& ctx);
void fuse_hard_swish_before_opset14(RuleContext& ctx);
void fuse_nchwc_output_affine(RuleContext& ctx);

}  // namespace onnxmini
