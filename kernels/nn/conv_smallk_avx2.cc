// conv2d_smallk on AVX2 + FMA: output columns in the lanes (8 per ymm). The
// AVX2 twin of conv_smallk_avx512.cc over the same driver (conv_smallk_impl.h).
//
// Registers. AVX2 has 16 ymm: a tile is NS <= 2 ymm of output columns x
// MB <= 6 output channels, 12 accumulators + 2 input vectors + 1 broadcast.
// Per tap: 2 loads, 6 broadcasts, 12 independent FMA chains (2 pipes x 4-cycle
// latency need 8). The last vector of a row is stored through a lane mask.
#include <immintrin.h>

#include "kernels/gemm_engine/epilogue_avx2.h"
#include "kernels/nn/conv_smallk_impl.h"

namespace onnxmini {
namespace nn {
namespace {

constexpr int kV = 8;
constexpr int kMaxMB = 6;

template <int NS, int MB, int kMode>
void tile(const SmallKTile& a) {
  __m256 acc[NS][MB];
#pragma GCC unroll 6
  for (int j = 0; j < MB; ++j)
#pragma GCC unroll 2
    for (int s = 0; s < NS; ++s) acc[s][j] = _mm256_setzero_ps();
  const float* wk = a.wt;
  for (int64_t k = 0; k < a.K; ++k, wk += a.ldw) {
    const float* xk = a.x + a.toff[k];
    __m256 xv[NS];
#pragma GCC unroll 2
    for (int s = 0; s < NS; ++s) xv[s] = _mm256_loadu_ps(xk + s * kV);
#pragma GCC unroll 6
    for (int j = 0; j < MB; ++j) {
      const __m256 wv = _mm256_broadcast_ss(wk + j);
#pragma GCC unroll 2
      for (int s = 0; s < NS; ++s) acc[s][j] = _mm256_fmadd_ps(wv, xv[s], acc[s][j]);
    }
  }
  const __m256i last = gemm::lane_mask8(a.last_valid);
  const __m256 lo = _mm256_set1_ps(a.lo), hi = _mm256_set1_ps(a.hi);
  const __m256 ha = _mm256_set1_ps(a.ha), hb = _mm256_set1_ps(a.hb), zero = _mm256_set1_ps(0.0f), one = _mm256_set1_ps(1.0f);
  const bool swish = a.swish;
#pragma GCC unroll 6
  for (int j = 0; j < MB; ++j)
#pragma GCC unroll 2
    for (int s = 0; s < NS; ++s) {
      const int valid = s == NS - 1 ? a.last_valid : kV;
      const int i = static_cast<int>(a.m0 + j), col = static_cast<int>(a.ow0 + s * kV);
      __m256 v = acc[s][j];
      if constexpr (kMode == kClamp) {
        if (a.epi->bias) v = _mm256_add_ps(v, _mm256_set1_ps(a.epi->bias[i]));
        v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
      } else if constexpr (kMode == kHard) {  // mul then add, as the standalone op
        if (a.epi->bias) v = _mm256_add_ps(v, _mm256_set1_ps(a.epi->bias[i]));
        const __m256 h = _mm256_max_ps(zero, _mm256_min_ps(one, _mm256_add_ps(_mm256_mul_ps(ha, v), hb)));
        v = swish ? _mm256_mul_ps(v, h) : h;
      } else {
        v = gemm::epilogue8_ps(v, *a.epi, i, col, valid);
      }
      float* dst = a.y + j * a.P + s * kV;
      if (valid >= kV) _mm256_storeu_ps(dst, v);
      else _mm256_maskstore_ps(dst, last, v);
    }
}

template <int NS, int MB, int kMode>
struct Tile {
  static void run(const SmallKTile& a) { tile<NS, MB, kMode>(a); }
};

}  // namespace

void conv2d_smallk_avx2(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                        const gemm::Epilogue& epi, const InputAffine& affine, float* y) {
  smallk_drive<SmallKIsa<kV, kMaxMB, Tile>>(ctx, g, x, w, epi, affine, y, depthwise_kernels_avx2().deinterleave);
}

}  // namespace nn
}  // namespace onnxmini
