// AVX-512 instance of the small-matrix SGEMM (small_gemm_impl.h): 16 lanes.
// Broadcast kernel: 12 rows x 2 zmm (24 accumulators) per 32-column panel, 12 x 1 for a
// panel of at most 16 columns, 6 rows x 4 zmm when N is 64 (4 B loads + 6 broadcasts per
// 24 FMAs instead of 2 + 12 twice); masked loads / stores only at the N edge.
// Dot kernel: a 4 x 4 tile of C, 16 zmm accumulators along K, folded by four rounds
// of shuffle + add (256-bit halves, 128-bit quarters, pairs, neighbours) into one zmm
// holding the 16 sums.
// B^T with many rows of A: 16 x 16 register transposes of B into a K x N buffer first.
// GCC 12 reports a false -Wmaybe-uninitialized inside its own masked-intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/gemm_engine/small_gemm_impl.h"
#include "kernels/simd/transpose16_avx512.h"

namespace onnxmini {
namespace gemm {
namespace {

struct SmallV512 {
  using reg = __m512;
  using mask = __mmask16;
  static constexpr int W = 16;
  static constexpr int RB1 = 12, RB2 = 12, RB4 = 6;
  static constexpr int TR = 4, TC = 4;

  static reg zero() { return _mm512_setzero_ps(); }
  static reg set1(float v) { return _mm512_set1_ps(v); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static reg loadz(const float* p, mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store_mask(float* p, mask m, reg v) { _mm512_mask_storeu_ps(p, m, v); }
  static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static mask tail(int64_t n) { return n >= W ? mask(0xFFFF) : mask((1u << n) - 1u); }

  static constexpr bool kDot = true;
  // 15 shuffle pairs + adds and 4 row stores count 57; 75 puts the dot / transpose
  // crossover where it was measured (16 x 16 x 64 B^T: transpose 7.7 us vs dot 9.4 us per
  // 24; 8 x 8 x 64: dot 2.8 us vs transpose 4.6 us).
  static constexpr int64_t kReduceOps = 75;
  static constexpr int64_t kTransposeOps = 48;
  static void store(float* p, reg v) { _mm512_storeu_ps(p, v); }
  static void transpose(const reg* in, reg* out) { simd::transpose16x16(in, out); }

  // Halves the number of vectors at each round while each keeps partial sums of two
  // inputs; after the fourth, lane 4 * l + c holds the sum of input l + 4 * c. The
  // inputs are taken in that transposed order, so lane r * 4 + c = sum of acc[r * 4 + c]
  // and row r of the tile is 128-bit block r.
  static void store_tile(const reg* acc, float* c, int64_t ldc, int rows, int cols, float alpha, float beta) {
    reg v[16], r[8], s[4], u[2];
    for (int i = 0; i < 16; ++i) v[i] = acc[4 * (i % 4) + i / 4];
    for (int q = 0; q < 8; ++q)  // 256-bit halves: [x.lo, y.lo] + [x.hi, y.hi]
      r[q] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * q], v[2 * q + 1], 0x44),
                           _mm512_shuffle_f32x4(v[2 * q], v[2 * q + 1], 0xEE));
    for (int t = 0; t < 4; ++t)  // 128-bit quarters: block j now belongs to input 4t + j
      s[t] = _mm512_add_ps(_mm512_shuffle_f32x4(r[2 * t], r[2 * t + 1], 0x88),
                           _mm512_shuffle_f32x4(r[2 * t], r[2 * t + 1], 0xDD));
    for (int w = 0; w < 2; ++w)  // pairs inside each 128-bit block
      u[w] = _mm512_add_ps(_mm512_shuffle_ps(s[2 * w], s[2 * w + 1], 0x44), _mm512_shuffle_ps(s[2 * w], s[2 * w + 1], 0xEE));
    const reg f = _mm512_mul_ps(_mm512_add_ps(_mm512_shuffle_ps(u[0], u[1], 0x88), _mm512_shuffle_ps(u[0], u[1], 0xDD)),
                                _mm512_set1_ps(alpha));
    const __m128 row[4] = {_mm512_castps512_ps128(f), _mm512_extractf32x4_ps(f, 1), _mm512_extractf32x4_ps(f, 2),
                           _mm512_extractf32x4_ps(f, 3)};
    const __mmask8 m = static_cast<__mmask8>((1u << cols) - 1u);
    for (int i = 0; i < rows; ++i) {
      __m128 o = row[i];
      if (beta != 0.0f) o = _mm_fmadd_ps(_mm_maskz_loadu_ps(m, c + i * ldc), _mm_set1_ps(beta), o);  // beta == 0: write-only
      _mm_mask_storeu_ps(c + i * ldc, m, o);
    }
  }
};


}  // namespace

const SmallSgemm& small_sgemm_avx512() {
  static const SmallSgemm k{&SmallGemm<SmallV512>::run, &SmallGemm<SmallV512>::tile};
  return k;
}

}  // namespace gemm
}  // namespace onnxmini
