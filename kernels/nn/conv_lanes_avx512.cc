// conv2d_lanes: direct 2-D float32 convolution, output channels in the
// AVX-512 vector lanes (16 per zmm). The register tiles, the transposing store
// and the stride-2 pad are here; the input views, edge segments and task split
// described below are in conv_lanes_driver.h (shared with conv_lanes_avx2.cc),
// the filter packing and dispatch rule in conv_lanes.cc.
//
// Layout. Filter: LanesFilter (conv_lanes.h), per group of up to 64 output
// channels [k = (c, kh, kw)][width], so one tap's weights for the group are
// NB = width / 16 consecutive zmm. Input, three ways; tap k of output (oh, ow)
// is always base[off(oh) + koff[k] + ow * col_stride]:
// - no padding, no affine: X itself, column stride = stride_w.
// - fused input affine (BatchNormalization in front): the whole zero-padded,
//   transformed copy (PaddedLayout, conv_implicit.h; column-parity planes, so
//   consecutive output columns are consecutive floats at any stride), made by
//   pad_input_s2 for stride_w 2 (AVX-512: padded row, then two permutes per 32
//   columns; the portable scalar stride-2 gather was ~half of the pad time).
// - padding, no affine: no image copy. A row is split into Segments: columns
//   whose taps all lie inside X read X in place (column stride stride_w); the
//   edge columns (widened to at least one full 6-column tile, so no 1-column
//   tile runs there) and whole rows touching the top / bottom padding read a
//   per-task padded copy eb[c][r][Wp] of the R = (KH-1)*dh+1 input rows the
//   task needs, filled only over the columns those tiles read. On small.onnx's
//   n11 (3x3 stride 2, 64 -> 64, 112 -> 56) the full padded copy had been
//   ~11% of the node (it writes and re-reads 3.3 MB, more than L2); reading in
//   place: n11 median 1922 -> 1665 us (7 interleaved runs, docs/kernels/nn.md).
//   A per-task ring of all R padded rows (copy only the rows the previous task
//   lacked) lost to the full copy (n11 -105..-183 us vs main where the full
//   AVX-512 copy gave -111..-281; n9 slower too). set_lanes_pad_copy(true)
//   forces the full copy, for tests.
//
// Registers. A tile is NB zmm (NB * 16 output channels) x NC output columns of
// one output row: NB * NC accumulators, NB weight vectors, one broadcast.
// 4 x 6 (24 + 4 + 1 = 29 of 32 zmm): per tap 4 aligned weight loads + 6 scalar
// broadcasts (one load uop each; the column stride costs nothing) feed 24
// independent FMA chains, more than the 2 FMA pipes x 4-cycle latency need.
// 4 x 7 (28 + 4 = 32 registers, no room for the broadcast) was chosen against
// on that count. Profiled on small.onnx the 4 x 6 tile runs n9 close to the FMA
// peak. Groups of 1 or 2 zmm of channels (16 / 32 output channels, the last 32 of
// 96) take 12 columns instead (2 x 12: 24 + 2 + 1 registers, 24 FMAs per 14 loads
// where 2 x 6 had 12 per 8): measured 96 -> 32 3x3 at 52x52 935 -> 881 us,
// 96 -> 96 2502 -> 2434, 32 -> 32 316 -> 301, 96 -> 16 739 -> 667 (Xeon,
// AVX-512, 1 thread, min of 50 runs, 3 interleaved rounds).
//
// Columns: full 6-column (12 for 1-2 zmm) tiles, except that a 1..3-column remainder behind a
// full tile is merged with it and split evenly (56 = 8 x 6 + 4 + 4; the 2-column
// tile ran at ~100 GFLOPS: 4 weight loads per 8 FMAs): n11 -22..-44 us (4 of 4
// interleaved runs).
//
// Blocking. A task is one output row of one channel group. Its strip of
// accumulated results lives in a per-task buffer t[ow][width] (OW x 256 bytes,
// 28 KiB for OW = 112, L1/L2). The input channels are walked in chunks whose
// weights (chunk * KH*KW * width * 4 bytes) stay under kChunkBytes = 32 KiB
// (L1 is 48 KiB here), so they sit in L1 while every column tile of the row
// reuses them; partial sums go back to t between chunks (24 loads + 24 stores
// per chunk of ~128 taps x 24 FMAs). Chunks are of equal size (+-1 channel).
// Measured on the 64-channel 3x3 layers: 8, 16, 32 KiB and no chunking (each
// 6-column tile streaming the whole 147 KiB filter from L2) were within noise on
// this Sapphire Rapids (2 MiB L2); 32 KiB keeps the filter stream out of L2 on
// machines with smaller L2 and costs the 3-channel layer nothing (one chunk).
// 16 KiB measured slower (3 interleaved runs: n9 +150..+320 us, n11
// +130..+210). Software-prefetching the next row's input into L2 during a row
// was slower too (vs main in the same runs: n9 +480..+535 us, n11 only
// -65..-104 where the change without it gave -111..-281).
//
// Epilogue. On the last chunk, bias (a vector: 16 channels), then Relu / Clip /
// Sigmoid / PRelu (per-channel slope vector) on the accumulators before they are
// stored to t (gemm/epilogue_avx512.h, the SGEMM tile epilogue with bias per
// column = per channel here). Then t is transposed 16 columns x 16 channels at a
// time into the NCHW output rows (the SGEMM's SIMD transposing pack, masked at
// the row's end).
//
// Threads: parallel_for over (channel group, output row) with a grain of at
// least ~2 MFLOP per chunk of tasks. Each output element is computed by the same
// instruction sequence whatever the split, so results do not depend on threads.
// GCC 12 reports a false -Wmaybe-uninitialized inside its own masked-intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/gemm_engine/epilogue_avx512.h"
#include "kernels/gemm_engine/sgemm_kernel.h"
#include "kernels/nn/conv_lanes_driver.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace nn {
namespace {

constexpr int kLanes = 16;
constexpr int kMaxNB = kLanesGroup / kLanes;  // zmm per tile row: 64 output channels
constexpr int kNC = 6;     // output columns per tile (3 or 4 zmm of channels)
constexpr int kNCNarrow = 12;  // output columns per tile with 1 or 2 zmm of channels
constexpr int64_t kChunkBytes = 32 * 1024;

struct TileArgs {
  const float* w;       // the chunk's weights, w[k * NB * 16 + lane]
  const float* x;       // input for the tile's first output column; tap k at x + koff[k]
  const int64_t* koff;  // the chunk's tap offsets
  int64_t kn;           // taps in the chunk
  int64_t cs;           // input floats between consecutive output columns
  float* t;             // strip at the tile's first column, t[j * ldt + b * 16 + lane]
  int64_t ldt;
  bool first;                  // accumulators start at zero instead of from t
  const gemm::TileEpi* epi;    // last chunk only: bias (+ activation), offset to the group's channel 0
  __mmask16 last_mask;         // real channels of the last block (bias / slope loads stay in bounds)
};

template <int NB, int NC>
void tile(const TileArgs& a) {
  __m512 acc[NB][NC];
#pragma GCC unroll 16
  for (int j = 0; j < NC; ++j)
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b)
      acc[b][j] = a.first ? _mm512_setzero_ps() : _mm512_loadu_ps(a.t + j * a.ldt + b * kLanes);
  const float* w = a.w;
  const int64_t cs = a.cs;
  for (int64_t k = 0; k < a.kn; ++k, w += NB * kLanes) {
    const float* xk = a.x + a.koff[k];
    __m512 wv[NB];
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) wv[b] = _mm512_load_ps(w + b * kLanes);
#pragma GCC unroll 16
    for (int j = 0; j < NC; ++j) {
      const __m512 xv = _mm512_set1_ps(xk[j * cs]);
#pragma GCC unroll 4
      for (int b = 0; b < NB; ++b) acc[b][j] = _mm512_fmadd_ps(wv[b], xv, acc[b][j]);
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < NC; ++j)
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) {
      __m512 v = acc[b][j];
      if (a.epi) v = gemm::epilogue_ps(v, *a.epi, 0, b * kLanes, b == NB - 1 ? a.last_mask : __mmask16(0xFFFF));
      _mm512_storeu_ps(a.t + j * a.ldt + b * kLanes, v);
    }
}

using TileFn = void (*)(const TileArgs&);

template <int NB, int... C>
constexpr std::array<TileFn, kNCNarrow> row_of(std::integer_sequence<int, C...>) {
  return {&tile<NB, C + 1>...};  // entries past the list stay null
}
// kTiles[NB - 1][NC - 1]: up to 12 columns for 1 and 2 zmm of channels, 6 for 3 and 4.
const std::array<TileFn, kNCNarrow> kTiles[kMaxNB] = {
    row_of<1>(std::make_integer_sequence<int, kNCNarrow>{}), row_of<2>(std::make_integer_sequence<int, kNCNarrow>{}),
    row_of<3>(std::make_integer_sequence<int, kNC>{}), row_of<4>(std::make_integer_sequence<int, kNC>{})};

// One output row `oh` of channel group `grp` for one image: chunks of input
// channels over all column tiles into t, then the transposing store into y.
void row_task(const ConvGeom& g, const LanesFilter& f, const Segment* segs, int nsegs, const gemm::TileEpi& epi0,
              int64_t grp, int64_t oh, float* t, float* y) {
  const int64_t OW = g.win.out[1], P = g.win.out_size(), KK = f.KH * f.KW, K = f.C * KK;
  const int64_t m0 = grp * kMaxNB * kLanes, mrem = g.M - m0;
  const int nb = static_cast<int>(std::min<int64_t>(kMaxNB, (mrem + kLanes - 1) / kLanes));
  const int64_t width = nb * kLanes;
  // Real channels in the group's last block, 1..16 (mrem counts all later groups too).
  const int last_ch = static_cast<int>(std::min<int64_t>(kLanes, mrem - (nb - 1) * kLanes));
  const float* w = f.data() + m0 * K;
  // Chunks of at most kChunkBytes of weights, of equal size (+-1 channel) so
  // that no chunk is a short tail paying the full accumulator load/store.
  const int64_t cb_max = std::max<int64_t>(1, kChunkBytes / (KK * width * 4));
  const int64_t chunks = (f.C + cb_max - 1) / cb_max;
  gemm::TileEpi epi = epi0;
  if (epi.bias) epi.bias += m0;
  if (epi.slope) epi.slope += m0;
  TileArgs a;
  a.ldt = width;
  a.last_mask = static_cast<__mmask16>(last_ch >= 16 ? 0xFFFF : (1u << last_ch) - 1);
  // A group of 1 or 2 zmm of channels (M = 16, 32, the last 32 of M = 96) takes
  // 12-column tiles: 2 x 6 fed its 12 FMAs per tap with 8 loads and ran a 96 -> 32
  // 3x3 layer at 163 GFLOP/s against 192 for 96 -> 48 / 64 (Xeon, AVX-512).
  const int64_t ncmax = nb <= 2 ? kNCNarrow : kNC;
  for (int64_t ci = 0; ci < chunks; ++ci) {
    const int64_t c0 = ci * f.C / chunks, c1 = (ci + 1) * f.C / chunks;
    const int64_t k0 = c0 * KK, kn = (c1 - c0) * KK;
    a.w = w + k0 * width, a.kn = kn;
    a.first = ci == 0;
    a.epi = ci == chunks - 1 ? &epi : nullptr;
    for (int si = 0; si < nsegs; ++si) {
      const Segment& sg = segs[si];
      a.koff = sg.koff + k0, a.cs = sg.cs;
      for (int64_t ow0 = sg.ow0, nc = 0; ow0 < sg.ow1; ow0 += nc) {
        // Full tiles, except that a short remainder r < 4 behind a full tile is
        // merged with it and split evenly (6 + 2 -> 4 + 4, 6 + 1 -> 4 + 3, 6 + 3 -> 5 + 4):
        // the 1- and 2-column tiles load 4 weight vectors per 4 or 8 FMAs.
        const int64_t left = sg.ow1 - ow0;
        nc = left >= ncmax + 4 || left <= ncmax ? std::min<int64_t>(ncmax, left) : (left + 1) / 2;
        a.x = sg.base + (sg.off + ow0 * sg.cs);
        a.t = t + ow0 * width;
        kTiles[nb - 1][static_cast<int>(nc) - 1](a);
      }
    }
  }
  const gemm::PackTransposed transpose = gemm::sgemm_kernels_avx512().pack_t;
  for (int64_t col0 = 0; col0 < OW; col0 += 16) {
    const int cols = static_cast<int>(std::min<int64_t>(16, OW - col0));
    for (int b = 0; b < nb; ++b) {
      const int ch = b == nb - 1 ? last_ch : kLanes;
      transpose(t + col0 * width + b * kLanes, width, cols, ch, y + (m0 + b * kLanes) * P + oh * OW + col0, P, cols);
    }
  }
}

// pad_input for sw == 2 (same PaddedLayout, same values): each input row is
// laid out once as a padded row in a small buffer (memcpy, or the affine), then
// split into the two column-parity planes 16 + 16 at a time with two
// permutes. The portable pad_input gathers each plane with a scalar stride-2
// loop, which profiled at about half of the pad time on small.onnx.
void pad_input_s2(const Window& win, const PaddedLayout& L, const float* xg, int64_t channels,
                  const InputAffine& affine, float* xp, ThreadPool* pool) {
  const int64_t H = win.in[0], W = win.in[1], pt = win.pad_begin[0], pl = win.pad_begin[1], IP = win.in_size();
  const int64_t Wq = L.Wq, Wq16 = (Wq + kLanes - 1) / kLanes * kLanes;
  parallel_for(pool, channels, 4, [&](int64_t c0, int64_t c1) {
    // Padded row p at tmp[p]; zeros past pl + W up to 2 * Wq16 (whole vectors).
    std::vector<float> tmp_v(static_cast<size_t>(2 * Wq16 + kLanes), 0.0f);
    float* tmp = tmp_v.data();
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    for (int64_t c = c0; c < c1; ++c) {
      const float* xc = xg + c * IP;
      float* p0 = xp + c * L.channel();
      float* p1 = p0 + L.plane();
      const float scale = affine ? affine.scale[c] : 1.0f, shift = affine ? affine.shift[c] : 0.0f;
      for (int64_t hp = 0; hp < L.Hp; ++hp) {
        float* r0 = p0 + hp * Wq;
        float* r1 = p1 + hp * Wq;
        const int64_t ih = hp - pt;
        if (ih < 0 || ih >= H) {
          std::memset(r0, 0, sizeof(float) * Wq);
          std::memset(r1, 0, sizeof(float) * Wq);
          continue;
        }
        const float* src = xc + ih * W;
        if (affine) {
          const __m512 sv = _mm512_set1_ps(scale), bv = _mm512_set1_ps(shift);
          for (int64_t i = 0; i < W; i += kLanes) {
            const __mmask16 m = static_cast<__mmask16>(W - i >= kLanes ? 0xFFFF : (1u << (W - i)) - 1);
            _mm512_mask_storeu_ps(tmp + pl + i, m, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, src + i), sv, bv));
          }
        } else {
          std::memcpy(tmp + pl, src, sizeof(float) * W);
        }
        for (int64_t t0 = 0; t0 < Wq; t0 += kLanes) {
          const __m512 a = _mm512_loadu_ps(tmp + 2 * t0), b = _mm512_loadu_ps(tmp + 2 * t0 + kLanes);
          const int64_t n = std::min<int64_t>(kLanes, Wq - t0);
          const __mmask16 m = static_cast<__mmask16>(n >= kLanes ? 0xFFFF : (1u << n) - 1);
          _mm512_mask_storeu_ps(r0 + t0, m, _mm512_permutex2var_ps(a, even, b));
          _mm512_mask_storeu_ps(r1 + t0, m, _mm512_permutex2var_ps(a, odd, b));
        }
      }
    }
  });
}

// The ISA half of lanes_drive (conv_lanes_driver.h).
struct Avx512Lanes {
  static constexpr int kNC = nn::kNC;
  static void row_task(const ConvGeom& g, const LanesFilter& f, const Segment* segs, int nsegs,
                       const gemm::TileEpi& epi0, int64_t grp, int64_t oh, float* t, float* y) {
    nn::row_task(g, f, segs, nsegs, epi0, grp, oh, t, y);
  }
  static void pad(const Window& win, const PaddedLayout& L, const float* xg, int64_t channels,
                  const InputAffine& affine, float* xp, ThreadPool* pool) {
    if (L.sw == 2)
      pad_input_s2(win, L, xg, channels, affine, xp, pool);
    else
      pad_input(win, L, xg, 0, channels, affine, xp, pool);
  }
};

}  // namespace

void conv2d_lanes_avx512(KernelContext& ctx, const ConvGeom& g, const float* x, const LanesFilter& f,
                         const gemm::Epilogue& epi, const InputAffine& affine, float* y) {
  lanes_drive<Avx512Lanes>(ctx, g, x, f, epi, affine, y);
}

}  // namespace nn
}  // namespace onnxmini
