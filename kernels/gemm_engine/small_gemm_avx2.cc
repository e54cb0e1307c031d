// AVX2 + FMA instance of the small-matrix SGEMM (small_gemm_impl.h): 8 lanes, 16 ymm.
// Broadcast kernel: 6 rows x 2 ymm (12 accumulators + 2 B + 1 broadcast) per 16-column
// panel, 8 x 1 for a panel of at most 8 columns; vmaskmov only at the N edge.
// B^T: 8 x 8 register transposes of B into a K x N buffer, then the broadcast kernel.
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
  // No dot kernel: on the Xeon's AVX2 path transposing B^T first won every measured shape
  // against a 2 x 4 dot tile folded by hadd (20 x 20 x 20: 100 vs 177 us per 400 matrices;
  // 16 x 16 x 64: 8.7 vs 12.4 us and 8 x 8 x 64: 3.0 vs 3.4 us per 24).
  static constexpr bool kDot = false;
  static constexpr int64_t kTransposeOps = 24;

  static reg zero() { return _mm256_setzero_ps(); }
  static reg set1(float v) { return _mm256_set1_ps(v); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static reg loadz(const float* p, mask m) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, reg v) { _mm256_storeu_ps(p, v); }
  static void store_mask(float* p, mask m, reg v) { _mm256_maskstore_ps(p, m, v); }
  static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static mask tail(int64_t n) {
    const int k = n >= W ? W : static_cast<int>(n);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static void transpose(const reg* in, reg* out) { simd::transpose8x8(in, out); }
};

}  // namespace

const SmallSgemm& small_sgemm_avx2() {
  static const SmallSgemm k{&SmallGemm<SmallV256>::run, &SmallGemm<SmallV256>::tile};
  return k;
}

}  // namespace gemm
}  // namespace onnxmini
