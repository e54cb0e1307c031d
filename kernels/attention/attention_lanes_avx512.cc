// AVX-512 instance of the attention inner loops (attention_lanes_impl.h): 16
// lanes, 4 registers per packed key block; exp / tanh from the float32 SIMD
// table of kernels/simd; half <-> float with vcvtph2ps / vcvtps2ph.
#include <immintrin.h>

#include <algorithm>

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "core/float16.h"
#include "kernels/attention/attention_lanes_impl.h"
#include "kernels/simd/f32_kernels.h"
#include "kernels/simd/transpose16_avx512.h"
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

// Whole groups of 16 keys go through 16 x 16 register transposes (feature
// tails loaded with zeros, only the real features stored); a partial group
// is copied one value at a time.
void pack_key_block_avx512(const float* const* rows, int64_t n, int64_t d_len, float* kt) {
  int64_t j0 = 0;
  for (; j0 + 16 <= n; j0 += 16)
    for (int64_t d0 = 0; d0 < d_len; d0 += 16) {
      const int64_t w = std::min<int64_t>(16, d_len - d0);
      const __mmask16 m = static_cast<__mmask16>((1u << w) - 1u);
      __m512 in[16], out[16];
      for (int i = 0; i < 16; ++i) in[i] = _mm512_maskz_loadu_ps(m, rows[j0 + i] + d0);
      simd::transpose16x16(in, out);
      for (int64_t k = 0; k < w; ++k) _mm512_storeu_ps(kt + (d0 + k) * kKeyBlock + j0, out[k]);
    }
  for (int64_t j = j0; j < n; ++j)
    for (int64_t d = 0; d < d_len; ++d) kt[d * kKeyBlock + j] = rows[j][d];
}

}  // namespace

const AttentionLanes& attention_lanes_avx512() {
  static const AttentionLanes k{cpu::Isa::Avx512,
                                block_scores<simd::V512>,
                                softmax_block<simd::V512>,
                                accumulate_pv<simd::V512>,
                                pack_key_block_avx512,
                                scale_row<simd::V512>,
                                simd::f32_kernels_avx512().exp,
                                simd::f32_kernels_avx512().tanh,
                                half_to_float_avx512,
                                float_to_half_avx512};
  return k;
}

}  // namespace attention
}  // namespace onnxmini
