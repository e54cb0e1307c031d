// AVX-512 tile transpose for 4-byte elements (see transpose_simd.h).
//
// Layout and blocking: the tile is cut into 16 x 16 blocks. A block loads 16
// source rows of 16 lanes (one zmm each, a full 64-byte row segment), is
// transposed in registers (simd::transpose16x16), and stores 16 destination
// rows of 16 lanes, so every memory access is a full-vector row access and no
// element is touched twice. Blocks are walked column strip by column strip
// (source columns c..c+15 = destination rows), and down the source rows
// inside a strip, so each of the 16 destination rows being written advances
// contiguously. Edge blocks (rows or cols not a multiple of 16) use masked
// loads (missing rows read as zeros) and masked stores of the valid lanes.
// GCC 12 reports a false -W(maybe-)uninitialized inside its own AVX-512 intrinsic headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/simd/transpose16_avx512.h"
#include "kernels/tensor/transpose_simd.h"

namespace onnxmini {
namespace tensor_ops {

namespace {

void block_full(const float* src, int64_t ld_src, float* dst, int64_t ld_dst) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ld_src);
  simd::transpose16x16(r, t);
  for (int k = 0; k < 16; ++k) _mm512_storeu_ps(dst + k * ld_dst, t[k]);
}

// rn source rows x cn source columns, both in 1..16.
void block_edge(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int rn, int cn) {
  const __mmask16 load_mask = static_cast<__mmask16>((1u << cn) - 1);
  const __mmask16 store_mask = static_cast<__mmask16>((1u << rn) - 1);
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = i < rn ? _mm512_maskz_loadu_ps(load_mask, src + i * ld_src) : _mm512_setzero_ps();
  simd::transpose16x16(r, t);
  for (int k = 0; k < cn; ++k) _mm512_mask_storeu_ps(dst + k * ld_dst, store_mask, t[k]);
}

}  // namespace

void transpose32_tile_avx512(const uint32_t* src_u, int64_t ld_src, uint32_t* dst_u, int64_t ld_dst, int64_t rows,
                             int64_t cols, bool prefetch) {
  // Bit patterns only move through shuffles: float lanes are exact for any 4-byte type.
  const float* src = reinterpret_cast<const float*>(src_u);
  float* dst = reinterpret_cast<float*>(dst_u);
  walk_blocks<16>(
      src, ld_src, dst, ld_dst, rows, cols, prefetch,
      [&](const float* s, float* d) { block_full(s, ld_src, d, ld_dst); },
      [&](const float* s, float* d, int rn, int cn) { block_edge(s, ld_src, d, ld_dst, rn, cn); });
}

}  // namespace tensor_ops
}  // namespace onnxmini
