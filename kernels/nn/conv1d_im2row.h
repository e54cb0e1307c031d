// conv1d_im2row_gemm: a 1-D float32 Conv (one group) with few output positions per
// image, the batch folded into one transposed GEMM. See conv1d_im2row.cc.
#pragma once
#include <memory>

#include "kernels/gemm_engine/gemm.h"
#include "kernels/kernel.h"
#include "kernels/nn/conv_implicit.h"

namespace onnxmini {
namespace nn {

// The measured rule (conv1d_im2row.cc): true where the folded transposed GEMM beats
// the per-image im2col GEMM / conv1d_shifted on this layer (the caller has checked
// float32 and a packed filter: im2row_conv_fits).
bool im2row_conv_wins(const ConvGeom& g);
// True when conv1d_im2row can run g with W^T packed as `wt` for a filter of M output
// channels and K = C * taps: 1-D, one group, same M and K.
bool im2row_conv_fits(const ConvGeom& g, const gemm::PackedB* wt, int64_t M, int64_t K);

// W^T (K x M, K = C * taps) of a one-group 1-D filter W (M x C x taps, row-major),
// packed as the GEMM's B operand.
std::shared_ptr<gemm::PackedB> pack_im2row_filter(const gemm::GemmEngine& engine, const float* w, int64_t M,
                                                  int64_t K);

// Y = conv(X, W) with `epi` (bias / PRelu per output channel, the residual laid out
// as Y from image 0 with residual_ld = the output length, the activation). X must
// already have any fused input affine applied (the caller's scratch copy).
void conv1d_im2row(KernelContext& ctx, const ConvGeom& g, const float* x, const gemm::PackedB& wt,
                   const gemm::Epilogue& epi, float* y);

}  // namespace nn
}  // namespace onnxmini
