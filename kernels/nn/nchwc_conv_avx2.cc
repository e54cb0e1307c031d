// AVX2 + FMA traits of NchwcConv's row kernels (nchwc_conv_impl.h): a block of 16
// channels is two ymm. Dense rows hold 1 output block x 6 pixels (12 ymm accumulators,
// 2 weight registers, 1 broadcast: 15 of 16); depthwise strips 6 pixels of one block.
#include <immintrin.h>

#include "kernels/nn/nchwc_conv_impl.h"

namespace onnxmini {
namespace nn {
namespace {

struct Avx2Block {
  struct Reg {
    __m256 lo, hi;
  };
  static Reg zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static Reg set1(float v) {
    const __m256 b = _mm256_set1_ps(v);
    return {b, b};
  }
  static Reg load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static void store(float* p, Reg v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
  }
  static Reg fma(Reg a, Reg b, Reg c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
  static Reg add(Reg a, Reg b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  static Reg mul(Reg a, Reg b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
  static Reg max(Reg a, Reg b) { return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)}; }
  static Reg min(Reg a, Reg b) { return {_mm256_min_ps(a.lo, b.lo), _mm256_min_ps(a.hi, b.hi)}; }
  static __m256 prelu8(__m256 v, __m256 s) {
    return _mm256_blendv_ps(v, _mm256_mul_ps(v, s), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
  }
  static Reg prelu(Reg v, Reg s) { return {prelu8(v.lo, s.lo), prelu8(v.hi, s.hi)}; }
};

// ReorderToBlocked: the 16 channels of one pixel are two 8-lane gathers (index c * hw), the
// padding channels masked off (zero). ReorderFromBlocked has no scatter here: the portable loops.
void to_blocked_avx2(const float* x, int64_t planes, int64_t hw, float* y) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i idx_lo = _mm256_mullo_epi32(lane, _mm256_set1_epi32(static_cast<int>(hw)));
  const __m256i idx_hi = _mm256_mullo_epi32(_mm256_add_epi32(lane, _mm256_set1_epi32(8)), _mm256_set1_epi32(static_cast<int>(hw)));
  const __m256 m_lo = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(planes)), lane));
  const __m256 m_hi = _mm256_castsi256_ps(
      _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(planes)), _mm256_add_epi32(lane, _mm256_set1_epi32(8))));
  for (int64_t p = 0; p < hw; ++p) {
    _mm256_storeu_ps(y + p * 16, _mm256_mask_i32gather_ps(_mm256_setzero_ps(), x + p, idx_lo, m_lo, 4));
    _mm256_storeu_ps(y + p * 16 + 8, _mm256_mask_i32gather_ps(_mm256_setzero_ps(), x + p, idx_hi, m_hi, 4));
  }
}

}  // namespace

const NchwcKernels& nchwc_kernels_avx2() {
  static const NchwcKernels k{cpu::Isa::Avx2, nchwc_dense_row<Avx2Block, 1, 6, 6>, nchwc_depthwise_row<Avx2Block, 6>,
                              1, to_blocked_avx2, nchwc_from_blocked_portable};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
