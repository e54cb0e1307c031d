// 8 x 8 transpose of 32-bit lanes in ymm registers: the AVX2 counterpart of
// transpose16_avx512.h, used by nn/conv_lanes_avx2.cc to turn its
// [column][channel] strip into NCHW rows. Pure shuffles (bits moved
// unchanged). Include only from files compiled with AVX2 flags (*_avx2.cc).
#pragma once
#include <immintrin.h>

namespace onnxmini {
namespace simd {

// out[k] lane i = in[i] lane k. Three stages, 24 shuffles:
//  1. unpack pairs of rows (32-bit interleave inside each 128-bit half),
//  2. shuffle_ps pairs of those (64-bit interleave): half h of u[4g+q] holds
//     rows 4g..4g+3 at column 4h+q,
//  3. permute2f128 to join the halves of rows 0..3 and 4..7 of one column.
inline void transpose8x8(const __m256 in[8], __m256 out[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(in[i], in[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(in[i], in[i + 1]);
  }
  for (int g = 0; g < 2; ++g) {
    const __m256* x = t + 4 * g;
    u[4 * g + 0] = _mm256_shuffle_ps(x[0], x[2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 1] = _mm256_shuffle_ps(x[0], x[2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * g + 2] = _mm256_shuffle_ps(x[1], x[3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 3] = _mm256_shuffle_ps(x[1], x[3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int q = 0; q < 4; ++q) {
    out[q] = _mm256_permute2f128_ps(u[q], u[4 + q], 0x20);      // column q
    out[4 + q] = _mm256_permute2f128_ps(u[q], u[4 + q], 0x31);  // column 4 + q
  }
}

}  // namespace simd
}  // namespace onnxmini
