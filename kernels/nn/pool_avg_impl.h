// The body of avgpool2d_separable's plane function (see pool_avg.h for the
// passes), included once per ISA file: pool_avg.cc (portable), pool_avg_avx2.cc,
// pool_avg_avx512.cc, each compiled with its own -m flags. The loops are plain
// element-wise adds over contiguous floats, which the compiler vectorises for
// the file's ISA; the row pass is instantiated for stride_w 1 and 2 (the zoo's
// strides) so that the stride is a constant: stride 1 is an unaligned vector
// load, stride 2 an even/odd shuffle of two loads; other strides use the
// generic loop. No std:: algorithm templates here: their out-of-line copies
// are shared across files, so the AVX-512 file's could be linked into the
// portable path.
#pragma once
#include "kernels/nn/pool_avg.h"

namespace onnxmini {
namespace nn {
namespace {

// out[o] += src[o * kStride] for o in [lo, hi); __restrict: out is the output
// row, src the column-sum buffer (never the same memory).
template <int64_t kStride>
inline void add_strided(float* __restrict out, const float* __restrict src, int64_t lo, int64_t hi) {
  for (int64_t o = lo; o < hi; ++o) out[o] += src[o * kStride];
}
inline void add_strided_any(float* __restrict out, const float* __restrict src, int64_t lo, int64_t hi,
                            int64_t stride) {
  for (int64_t o = lo; o < hi; ++o) out[o] += src[o * stride];
}

template <int64_t kStride>  // 0: the stride is p.sw, at run time
void avg_plane(const AvgPool2dPlan& p, const float* __restrict x, float* __restrict y,
               float* __restrict colsum) {
  const int64_t W = p.W, OW = p.OW;
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    float* __restrict out = y + oh * OW;
    const int64_t lo = p.row_lo[oh], hi = p.row_hi[oh];
    // Pass 1: column sums of the window's valid rows (none: all zero).
    if (lo < hi) {
      const float* first = x + (oh * p.sh - p.ph + lo * p.dh) * W;
      for (int64_t i = 0; i < W; ++i) colsum[i] = first[i];
      for (int64_t kh = lo + 1; kh < hi; ++kh) {
        const float* __restrict row = x + (oh * p.sh - p.ph + kh * p.dh) * W;
        for (int64_t i = 0; i < W; ++i) colsum[i] += row[i];
      }
    } else {
      for (int64_t i = 0; i < W; ++i) colsum[i] = 0.0f;
    }
    // Pass 2: KW column sums per output column, then the divisor.
    for (int64_t o = 0; o < OW; ++o) out[o] = 0.0f;
    for (int64_t k = 0; k < p.KW; ++k) {
      const float* src = colsum + k * p.dw - p.pw;  // column o reads src[o * sw]
      const auto [clo, chi] = p.kw_cols[k];
      if constexpr (kStride > 0) add_strided<kStride>(out, src, clo, chi);
      else add_strided_any(out, src, clo, chi, p.sw);
    }
    const float rdiv = p.row_div[oh];
    const float* __restrict cdiv = p.col_div.data();
    for (int64_t o = 0; o < OW; ++o) out[o] = out[o] / (rdiv * cdiv[o]);
  }
}

void avg_plane_dispatch(const AvgPool2dPlan& p, const float* x, float* y, float* colsum) {
  if (p.sw == 1) avg_plane<1>(p, x, y, colsum);
  else if (p.sw == 2) avg_plane<2>(p, x, y, colsum);
  else avg_plane<0>(p, x, y, colsum);
}

}  // namespace
}  // namespace nn
}  // namespace onnxmini
