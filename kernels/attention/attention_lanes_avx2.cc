// AVX2 + FMA instance of the attention inner loops (attention_lanes_impl.h):
// 8 lanes, 8 registers per packed key block; exp / tanh from the float32 SIMD
// table of kernels/simd; half <-> float with F16C.
#include <immintrin.h>

#include "core/float16.h"
#include "kernels/attention/attention_lanes_impl.h"
#include "kernels/simd/f32_kernels.h"
#include "kernels/simd/vec_avx2.h"

namespace onnxmini {
namespace attention {
namespace {

void half_to_float_avx2(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  for (; i < n; ++i) y[i] = half_to_float(x[i]);
}

void float_to_half_avx2(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) y[i] = float_to_half(x[i]);
}

}  // namespace

const AttentionLanes& attention_lanes_avx2() {
  static const AttentionLanes k{cpu::Isa::Avx2,
                                block_scores<simd::V256>,
                                softmax_block<simd::V256>,
                                accumulate_pv<simd::V256>,
                                attention_lanes_portable().pack_key_block,
                                scale_row<simd::V256>,
                                simd::f32_kernels_avx2().exp,
                                simd::f32_kernels_avx2().tanh,
                                half_to_float_avx2,
                                float_to_half_avx2};
  return k;
}

}  // namespace attention
}  // namespace onnxmini
