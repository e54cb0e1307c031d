// AVX2 level of half_rows.h: F16C for float16 (8 lanes); bfloat16 by integer
// shifts, rounding to nearest even as core/float16.h does (NaN kept quiet).
#include <immintrin.h>

#include "core/float16.h"
#include "kernels/simd/half_rows.h"

namespace onnxmini {
namespace simd {
namespace {

void f16_to_f32_avx2(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  for (; i < n; ++i) y[i] = half_to_float(x[i]);
}

void f32_to_f16_avx2(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) y[i] = float_to_half(x[i]);
}

void bf16_to_f32_avx2(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_slli_epi32(w, 16));
  }
  for (; i < n; ++i) y[i] = bfloat16_to_float(x[i]);
}

// 8 floats -> 8 bfloat16 in the low 16 bits of each 32-bit lane.
inline __m256i round_to_bf16_lanes(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  return _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
}

void f32_to_bf16_avx2(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i lo = round_to_bf16_lanes(_mm256_loadu_ps(x + i));
    const __m256i hi = round_to_bf16_lanes(_mm256_loadu_ps(x + i + 8));
    // packus works per 128-bit half: fix the order with a 64-bit permute.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), packed);
  }
  for (; i < n; ++i) y[i] = float_to_bfloat16(x[i]);
}

}  // namespace

const HalfRows& half_rows_avx2() {
  static const HalfRows k{cpu::Isa::Avx2, f16_to_f32_avx2, f32_to_f16_avx2, bf16_to_f32_avx2, f32_to_bf16_avx2};
  return k;
}

}  // namespace simd
}  // namespace onnxmini
