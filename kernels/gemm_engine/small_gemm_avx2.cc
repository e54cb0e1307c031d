// AVX2 + FMA instance of the small-matrix SGEMM (small_gemm_impl.h): 8 lanes, 16 ymm.
// Broadcast kernel: 6 rows x 2 ymm (12 accumulators + 2 B + 1 broadcast) per 16-column
// panel, 8 x 1 for a panel of at most 8 columns; vmaskmov covers the N edge.
// Dot kernel: a 2 x 4 tile of C, 8 ymm accumulators along K (+ 2 A + 1 B), folded by
// two rounds of hadd and one exchange of 128-bit halves into one ymm of 8 sums.
// B^T with many rows of A: 8 x 8 register transposes of B into a K x N buffer first.
#include <immintrin.h>

#include "kernels/gemm_engine/small_gemm_impl.h"
#include "kernels/simd/transpose8_avx2.h"

namespace onnxmini {
namespace gemm {
namespace {

struct SmallV256 {
  using reg = __m256;
  using mask = __m256i;
  static constexpr int W = 8;
  static constexpr int RB1 = 8, RB2 = 6, RB4 = 0;
  static constexpr int TR = 2, TC = 4;

  static reg zero() { return _mm256_setzero_ps(); }
  static reg set1(float v) { return _mm256_set1_ps(v); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static reg loadz(const float* p, mask m) { return _mm256_maskload_ps(p, m); }
  static void store_mask(float* p, mask m, reg v) { _mm256_maskstore_ps(p, m, v); }
  static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static mask tail(int64_t n) {
    const int k = n >= W ? W : static_cast<int>(n);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }

  static constexpr int64_t kReduceOps = 7 + 8;  // 6 hadd + 2 permutes + add, then 2 row stores
  static constexpr int64_t kTransposeOps = 24;
  static void store(float* p, reg v) { _mm256_storeu_ps(p, v); }
  static void transpose(const reg* in, reg* out) { simd::transpose8x8(in, out); }

  // hadd(hadd(a0, a1), hadd(a2, a3)) holds, per 128-bit half, the half-sums of a0..a3;
  // adding the low halves of (h0, h1) to their high halves gives lane i = sum of acc[i],
  // so row r of the 2 x 4 tile is 128-bit half r.
  static void store_tile(const reg* acc, float* c, int64_t ldc, int rows, int cols, float alpha, float beta) {
    const reg h0 = _mm256_hadd_ps(_mm256_hadd_ps(acc[0], acc[1]), _mm256_hadd_ps(acc[2], acc[3]));
    const reg h1 = _mm256_hadd_ps(_mm256_hadd_ps(acc[4], acc[5]), _mm256_hadd_ps(acc[6], acc[7]));
    const reg f = _mm256_mul_ps(
        _mm256_add_ps(_mm256_permute2f128_ps(h0, h1, 0x20), _mm256_permute2f128_ps(h0, h1, 0x31)), _mm256_set1_ps(alpha));
    const __m128 row[2] = {_mm256_castps256_ps128(f), _mm256_extractf128_ps(f, 1)};
    const __m128i m = _mm_cmpgt_epi32(_mm_set1_epi32(cols), _mm_setr_epi32(0, 1, 2, 3));
    for (int i = 0; i < rows; ++i) {
      __m128 o = row[i];
      if (beta != 0.0f) o = _mm_fmadd_ps(_mm_maskload_ps(c + i * ldc, m), _mm_set1_ps(beta), o);  // beta == 0: write-only
      _mm_maskstore_ps(c + i * ldc, m, o);
    }
  }
};


}  // namespace

const SmallSgemm& small_sgemm_avx2() {
  static const SmallSgemm k{&SmallGemm<SmallV256>::run, &SmallGemm<SmallV256>::tile};
  return k;
}

}  // namespace gemm
}  // namespace onnxmini
