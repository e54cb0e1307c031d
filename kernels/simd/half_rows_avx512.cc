// AVX-512 level of half_rows.h: F16C-style vcvtph2ps / vcvtps2ph on 16 lanes;
// bfloat16 by integer shifts with round to nearest even (NaN kept quiet).
// (vcvtneps2bf16 of AVX512_BF16 would do the rounding in one instruction, but
// the build targets F/BW/DQ/VL only.)
#include "core/immintrin_quiet.h"  // first: GCC 12's false warnings inside avx512fintrin.h

#include "core/float16.h"
#include "kernels/simd/half_rows.h"

namespace onnxmini {
namespace simd {
namespace {

void f16_to_f32_avx512(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + i)));
  }
}

void f32_to_f16_avx512(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(y + i, m,
                             _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
}

void bf16_to_f32_avx512(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
    _mm512_storeu_si512(y + i, _mm512_slli_epi32(w, 16));
  }
  for (; i < n; ++i) y[i] = bfloat16_to_float(x[i]);
}

void f32_to_bf16_avx512(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff), quiet = _mm512_set1_epi32(0x40);
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i high = _mm512_srli_epi32(bits, 16);
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(_mm512_and_si512(high, one), bias)), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, high, quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm512_cvtepi32_epi16(r));
  }
  for (; i < n; ++i) y[i] = float_to_bfloat16(x[i]);
}

}  // namespace

const HalfRows& half_rows_avx512() {
  static const HalfRows k{cpu::Isa::Avx512, f16_to_f32_avx512, f32_to_f16_avx512, bf16_to_f32_avx512,
                          f32_to_bf16_avx512};
  return k;
}

}  // namespace simd
}  // namespace onnxmini
