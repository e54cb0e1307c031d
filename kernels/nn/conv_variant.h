// ONNXMINI_CONV_VARIANT: forces one Conv path where it can run, so the paths can be
// timed against each other on the same layer (docs/kernels/conv-ladder.md) and
// tested. The default is the measured rule of kernels/nn/conv.cc.
//   im2col    the im2col matrix + GEMM (1x1 layers without padding: the GEMM on X)
//   implicit  the GEMM reading a padded copy of X in place (2-D float32)
//   direct    the portable direct loops of conv2d_direct / conv_depthwise (2-D)
//   depthwise conv_depthwise_simd (2-D float32, one input and one output channel
//             per group; also the rule's choice there)
//   lanes     conv2d_lanes (2-D float32, one group, constant filter, AVX-512)
//   transposed conv1x1_transposed (float32 1x1, stride 1, unpadded, over more than
//             one pixel): Y^T = X^T W^T (conv1x1_transposed.h)
//   row       conv1d_shifted (float32 1-D / 1xK / Kx1, stride 1, constant filter):
//             one transposed GEMM per tap, X read in place (conv_row.h)
//   im2row    conv1d_im2row_gemm (float32 1-D, one group, constant filter): the batch's
//             receptive fields as rows times W^T, one GEMM (conv1d_im2row.h)
//   smallk    conv2d_smallk (float32 2-D, one group, stride_w 1 or 2, at most 32 taps
//             per output, AVX2 / AVX-512): output columns in the lanes (conv_smallk.h)
// A path that cannot run the layer falls back to the rule.
#pragma once

namespace onnxmini {
namespace nn {

enum class ConvVariant { Rule, Im2col, Implicit, Direct, Lanes, Depthwise, Transposed, Row, Im2row, SmallK };

// The override, read from ONNXMINI_CONV_VARIANT once per process (an unknown value
// logs a warning naming it and keeps the rule).
ConvVariant conv_variant_override();
// Tests: replaces the override for the process; ConvVariant::Rule restores the rule.
void set_conv_variant_override(ConvVariant v);

}  // namespace nn
}  // namespace onnxmini
