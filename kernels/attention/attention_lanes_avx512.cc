// AVX-512 instance of the attention inner loops (attention_lanes_impl.h): 16
// lanes, 2 registers per packed key block; exp / tanh from the float32 SIMD
// table of kernels/simd; half <-> float with vcvtph2ps / vcvtps2ph.
#include <immintrin.h>

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "core/float16.h"
#include "kernels/attention/attention_lanes_impl.h"
#include "kernels/simd/f32_kernels.h"
#include "kernels/simd/vec_avx512.h"

namespace onnxmini {
namespace attention {
namespace {

void half_to_float_avx512(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))));
  for (; i < n; ++i) y[i] = half_to_float(x[i]);
}

void float_to_half_avx512(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) y[i] = float_to_half(x[i]);
}

}  // namespace

const AttentionLanes& attention_lanes_avx512() {
  static const AttentionLanes k{cpu::Isa::Avx512,
                                block_scores<simd::V512>,
                                accumulate_pv<simd::V512>,
                                scale_row<simd::V512>,
                                simd::f32_kernels_avx512().exp,
                                simd::f32_kernels_avx512().tanh,
                                half_to_float_avx512,
                                float_to_half_avx512};
  return k;
}

}  // namespace attention
}  // namespace onnxmini
