// AVX-512 vector traits of conv_depthwise_simd (conv_depthwise_impl.h): 16
// output columns per zmm. Row tails use mask registers (masked-off lanes are
// neither read nor written, so no load runs past the row). Stride 2 reads a
// column-parity copy made by deinterleave_avx512 (two vpermt2ps per 32
// floats); other strides: a masked gather.
// GCC 12 reports false -Wmaybe-uninitialized / -Wuninitialized inside its own intrinsic
// headers (their _mm512_undefined_* operands).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels/nn/conv_depthwise_impl.h"

namespace onnxmini {
namespace nn {
namespace {

struct Avx512Lanes {
  using Reg = __m512;
  static constexpr int V = 16;
  static constexpr bool kRowPath = true;  // dw_block_channels' row path (conv_depthwise_impl.h)
  static constexpr bool kOverlapTail = false;  // dw_rows' row tail (conv_depthwise_impl.h)
  struct Tail {
    __mmask16 m;  // the n output lanes
  };
  static __mmask16 first(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static Tail tail(int n) { return {first(n)}; }
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg set1(float a) { return _mm512_set1_ps(a); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg max(Reg a, Reg b) { return _mm512_max_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm512_min_ps(a, b); }
  static Reg prelu(Reg v, Reg slope) {
    return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), v, slope);
  }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg load_part(const float* p, const Tail& t) { return _mm512_maskz_loadu_ps(t.m, p); }
  static Reg load_strided(const float* p, int64_t s, const Tail& t) {
    const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32(static_cast<int>(s)));
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), t.m, idx, p, 4);
  }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static void store_part(float* p, Reg v, const Tail& t) { _mm512_mask_storeu_ps(p, t.m, v); }
  // r[i] lane j -> r[j] lane i: pairs interleaved (vunpck*ps), then pairs of
  // pairs (vunpck*pd), then 128-bit lanes gathered in two vshuff32x4 rounds.
  // Forced inline: a call keeps r[] in memory (16 zmm stored and reloaded around it); with
  // the block kernel's row path in this file GCC stopped inlining it on its own.
  ONNXMINI_DW_INLINE static void transpose(Reg (&r)[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {  // r[4i + j], 128-bit lane L: rows 4i..4i+3 of column 4L + j
      const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
      const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
      r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
      r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
      r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
      r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for (int j = 0; j < 4; ++j) {
      const __m512 u0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88), u1 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
      const __m512 u2 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88), u3 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
      // Group j reads and writes only r[j], r[4 + j], r[8 + j], r[12 + j]: written
      // back in place (a copy through t made GCC keep r in memory: rep movsq).
      r[j] = _mm512_shuffle_f32x4(u0, u2, 0x88);
      r[j + 8] = _mm512_shuffle_f32x4(u0, u2, 0xDD);
      r[j + 4] = _mm512_shuffle_f32x4(u1, u3, 0x88);
      r[j + 12] = _mm512_shuffle_f32x4(u1, u3, 0xDD);
    }
  }
};

// 32 floats -> 16 even + 16 odd: two loads, two vpermt2ps, two stores; the
// last < 32 the same way with masks (the zoo's rows are 14..116 floats, so a
// scalar tail would be most of a row).
void deinterleave_avx512(const float* src, int64_t n, float* even, float* odd) {
  const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = _mm512_loadu_ps(src + i), b = _mm512_loadu_ps(src + i + 16);
    _mm512_storeu_ps(even + i / 2, _mm512_permutex2var_ps(a, ie, b));
    _mm512_storeu_ps(odd + i / 2, _mm512_permutex2var_ps(a, io, b));
  }
  if (i < n && n >= 33) {  // the last 32 (or 33) again, overlapping: same values, no masks
    const int64_t j = (n - 32) & ~int64_t{1};  // even, so src[j] stays an even column
    const __m512 a = _mm512_loadu_ps(src + j), b = _mm512_loadu_ps(src + j + 16);
    _mm512_storeu_ps(even + j / 2, _mm512_permutex2var_ps(a, ie, b));
    _mm512_storeu_ps(odd + j / 2, _mm512_permutex2var_ps(a, io, b));
    if (j + 32 < n) even[(n - 1) / 2] = src[n - 1];  // n odd: its last column is even
  } else if (i < n) {
    const int r = static_cast<int>(n - i);
    const __m512 a = _mm512_maskz_loadu_ps(Avx512Lanes::first(std::min(r, 16)), src + i);
    const __m512 b = _mm512_maskz_loadu_ps(Avx512Lanes::first(std::max(r - 16, 0)), src + i + 16);
    _mm512_mask_storeu_ps(even + i / 2, Avx512Lanes::first((r + 1) / 2), _mm512_permutex2var_ps(a, ie, b));
    _mm512_mask_storeu_ps(odd + i / 2, Avx512Lanes::first(r / 2), _mm512_permutex2var_ps(a, io, b));
  }
}

}  // namespace

const DepthwiseKernels& depthwise_kernels_avx512() {
  static const DepthwiseKernels k{cpu::Isa::Avx512, dw_plane_dispatch<Avx512Lanes>, deinterleave_avx512, dw_block_channels<Avx512Lanes>, Avx512Lanes::V};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
