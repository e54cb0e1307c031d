// conv1d_shifted_gemm: a 1-D (or 1xK / Kx1) float32 Conv with stride 1 as one GEMM
// per kernel tap in the transposed orientation, no im2col. See conv_row.cc.
#pragma once
#include <memory>
#include <vector>

#include "kernels/gemm_engine/gemm.h"
#include "kernels/kernel.h"
#include "kernels/nn/conv_implicit.h"

namespace onnxmini {
namespace nn {

// W[g][:, :, k]^T (cg x mg) per group and tap, packed as the GEMM's B operand.
struct RowFilter {
  int64_t M = 0, cg = 0, taps = 0, group = 0;
  std::vector<std::shared_ptr<gemm::PackedB>> packed;  // [group * taps + k]
};
// w: M x cg x taps (a 1-D filter, or 1xK / Kx1 with its unit axis), row-major.
std::shared_ptr<const RowFilter> pack_row_filter(const gemm::GemmEngine& engine, const float* w, int64_t M,
                                                 int64_t cg, int64_t taps, int64_t group);

// The measured rule (conv_row.cc); g is 1-D with stride 1 (the caller checks).
bool row_conv_wins(const ConvGeom& g);
// True when conv1d_shifted can run g with f: 1-D, stride 1, f packed for this weight.
bool row_conv_fits(const ConvGeom& g, const RowFilter* f);

// Y = conv(X, W) with `epi` (bias / PRelu per output channel from channel 0, the
// residual laid out as Y from image 0 with residual_ld = the output length, the
// activation) and the input affine applied to real input pixels.
void conv1d_shifted(KernelContext& ctx, const ConvGeom& g, const float* x, const RowFilter& f,
                    const gemm::Epilogue& epi, const InputAffine& affine, float* y);

}  // namespace nn
}  // namespace onnxmini
