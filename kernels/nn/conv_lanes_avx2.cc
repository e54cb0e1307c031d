// conv2d_lanes on AVX2 + FMA: direct 2-D float32 convolution, output channels
// in the vector lanes (8 per ymm). The AVX2 twin of conv_lanes_avx512.cc: the
// same filter layout (conv_lanes.cc), input views, edge segments, chunking and
// task split (conv_lanes_driver.h); only the register tile, the epilogue and
// the transposing store differ.
//
// Layout. Filter: LanesFilter, per group of up to 64 output channels
// [k = (c, kh, kw)][width]. A tile covers 16 of the group's channels (a
// sub-block: 2 ymm at offset 16 * sb of each tap's row, one 64-byte line), so
// the group is walked in width / 16 sub-blocks per column tile; the input
// scalars of the tile's columns stay in L1 across the sub-blocks.
//
// Registers. AVX2 has 16 ymm. A tile is 2 ymm (16 channels) x NC = 6 output
// columns of one output row: 12 accumulators + 2 weight vectors + 1 broadcast
// = 15 registers; per tap 2 aligned weight loads + 6 broadcast loads feed 12
// independent FMA chains (2 FMA pipes x 4-cycle latency need 8). The AVX-512
// tile shape 4 x 6 would need 29 registers. Alternatives with 12 accumulators:
// 3 x 4 (16 registers, 7 loads per 12 FMAs instead of 8) puts 24 channels in a
// tile, which does not divide the 64-channel groups nor the usual 16/32/64
// channel counts, and leaves more short column tiles; 4 x 2 loads 6 per 8
// FMAs. 2 x 6 is also the AVX2 SGEMM's tile (6 rows x 16 columns), transposed.
//
// Columns: full 6-column tiles, a 1..3-column remainder behind a full tile
// merged with it and split evenly (as on AVX-512).
//
// Blocking. A task is one output row of one channel group; results accumulate
// in the per-task strip t[ow][width] (L1/L2). Input channels are walked in
// chunks whose weights (chunk * KH*KW * width * 4 bytes) stay under 32 KiB, so
// every column tile of the row reuses them from L1; partial sums go back to t
// between chunks.
//
// Epilogue. On the last chunk: bias, then Relu / Clip / Sigmoid / PRelu on the
// accumulators (gemm/epilogue_avx2.h; bias / slope loads masked to the real
// channels of the last sub-block). Then t is transposed 8 columns x 8 channels
// at a time (simd/transpose8_avx2.h) into the NCHW output rows; partial 8 x 8
// blocks at the row's end or the group's last channels are copied scalar.
//
// Stride-2 padded copy (fused input affine): the portable pad_input.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "kernels/gemm_engine/epilogue_avx2.h"
#include "kernels/nn/conv_lanes_driver.h"
#include "kernels/simd/transpose8_avx2.h"

namespace onnxmini {
namespace nn {
namespace {

constexpr int kLanes = 8;
constexpr int kBlock = 16;  // channels per tile: 2 ymm
constexpr int kNC = 6;      // output columns per tile
constexpr int64_t kChunkBytes = 32 * 1024;

struct TileArgs {
  const float* w;       // the chunk's weights for the sub-block, tap k at w + k * ldw
  int64_t ldw;          // floats between taps (the group's width)
  const float* x;       // input for the tile's first output column; tap k at x + koff[k]
  const int64_t* koff;  // the chunk's tap offsets
  int64_t kn;           // taps in the chunk
  int64_t cs;           // input floats between consecutive output columns
  float* t;             // strip at the tile's first column and the sub-block's channel 0
  int64_t ldt;
  bool first;                // accumulators start at zero instead of from t
  const gemm::TileEpi* epi;  // last chunk only: offset to the sub-block's channel 0
  int valid;                 // real channels of the sub-block, 1..16 (bias / slope loads)
};

template <int NC>
void tile(const TileArgs& a) {
  __m256 acc0[NC], acc1[NC];
#pragma GCC unroll 8
  for (int j = 0; j < NC; ++j) {
    acc0[j] = a.first ? _mm256_setzero_ps() : _mm256_loadu_ps(a.t + j * a.ldt);
    acc1[j] = a.first ? _mm256_setzero_ps() : _mm256_loadu_ps(a.t + j * a.ldt + kLanes);
  }
  const float* w = a.w;
  const int64_t cs = a.cs, ldw = a.ldw;
  for (int64_t k = 0; k < a.kn; ++k, w += ldw) {
    const float* xk = a.x + a.koff[k];
    const __m256 w0 = _mm256_load_ps(w), w1 = _mm256_load_ps(w + kLanes);
#pragma GCC unroll 8
    for (int j = 0; j < NC; ++j) {
      const __m256 xv = _mm256_broadcast_ss(xk + j * cs);
      acc0[j] = _mm256_fmadd_ps(w0, xv, acc0[j]);
      acc1[j] = _mm256_fmadd_ps(w1, xv, acc1[j]);
    }
  }
  const int v0 = std::min(a.valid, kLanes), v1 = std::max(0, a.valid - kLanes);
#pragma GCC unroll 8
  for (int j = 0; j < NC; ++j) {
    __m256 r0 = acc0[j], r1 = acc1[j];
    if (a.epi) {
      r0 = gemm::epilogue8_ps(r0, *a.epi, 0, 0, v0);
      r1 = gemm::epilogue8_ps(r1, *a.epi, 0, kLanes, v1);
    }
    _mm256_storeu_ps(a.t + j * a.ldt, r0);
    _mm256_storeu_ps(a.t + j * a.ldt + kLanes, r1);
  }
}

using TileFn = void (*)(const TileArgs&);

template <int... C>
constexpr std::array<TileFn, kNC> tiles_of(std::integer_sequence<int, C...>) {
  return {&tile<C + 1>...};
}
const std::array<TileFn, kNC> kTiles = tiles_of(std::make_integer_sequence<int, kNC>{});  // kTiles[NC - 1]

// t[col][width] (channels [0, ch), columns [0, cols)) -> y[ch * P + col]:
// full 8 x 8 blocks through registers, the rest scalar.
void store_transposed(const float* t, int64_t width, int64_t cols, int64_t ch, float* y, int64_t P) {
  for (int64_t c0 = 0; c0 < ch; c0 += kLanes) {
    const int64_t cn = std::min<int64_t>(kLanes, ch - c0);
    int64_t j0 = 0;
    if (cn == kLanes) {
      for (; j0 + kLanes <= cols; j0 += kLanes) {
        __m256 in[8], out[8];
        for (int i = 0; i < 8; ++i) in[i] = _mm256_loadu_ps(t + (j0 + i) * width + c0);
        simd::transpose8x8(in, out);
        for (int r = 0; r < 8; ++r) _mm256_storeu_ps(y + (c0 + r) * P + j0, out[r]);
      }
    }
    for (int64_t c = c0; c < c0 + cn; ++c)
      for (int64_t j = j0; j < cols; ++j) y[c * P + j] = t[j * width + c];
  }
}

// One output row `oh` of channel group `grp` for one image: chunks of input
// channels over all column tiles (and, inside each, the group's 16-channel
// sub-blocks) into t, then the transposing store into y.
void row_task(const ConvGeom& g, const LanesFilter& f, const Segment* segs, int nsegs, const gemm::TileEpi& epi0,
              int64_t grp, int64_t oh, float* t, float* y) {
  const int64_t OW = g.win.out[1], P = g.win.out_size(), KK = f.KH * f.KW, K = f.C * KK;
  const int64_t m0 = grp * kLanesGroup, mrem = g.M - m0;
  const int nsub = static_cast<int>(std::min<int64_t>(kLanesGroup / kBlock, (mrem + kBlock - 1) / kBlock));
  const int64_t width = nsub * kBlock, real = std::min(width, mrem);
  const float* w = f.data() + m0 * K;
  // Chunks of at most kChunkBytes of weights, of equal size (+-1 channel).
  const int64_t cb_max = std::max<int64_t>(1, kChunkBytes / (KK * width * 4));
  const int64_t chunks = (f.C + cb_max - 1) / cb_max;
  gemm::TileEpi epi[kLanesGroup / kBlock];
  int valid[kLanesGroup / kBlock];
  for (int sb = 0; sb < nsub; ++sb) {
    epi[sb] = epi0;
    if (epi[sb].bias) epi[sb].bias += m0 + sb * kBlock;
    if (epi[sb].bias2) epi[sb].bias2 += m0 + sb * kBlock;
    if (epi[sb].slope) epi[sb].slope += m0 + sb * kBlock;
    valid[sb] = static_cast<int>(std::min<int64_t>(kBlock, real - sb * kBlock));
  }
  TileArgs a;
  a.ldw = width, a.ldt = width;
  for (int64_t ci = 0; ci < chunks; ++ci) {
    const int64_t c0 = ci * f.C / chunks, c1 = (ci + 1) * f.C / chunks;
    const int64_t k0 = c0 * KK, kn = (c1 - c0) * KK;
    a.kn = kn;
    a.first = ci == 0;
    const bool last = ci == chunks - 1;
    for (int si = 0; si < nsegs; ++si) {
      const Segment& sg = segs[si];
      a.koff = sg.koff + k0, a.cs = sg.cs;
      for (int64_t ow0 = sg.ow0, nc = 0; ow0 < sg.ow1; ow0 += nc) {
        const int64_t left = sg.ow1 - ow0;
        nc = left >= kNC + 4 || left <= kNC ? std::min<int64_t>(kNC, left) : (left + 1) / 2;
        a.x = sg.base + (sg.off + ow0 * sg.cs);
        const TileFn fn = kTiles[static_cast<size_t>(nc) - 1];
        for (int sb = 0; sb < nsub; ++sb) {
          a.w = w + k0 * width + sb * kBlock;
          a.t = t + ow0 * width + sb * kBlock;
          a.epi = last ? &epi[sb] : nullptr;
          a.valid = valid[sb];
          fn(a);
        }
      }
    }
  }
  store_transposed(t, width, OW, real, y + m0 * P + oh * OW, P);
}

// The ISA half of lanes_drive (conv_lanes_driver.h).
struct Avx2Lanes {
  static constexpr int kNC = nn::kNC;
  static void row_task(const ConvGeom& g, const LanesFilter& f, const Segment* segs, int nsegs,
                       const gemm::TileEpi& epi0, int64_t grp, int64_t oh, float* t, float* y) {
    nn::row_task(g, f, segs, nsegs, epi0, grp, oh, t, y);
  }
  static void pad(const Window& win, const PaddedLayout& L, const float* xg, int64_t channels,
                  const InputAffine& affine, float* xp, ThreadPool* pool) {
    pad_input(win, L, xg, 0, channels, affine, xp, pool);
  }
};

}  // namespace

void conv2d_lanes_avx2(KernelContext& ctx, const ConvGeom& g, const float* x, const LanesFilter& f,
                       const gemm::Epilogue& epi, const InputAffine& affine, float* y) {
  lanes_drive<Avx2Lanes>(ctx, g, x, f, epi, affine, y);
}

}  // namespace nn
}  // namespace onnxmini
