// 16 x 16 transpose of 32-bit lanes in zmm registers, shared by the SGEMM
// packing (gemm/sgemm_kernel_avx512.cc) and the Transpose op
// (tensor/transpose_simd_avx512.cc). Pure shuffles: the bits of each lane are
// moved unchanged, so it serves float32, int32 and uint32 alike (as __m512).
// Include only from files compiled with AVX-512 flags (*_avx512.cc).
#pragma once
#include <immintrin.h>

namespace onnxmini {
namespace simd {

// out[k] lane i = in[i] lane k. Three stages, 48 shuffles:
//  1. unpack pairs of rows (32-bit interleave inside each 128-bit block),
//  2. shuffle_ps pairs of those (64-bit interleave): each 128-bit block b of
//     in-row group g now holds rows 4g..4g+3 of one column 4b+q,
//  3. shuffle_f32x4 twice to gather the four 128-bit blocks of a column.
inline void transpose16x16(const __m512 in[16], __m512 out[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {  // t[i] block b: in_i[4b], in_i+1[4b], in_i[4b+1], in_i+1[4b+1]
    t[i] = _mm512_unpacklo_ps(in[i], in[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(in[i], in[i + 1]);
  }
  for (int g = 0; g < 4; ++g) {  // u[4g+q] block b: rows 4g..4g+3 at column 4b+q
    const __m512* x = t + 4 * g;
    u[4 * g + 0] = _mm512_shuffle_ps(x[0], x[2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 1] = _mm512_shuffle_ps(x[0], x[2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * g + 2] = _mm512_shuffle_ps(x[1], x[3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 3] = _mm512_shuffle_ps(x[1], x[3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int q = 0; q < 4; ++q) {  // gather block b of u[q], u[4+q], u[8+q], u[12+q] -> column 4b+q
    const __m512 w0 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0x88), w1 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0xdd);
    const __m512 w2 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0x88);
    const __m512 w3 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0xdd);
    out[q] = _mm512_shuffle_f32x4(w0, w2, 0x88);       // column q
    out[4 + q] = _mm512_shuffle_f32x4(w1, w3, 0x88);   // column 4 + q
    out[8 + q] = _mm512_shuffle_f32x4(w0, w2, 0xdd);   // column 8 + q
    out[12 + q] = _mm512_shuffle_f32x4(w1, w3, 0xdd);  // column 12 + q
  }
}

}  // namespace simd
}  // namespace onnxmini
