// ConvTranspose geometry shared by the general path (conv_transpose.cc: GEMM +
// col2im) and the non-overlapping path (conv_transpose_nonoverlap.cc).
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"

namespace onnxmini {
namespace nn {

// X is N x C x in..., W is C x M/group x kernel..., Y is N x M x out...; input
// index i and tap k land on output o = i * stride - pad_begin + k * dilation.
struct TGeom {
  int64_t N, C, M, group;
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, out;
};

// Whether conv_transpose_nonoverlap can run g: 1-D or 2-D, kernel == stride and
// dilation 1 on every axis, so no two (input pixel, tap) pairs share an output
// (any group, pads, output_padding and output_shape: outputs outside the
// scattered ones hold the bias).
bool convt_nonoverlap_fits(const TGeom& g);

// Y = ConvTranspose(X, W) + bias (bias may be null) on the non-overlapping path:
// one GEMM per block of input rows, its rows written straight into their strided
// output positions (no col2im accumulation). Float32 only.
void convt_nonoverlap(KernelContext& ctx, const TGeom& g, const float* x, const float* w, const float* bias, float* y);

}  // namespace nn
}  // namespace onnxmini
