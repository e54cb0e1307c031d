// AVX2 + FMA vector traits of conv_depthwise_simd (conv_depthwise_impl.h): 8
// output columns per ymm. Rows of at least 8 interior columns end with an
// overlapping full vector (kOverlapTail: vmaskmovps stores are slow on AMD);
// shorter tails use vmaskmovps (masked-off lanes are neither read nor written,
// and do not fault). Stride 2 reads a column-parity
// copy made by deinterleave_avx2 (vshufps + vpermpd per 16 floats); other
// strides: a masked gather.
#include <immintrin.h>

#include "kernels/nn/conv_depthwise_impl.h"

namespace onnxmini {
namespace nn {
namespace {

struct Avx2Lanes {
  using Reg = __m256;
  static constexpr int V = 8;
  static constexpr bool kRowPath = true;  // dw_block_channels' row path (conv_depthwise_impl.h)
  static constexpr bool kOverlapTail = true;  // dw_rows' row tail (conv_depthwise_impl.h)
  struct Tail {
    __m256i m;  // the n output lanes
  };
  static __m256i first(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Tail tail(int n) { return {first(n)}; }
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg set1(float a) { return _mm256_set1_ps(a); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg max(Reg a, Reg b) { return _mm256_max_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm256_min_ps(a, b); }
  static Reg prelu(Reg v, Reg slope) {
    return _mm256_blendv_ps(v, _mm256_mul_ps(v, slope), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
  }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg load_part(const float* p, const Tail& t) { return _mm256_maskload_ps(p, t.m); }
  static Reg load_strided(const float* p, int64_t s, const Tail& t) {
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32(static_cast<int>(s)));
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, idx, _mm256_castsi256_ps(t.m), 4);
  }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static void store_part(float* p, Reg v, const Tail& t) { _mm256_maskstore_ps(p, t.m, v); }
  // r[i] lane j -> r[j] lane i: vunpck*ps, vshufps, then vperm2f128 across the halves.
  ONNXMINI_DW_INLINE static void transpose(Reg (&r)[8]) {
    __m256 t[8], s[8];
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int h = 0; h < 2; ++h) {  // rows 4h..4h+3
      s[4 * h] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], _MM_SHUFFLE(1, 0, 1, 0));
      s[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], _MM_SHUFFLE(3, 2, 3, 2));
      s[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(1, 0, 1, 0));
      s[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int j = 0; j < 4; ++j) {
      r[j] = _mm256_permute2f128_ps(s[j], s[4 + j], 0x20);
      r[j + 4] = _mm256_permute2f128_ps(s[j], s[4 + j], 0x31);
    }
  }
};

// 16 floats -> 8 even + 8 odd: vshufps picks them per 128-bit lane, vpermpd
// puts the lanes' halves in order; the last < 16 with masked loads / stores.
void deinterleave_avx2(const float* src, int64_t n, float* even, float* odd) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(src + i), b = _mm256_loadu_ps(src + i + 8);
    const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    _mm256_storeu_ps(even + i / 2, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0))));
    _mm256_storeu_ps(odd + i / 2, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0))));
  }
  if (i < n && n >= 17) {  // the last 16 (or 17) again, overlapping: same values, no masks
    const int64_t j = (n - 16) & ~int64_t{1};  // even, so src[j] stays an even column
    const __m256 a = _mm256_loadu_ps(src + j), b = _mm256_loadu_ps(src + j + 8);
    const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    _mm256_storeu_ps(even + j / 2, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0))));
    _mm256_storeu_ps(odd + j / 2, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0))));
    if (j + 16 < n) even[(n - 1) / 2] = src[n - 1];  // n odd: its last column is even
  } else if (i < n) {  // the last < 16 the same way with vmaskmovps
    const int r = static_cast<int>(n - i);
    const __m256 a = _mm256_maskload_ps(src + i, Avx2Lanes::first(std::min(r, 8)));
    const __m256 b = _mm256_maskload_ps(src + i + 8, Avx2Lanes::first(std::max(r - 8, 0)));
    const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    _mm256_maskstore_ps(even + i / 2, Avx2Lanes::first((r + 1) / 2),
                        _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0))));
    _mm256_maskstore_ps(odd + i / 2, Avx2Lanes::first(r / 2),
                        _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0))));
  }
}

}  // namespace

const DepthwiseKernels& depthwise_kernels_avx2() {
  static const DepthwiseKernels k{cpu::Isa::Avx2, dw_plane_dispatch<Avx2Lanes>, deinterleave_avx2, dw_block_channels<Avx2Lanes>, Avx2Lanes::V};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
