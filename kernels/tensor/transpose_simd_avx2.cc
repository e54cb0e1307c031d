// AVX2 tile transpose for 4-byte elements (see transpose_simd.h).
//
// Layout and blocking: as the AVX-512 version with 8 x 8 blocks in ymm
// registers: 8 source row loads of 8 lanes, an in-register transpose
// (unpack 32-bit pairs, shuffle 64-bit pairs, swap 128-bit halves), 8
// destination row stores. Column strips outer, source rows inner, so the 8
// destination rows being written each advance contiguously. Edge blocks use
// maskload (missing rows as zeros) and maskstore of the valid lanes.
#include <immintrin.h>

#include "kernels/tensor/transpose_simd.h"

namespace onnxmini {
namespace tensor_ops {

namespace {

// out[k] lane i = in[i] lane k.
inline void transpose8x8(const __m256 in[8], __m256 out[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {  // t[i] half h: in_i[4h], in_i+1[4h], in_i[4h+1], in_i+1[4h+1]
    t[i] = _mm256_unpacklo_ps(in[i], in[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(in[i], in[i + 1]);
  }
  for (int g = 0; g < 2; ++g) {  // u[4g+q] half h: rows 4g..4g+3 at column 4h+q
    const __m256* x = t + 4 * g;
    u[4 * g + 0] = _mm256_shuffle_ps(x[0], x[2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 1] = _mm256_shuffle_ps(x[0], x[2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * g + 2] = _mm256_shuffle_ps(x[1], x[3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 3] = _mm256_shuffle_ps(x[1], x[3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int q = 0; q < 4; ++q) {  // low halves -> column q, high halves -> column 4 + q
    out[q] = _mm256_permute2f128_ps(u[q], u[4 + q], 0x20);
    out[4 + q] = _mm256_permute2f128_ps(u[q], u[4 + q], 0x31);
  }
}

// Lanes 0..n-1 set, for maskload / maskstore.
inline __m256i lane_mask(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

void block_full(const float* src, int64_t ld_src, float* dst, int64_t ld_dst) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ld_src);
  transpose8x8(r, t);
  for (int k = 0; k < 8; ++k) _mm256_storeu_ps(dst + k * ld_dst, t[k]);
}

// rn source rows x cn source columns, both in 1..8.
void block_edge(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int rn, int cn) {
  const __m256i load_mask = lane_mask(cn), store_mask = lane_mask(rn);
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = i < rn ? _mm256_maskload_ps(src + i * ld_src, load_mask) : _mm256_setzero_ps();
  transpose8x8(r, t);
  for (int k = 0; k < cn; ++k) _mm256_maskstore_ps(dst + k * ld_dst, store_mask, t[k]);
}

}  // namespace

void transpose32_tile_avx2(const uint32_t* src_u, int64_t ld_src, uint32_t* dst_u, int64_t ld_dst, int64_t rows,
                           int64_t cols, bool prefetch) {
  // Bit patterns only move through shuffles: float lanes are exact for any 4-byte type.
  const float* src = reinterpret_cast<const float*>(src_u);
  float* dst = reinterpret_cast<float*>(dst_u);
  walk_blocks<8>(
      src, ld_src, dst, ld_dst, rows, cols, prefetch,
      [&](const float* s, float* d) { block_full(s, ld_src, d, ld_dst); },
      [&](const float* s, float* d, int rn, int cn) { block_edge(s, ld_src, d, ld_dst, rn, cn); });
}

}  // namespace tensor_ops
}  // namespace onnxmini
