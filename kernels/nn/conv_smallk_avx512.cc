// conv2d_smallk on AVX-512: output columns in the lanes (16 per zmm). The
// driver (row buffer, tiling, threads) is conv_smallk_impl.h; this file is the
// register tile.
//
// Registers. A tile is NS <= 2 zmm of output columns x MB <= 12 output
// channels: 24 accumulators + 2 input vectors + 1 broadcast of 32 zmm. Per
// tap: 2 unaligned loads from the row buffer, 12 broadcasts (consecutive floats
// of the transposed filter) and 24 independent FMA chains, more than the 2 FMA
// pipes x 4-cycle latency need. A 1-channel 3x3 layer (K = 9) runs 216 FMAs per
// 24 stores; the stores carry the epilogue and go straight into the NCHW rows.
#include "core/immintrin_quiet.h"  // first: GCC 12's false warnings inside avx512fintrin.h

#include "kernels/gemm_engine/epilogue_avx512.h"
#include "kernels/nn/conv_smallk_impl.h"

namespace onnxmini {
namespace nn {
namespace {

constexpr int kV = 16;
constexpr int kMaxMB = 12;

template <int NS, int MB, int kMode>
void tile(const SmallKTile& a) {
  __m512 acc[NS][MB];
#pragma GCC unroll 12
  for (int j = 0; j < MB; ++j)
#pragma GCC unroll 2
    for (int s = 0; s < NS; ++s) acc[s][j] = _mm512_setzero_ps();
  const float* wk = a.wt;
  for (int64_t k = 0; k < a.K; ++k, wk += a.ldw) {
    const float* xk = a.x + a.toff[k];
    __m512 xv[NS];
#pragma GCC unroll 2
    for (int s = 0; s < NS; ++s) xv[s] = _mm512_loadu_ps(xk + s * kV);
#pragma GCC unroll 12
    for (int j = 0; j < MB; ++j) {
      const __m512 wv = _mm512_set1_ps(wk[j]);
#pragma GCC unroll 2
      for (int s = 0; s < NS; ++s) acc[s][j] = _mm512_fmadd_ps(wv, xv[s], acc[s][j]);
    }
  }
  const __mmask16 last = static_cast<__mmask16>(a.last_valid >= kV ? 0xFFFF : (1u << a.last_valid) - 1);
  const __m512 lo = _mm512_set1_ps(a.lo), hi = _mm512_set1_ps(a.hi);
  const __m512 ha = _mm512_set1_ps(a.ha), hb = _mm512_set1_ps(a.hb), zero = _mm512_set1_ps(0.0f), one = _mm512_set1_ps(1.0f);
  const bool swish = a.swish;
#pragma GCC unroll 12
  for (int j = 0; j < MB; ++j)
#pragma GCC unroll 2
    for (int s = 0; s < NS; ++s) {
      const __mmask16 m = s == NS - 1 ? last : __mmask16(0xFFFF);
      const int i = static_cast<int>(a.m0 + j), col = static_cast<int>(a.ow0 + s * kV);
      __m512 v = acc[s][j];
      if constexpr (kMode == kClamp) {
        if (a.epi->bias) v = _mm512_add_ps(v, _mm512_set1_ps(a.epi->bias[i]));
        v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
      } else if constexpr (kMode == kHard) {  // mul then add, as the standalone op
        if (a.epi->bias) v = _mm512_add_ps(v, _mm512_set1_ps(a.epi->bias[i]));
        const __m512 h = _mm512_max_ps(zero, _mm512_min_ps(one, _mm512_add_ps(_mm512_mul_ps(ha, v), hb)));
        v = swish ? _mm512_mul_ps(v, h) : h;
      } else {
        v = gemm::epilogue_ps(v, *a.epi, i, col, m);
      }
      _mm512_mask_storeu_ps(a.y + j * a.P + s * kV, m, v);
    }
}

template <int NS, int MB, int kMode>
struct Tile {
  static void run(const SmallKTile& a) { tile<NS, MB, kMode>(a); }
};

}  // namespace

void conv2d_smallk_avx512(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                          const gemm::Epilogue& epi, const InputAffine& affine, float* y) {
  smallk_drive<SmallKIsa<kV, kMaxMB, Tile>>(ctx, g, x, w, epi, affine, y, depthwise_kernels_avx512().deinterleave);
}

}  // namespace nn
}  // namespace onnxmini
