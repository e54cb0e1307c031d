// conv1x1_transposed: a plain 1x1 Conv (stride 1, no padding, float32) on a small
// image, computed as the transposed product. See conv1x1_transposed.cc.
#pragma once
#include <memory>
#include <vector>

#include "kernels/gemm_engine/gemm.h"
#include "kernels/kernel.h"
#include "kernels/nn/conv_implicit.h"

namespace onnxmini {
namespace nn {

// The measured rule (conv1x1_transposed.cc): true where Y^T = X^T W^T beats the GEMM
// with N = H*W for this 1x1 layer (the caller has checked stride 1, no padding).
bool conv1x1_transposed_wins(const ConvGeom& g);

// W[g]^T (cg x mg) of every group, packed as the GEMM's B operand (one per group).
std::vector<std::shared_ptr<gemm::PackedB>> pack_conv1x1_transposed(const gemm::GemmEngine& engine, const float* w,
                                                                    int64_t M, int64_t cg, int64_t group);

// C (P x mg, row stride mg) transposed into Y (mg x P, row stride P) in blocks of 16
// rows of Y, then `e` on each Y row (row index = output channel within the group, as
// e's per-row arrays: bias_per_row should be set; e.residual laid out as this Y).
void transpose_with_epilogue(const float* c, int64_t P, int64_t mg, const gemm::Epilogue& e, float* y,
                             ThreadPool* pool);

// Y[n, g] = W[g] X[n, g] through C = X[n, g]^T W[g]^T (P x mg, a scratch), then C
// transposed into Y with `epi` (bias / PRelu per output channel, the residual laid
// out as Y from image 0 channel 0 with residual_ld = P, the activation) applied.
// `wt`: pack_conv1x1_transposed's panels, or empty (W^T packed per call).
void conv1x1_transposed(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                        const std::vector<std::shared_ptr<gemm::PackedB>>& wt, const gemm::Epilogue& epi, float* y);

}  // namespace nn
}  // namespace onnxmini
