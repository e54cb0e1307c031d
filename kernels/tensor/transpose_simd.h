// SIMD tile transposes for 4-byte elements (float32, int32, uint32: moved as
// uint32_t bit patterns), used by Transpose's 2-D tiled path
// (kernels/tensor/transpose.cc). Each ISA file transposes one tile with
// register block transposes: 16 x 16 in zmm (transpose_simd_avx512.cc) or
// 8 x 8 in ymm (transpose_simd_avx2.cc); edge blocks use masked loads/stores.
#pragma once
#include <xmmintrin.h>  // _mm_prefetch (SSE: every x86-64)

#include <algorithm>
#include <cstdint>

#include "core/cpu_features.h"

namespace onnxmini {
namespace tensor_ops {

// dst[c * ld_dst + r] = src[r * ld_src + c] for r < rows, c < cols. Any rows,
// cols >= 1; the caller sizes tiles so both sides stay in L1. prefetch: touch
// each source row one cache line (16 elements) ahead of the column strip being
// read, for tiles with more rows than the hardware streamer tracks.
using Transpose32TileFn = void (*)(const uint32_t* src, int64_t ld_src, uint32_t* dst, int64_t ld_dst, int64_t rows,
                                   int64_t cols, bool prefetch);

void transpose32_tile_avx512(const uint32_t* src, int64_t ld_src, uint32_t* dst, int64_t ld_dst, int64_t rows,
                             int64_t cols, bool prefetch);
void transpose32_tile_avx2(const uint32_t* src, int64_t ld_src, uint32_t* dst, int64_t ld_dst, int64_t rows,
                           int64_t cols, bool prefetch);

// The routine for `isa`; nullptr at the portable level (the scalar tiles run).
inline Transpose32TileFn transpose32_tile_for(cpu::Isa isa) {
  switch (isa) {
    case cpu::Isa::Avx512: return &transpose32_tile_avx512;
    case cpu::Isa::Avx2: return &transpose32_tile_avx2;
    default: return nullptr;
  }
}

// The block walk of both ISA files (B = 16 or 8 lanes): column strips of B
// source columns outer (= B destination rows, each then advancing
// contiguously), source rows inner. full(src, dst) moves a B x B block,
// edge(src, dst, rn, cn) an rn x cn one. Instantiate only from the ISA files.
template <int B, typename Full, typename Edge>
inline void walk_blocks(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t rows, int64_t cols,
                        bool prefetch, Full full, Edge edge) {
  for (int64_t c = 0; c < cols; c += B) {
    if (prefetch && c % 16 == 0)  // the next cache line of every source row (a prefetch never faults)
      for (int64_t r = 0; r < rows; ++r) _mm_prefetch(reinterpret_cast<const char*>(src + r * ld_src + c + 16), _MM_HINT_T0);
    const int cn = static_cast<int>(std::min<int64_t>(B, cols - c));
    for (int64_t r = 0; r < rows; r += B) {
      const int rn = static_cast<int>(std::min<int64_t>(B, rows - r));
      if (rn == B && cn == B) full(src + r * ld_src + c, dst + c * ld_dst + r);
      else edge(src + r * ld_src + c, dst + c * ld_dst + r, rn, cn);
    }
  }
}

}  // namespace tensor_ops
}  // namespace onnxmini
