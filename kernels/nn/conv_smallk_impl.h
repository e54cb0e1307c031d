// The ISA-independent part of conv2d_smallk (conv_smallk.h): the per-row input
// buffer, the filter transpose, the column / channel tiling of a row and the
// task split. The register tile is the ISA's (Isa below): conv_smallk_avx512.cc
// and conv_smallk_avx2.cc each instantiate smallk_drive. Include only from
// those files: everything here is in an unnamed namespace, so each gets its own
// copy compiled with its own flags (the linker cannot merge an AVX-512 copy
// into the AVX2 path).
//
// Layout. Output row oh of image n is computed from a small buffer holding, for
// each input channel c and kernel row kh, input row ih = oh * sh - pt + kh * dh
// zero-padded left and right and split into sw column-parity planes of Wq
// floats (plane q, float t = padded column q + sw * t; sw = 1: the padded row
// itself). Tap (c, kh, kw) of output column ow then reads plane (kw * dw) % sw
// at float ow + (kw * dw) / sw: consecutive output columns are consecutive
// floats at stride 1 and 2, so a tap's input for V output columns is one
// unaligned load. Rows above / below the image are zeros. A fused input affine
// is applied while a row is copied in (the padding stays 0). The buffer is
// C * KH * sw * Wq floats (12.7 KiB for a 3-channel 3x3 stride-2 layer 320
// wide): L1.
//
// Registers. A tile is NS vectors of output columns x MB output channels:
// NS * MB accumulators; per tap NS loads from the buffer, MB broadcasts of the
// filter (transposed once per call to wt[k][M], so a tap's broadcasts are
// consecutive floats) and NS * MB FMAs. Each result is stored once, with the
// epilogue (bias, residual, activation per output channel), straight into its
// NCHW output row; the last vector of a row is masked.
//
// Threads: parallel_for over the N * OH output rows, a grain of at least
// kSmallKTaskFlops per chunk of rows (each chunk fills its own buffer).
// Every output element is computed by the same instruction sequence whatever
// the split.
#pragma once
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gemm_engine/sgemm_kernel.h"
#include "kernels/nn/conv_depthwise.h"
#include "kernels/nn/conv_smallk.h"

namespace onnxmini {
namespace nn {
namespace {

// Work per chunk of output rows before a second thread takes some: ~0.1 ms
// of FMAs at 2 threads would otherwise run on one.
constexpr double kSmallKTaskFlops = 2.5e5;

// One tile call: output columns [ow0, ow0 + ns * V) of one output row, channels
// [m0, m0 + mb).
struct SmallKTile {
  const float* x;         // the row buffer at output column ow0; tap k at x + toff[k]
  const int64_t* toff;    // K tap offsets into the buffer
  int64_t K;
  const float* wt;        // transposed filter at channel m0: tap k, channel m0 + j at wt[k * ldw + j]
  int64_t ldw;            // M
  float* y;               // output channel m0's row at column ow0; channel m0 + j at y + j * P
  int64_t P;
  const gemm::TileEpi* epi;  // rows = output channels (per_row), columns within the output row
  int64_t m0, ow0;
  int last_valid;         // real columns of the tile's last vector, 1..V
  // mode kClamp: the epilogue is only bias (per channel) and a clamp to [lo, hi] (none:
  // +-inf; Relu: [0, inf); Clip); kHard: bias, then HardSigmoid (h = clamp(ha * v + hb,
  // 0, 1)) or HardSwish (v * h). The tile applies these inline instead of the general
  // epilogue's per-vector branches, which cost as much as the 9 taps of a 1-channel 3x3
  // layer (a 3 -> 16 3x3 first layer with HardSwish: 137 us plain, 167 us through the
  // general epilogue; AMD EPYC Zen 4).
  int mode;
  float lo, hi;
  float ha, hb;
  bool swish;
};

enum SmallKMode { kGeneral = 0, kClamp = 1, kHard = 2 };

using SmallKTileFn = void (*)(const SmallKTile&);

// An ISA's register tiles as one table, [mode][NS - 1][MB - 1]: Tile<NS, MB, kMode>::run
// for NS = 1, 2 vectors of columns and MB = 1..kMaxMB channels.
template <template <int, int, int> class Tile, int kMaxMB>
struct SmallKTiles {
  template <int NS, int kMode, int... J>
  static constexpr std::array<SmallKTileFn, kMaxMB> row(std::integer_sequence<int, J...>) {
    return {&Tile<NS, J + 1, kMode>::run...};
  }
  static void call(int ns, int mb, const SmallKTile& a) {
    using Mbs = std::make_integer_sequence<int, kMaxMB>;
    static constexpr std::array<SmallKTileFn, kMaxMB> table[3][2] = {
        {row<1, kGeneral>(Mbs{}), row<2, kGeneral>(Mbs{})},
        {row<1, kClamp>(Mbs{}), row<2, kClamp>(Mbs{})},
        {row<1, kHard>(Mbs{}), row<2, kHard>(Mbs{})}};
    table[a.mode][ns - 1][mb - 1](a);
  }
};

// What smallk_drive needs of an ISA: V floats per vector, tiles of up to kMaxNS = 2 vectors
// of columns x kMaxMB channels.
template <int kV, int kMB, template <int, int, int> class Tile>
struct SmallKIsa {
  static constexpr int V = kV;
  static constexpr int kMaxMB = kMB;
  static constexpr int kMaxNS = 2;
  static void tile(int ns, int mb, const SmallKTile& a) { SmallKTiles<Tile, kMB>::call(ns, mb, a); }
};

// deinterleave: the ISA's even / odd split of a row (stride_w 2).
template <class Isa>
void smallk_drive(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                  const gemm::Epilogue& epi, const InputAffine& affine, float* y, DeinterleaveFn deinterleave) {
  constexpr int V = Isa::V;
  const Window& win = g.win;
  const int64_t C = g.C, M = g.M, H = win.in[0], W = win.in[1], OH = win.out[0], OW = win.out[1];
  const int64_t KH = win.kernel[0], KW = win.kernel[1], sh = win.stride[0], sw = win.stride[1];
  const int64_t dh = win.dilation[0], dw = win.dilation[1], pt = win.pad_begin[0], pl = win.pad_begin[1];
  const int64_t P = OH * OW, IP = H * W, K = C * KH * KW;
  const int64_t strips = (OW + V - 1) / V;
  // Plane width: every padded column (ceil((pl + W + pr) / sw)) and every float a
  // tile reads (the last strip's whole vector plus the widest tap shift).
  const int64_t Wp = pl + W + win.pad_end[1];
  const int64_t reach = strips * V + (KW - 1) * dw / sw + 1;
  const int64_t Wq = (std::max((Wp + sw - 1) / sw, reach) + V - 1) / V * V;
  std::vector<int64_t> toff(static_cast<size_t>(K));
  for (int64_t c = 0; c < C; ++c)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        toff[(c * KH + kh) * KW + kw] = ((c * KH + kh) * sw + kw * dw % sw) * Wq + kw * dw / sw;
  std::vector<float> wt(static_cast<size_t>(K * M));  // wt[k * M + m] = w[m * K + k]
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) wt[k * M + m] = w[m * K + k];
  gemm::TileEpi epi0 = gemm::base_epi(epi);
  epi0.per_row = true;  // rows are output channels
  using Act = gemm::Epilogue::Activation;
  const Act act = epi.activation;
  const bool clamp = act == Act::None || act == Act::Relu || act == Act::Clip;
  const bool hard = act == Act::HardSigmoid || act == Act::HardSwish;
  const int mode = epi.residual || epi.bias2 ? kGeneral : clamp ? kClamp : hard ? kHard : kGeneral;
  const float inf = std::numeric_limits<float>::infinity();
  const float lo = epi.activation == Act::Relu ? 0.0f : epi.activation == Act::Clip ? epi.clip_min : -inf;
  const float hi = epi.activation == Act::Clip ? epi.clip_max : inf;
  const int last_valid = static_cast<int>(OW - (strips - 1) * V);
  const double row_flops = 2.0 * M * K * OW;
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(kSmallKTaskFlops / std::max(row_flops, 1.0)));
  parallel_for(ctx.threads(), g.N * OH, grain, [&](int64_t t0, int64_t t1) {
    std::vector<float> buf(static_cast<size_t>(C * KH * sw * Wq), 0.0f);
    // sw 2: the padded row before its split (zeros outside [pl, pl + W) stay zero).
    std::vector<float> padded(sw == 2 ? static_cast<size_t>(2 * Wq) : 0, 0.0f);
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t n = task / OH, oh = task % OH;
      for (int64_t c = 0; c < C; ++c) {
        const float scale = affine ? affine.scale[c] : 1.0f, shift = affine ? affine.shift[c] : 0.0f;
        for (int64_t kh = 0; kh < KH; ++kh) {
          float* dst = buf.data() + (c * KH + kh) * sw * Wq;
          const int64_t ih = oh * sh - pt + kh * dh;
          if (ih < 0 || ih >= H) {
            std::memset(dst, 0, sizeof(float) * static_cast<size_t>(sw * Wq));
            continue;
          }
          const float* src = x + (n * C + c) * IP + ih * W;
          if (sw == 2 && !affine) {
            // Straight from X: padded column pl + i is plane (pl + i) % 2, float (pl + i) / 2.
            // Floats outside the written ranges stay 0 (the buffer's initial zeros, or a
            // zero row's memset), as the padding must.
            if (pl % 2 == 0) deinterleave(src, W, dst + pl / 2, dst + Wq + pl / 2);
            else deinterleave(src, W, dst + Wq + pl / 2, dst + (pl + 1) / 2);
            continue;
          }
          // Only columns [pl, pl + W) are written: the padding around them stays 0.
          float* row = sw == 2 ? padded.data() : dst;
          if (affine) {
            for (int64_t i = 0; i < W; ++i) row[pl + i] = src[i] * scale + shift;
          } else {
            std::memcpy(row + pl, src, sizeof(float) * static_cast<size_t>(W));
          }
          if (sw == 2) deinterleave(row, 2 * Wq, dst, dst + Wq);
        }
      }
      float* yrow = y + n * M * P + oh * OW;
      gemm::TileEpi e = epi0;
      if (e.residual) e.residual += n * M * P + oh * OW;
      SmallKTile a;
      a.toff = toff.data(), a.K = K, a.ldw = M, a.P = P, a.epi = &e;
      a.mode = mode, a.lo = lo, a.hi = hi;
      a.ha = epi0.ha, a.hb = epi0.hb, a.swish = epi.activation == Act::HardSwish;
      for (int64_t m0 = 0; m0 < M; m0 += Isa::kMaxMB) {
        const int mb = static_cast<int>(std::min<int64_t>(Isa::kMaxMB, M - m0));
        a.wt = wt.data() + m0, a.m0 = m0;
        for (int64_t s = 0; s < strips; s += Isa::kMaxNS) {
          const int ns = static_cast<int>(std::min<int64_t>(Isa::kMaxNS, strips - s));
          a.ow0 = s * V;
          a.x = buf.data() + a.ow0;
          a.y = yrow + m0 * P + a.ow0;
          a.last_valid = s + ns == strips ? last_valid : V;
          Isa::tile(ns, mb, a);
        }
      }
    }
  });
}

}  // namespace
}  // namespace nn
}  // namespace onnxmini
