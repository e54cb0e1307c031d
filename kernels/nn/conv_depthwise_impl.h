// The body of conv_depthwise_simd's plane function, written once over a vector
// traits class T (T::Reg, T::V lanes and a handful of load / store / fma
// operations) and instantiated by conv_depthwise.cc (portable),
// conv_depthwise_avx2.cc and conv_depthwise_avx512.cc with their ISA flags.
// Everything here sits in an unnamed namespace: each file compiled with
// different -m flags gets its own copy, so the linker can never merge an
// AVX-512 instantiation into the portable path (an ODR trap with inline code).
//
// Layout. One plane of X (H x W floats, row-major) and its output plane
// (OH x OW); the filter is this channel's KH x KW taps, read as broadcasts.
// Output row segments are vectorised along W: V consecutive output columns
// are one register; input column ow*sw - pw + kw*dw of those columns is a
// contiguous load (sw 1; sw 2 on the column-parity copy, see conv_depthwise.h)
// or a gather (other strides).
//
// Borders. Output rows whose KH taps all land inside X ("interior rows") and
// output columns whose KW taps all do ("interior columns") are computed
// without a single bounds check: the loops over taps have fixed trip counts
// (compile-time for 3x3 and 5x5, fully unrolled). Rows touching the top or
// bottom padding use the same vector code over the valid tap rows only; the
// few columns touching the left / right padding are scalar with checks. The
// row's last partial vector uses masked loads and stores (AVX-512 / AVX2
// masks), so nothing past the row is read or written; with T::kOverlapTail
// (AVX2) a row of at least V interior columns ends with an overlapping full
// vector instead (dw_rows).
//
// Blocking. Interior rows go in blocks of 4 output rows x 1 register: 4
// independent FMA chains per tap (one chain of 9 or 25 dependent FMAs would
// leave the FMA pipes waiting on latency), one broadcast weight shared by the
// 4 rows. A plane (at most a few hundred KiB for MobileNet shapes) stays in L2
// while its rows are swept; threads split the N*C planes (conv_depthwise.cc).
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/nn/conv_depthwise.h"

#if defined(__GNUC__)
#define ONNXMINI_DW_INLINE inline __attribute__((always_inline))
#define ONNXMINI_DW_LAMBDA_INLINE __attribute__((always_inline))
#else
#define ONNXMINI_DW_INLINE inline
#define ONNXMINI_DW_LAMBDA_INLINE
#endif

namespace onnxmini {
namespace nn {
namespace {

inline int64_t dw_floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t dw_ceil_div(int64_t a, int64_t b) { return -dw_floor_div(-a, b); }

// The first and one-past-last output index o whose taps o*s - p + k*d (k < K)
// all lie in [0, in), clamped to [0, out] with lo <= hi.
inline void dw_interior(int64_t in, int64_t out, int64_t K, int64_t s, int64_t d, int64_t p, int64_t& lo,
                        int64_t& hi) {
  lo = std::min(out, std::max<int64_t>(0, dw_ceil_div(p, s)));
  hi = dw_floor_div(in - 1 - (K - 1) * d + p, s) + 1;
  hi = std::max(lo, std::min(out, hi));
}

// The taps k < K with o*s - p + k*d inside [0, in): [k_lo, k_hi).
inline void dw_valid_taps(int64_t o, int64_t in, int64_t K, int64_t s, int64_t d, int64_t p, int64_t& k_lo,
                          int64_t& k_hi) {
  const int64_t i0 = o * s - p;
  k_lo = std::min(K, std::max<int64_t>(0, dw_ceil_div(-i0, d)));
  k_hi = std::max(k_lo, std::min(K, dw_floor_div(in - 1 - i0, d) + 1));
}

inline float dw_activate(float v, const DepthwisePlaneEpi& e) {
  using A = gemm::Epilogue::Activation;
  switch (e.act) {
    case A::Relu: return v > 0 ? v : 0.0f;
    case A::Clip: return std::min(std::max(v, e.lo), e.hi);
    case A::PRelu: return v < 0 ? v * e.slope : v;
    case A::HardSigmoid: return std::max(0.0f, std::min(1.0f, e.alpha * v + e.beta));
    case A::HardSwish: return v * std::max(0.0f, std::min(1.0f, e.alpha * v + e.beta));
    default: return v;  // None; Sigmoid / Swish / Gelu / GeluTanh: the caller's pass
  }
}

// One border output (oh, ow): every tap checked.
inline float dw_border_value(const DepthwisePlaneGeom& g, const float* x, const float* w, const DepthwisePlaneEpi& e,
                             int64_t kh_lo, int64_t kh_hi, int64_t oh, int64_t ow) {
  float acc = e.bias;
  const int64_t iw0 = ow * g.sw - g.pw;
  for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
    const float* row = x + (oh * g.sh - g.ph + kh * g.dh) * g.W;
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const int64_t iw = iw0 + kw * g.dw;
      if (iw >= 0 && iw < g.W) acc += row[iw] * w[kh * g.KW + kw];
    }
  }
  return dw_activate(acc, e);
}

// S: 1 = column stride 1, 0 = g's stride (a gather), kParity = stride 2 on a
// column-parity copy (contiguous loads, as S = 1).
constexpr int kParity = -2;

template <class T, int S, bool kTail>
ONNXMINI_DW_INLINE typename T::Reg dw_load_cols(const float* p, int64_t sw, const typename T::Tail& t) {
  if constexpr (S == 1 || S == kParity) {
    if constexpr (kTail) return T::load_part(p, t);
    else return T::load(p);
  } else {
    return T::load_strided(p, sw, t);  // t covers V lanes when !kTail
  }
}

template <class T>
ONNXMINI_DW_INLINE typename T::Reg dw_activate_vec(typename T::Reg v, const DepthwisePlaneEpi& e) {
  using A = gemm::Epilogue::Activation;
  switch (e.act) {
    case A::Relu: return T::max(v, T::zero());
    case A::Clip: return T::min(T::max(v, T::set1(e.lo)), T::set1(e.hi));
    case A::PRelu: return T::prelu(v, T::set1(e.slope));
    case A::HardSigmoid: return T::max(T::zero(), T::min(T::set1(1.0f), T::fma(v, T::set1(e.alpha), T::set1(e.beta))));
    case A::HardSwish: {
      const typename T::Reg gate = T::max(T::zero(), T::min(T::set1(1.0f), T::fma(v, T::set1(e.alpha), T::set1(e.beta))));
      return T::fma(v, gate, T::zero());  // v * gate (the traits have no plain multiply)
    }
    default: return v;
  }
}

// The RB finished output vectors of a block: activation, then a (masked when kTail) store.
template <class T, int RB, bool kTail>
ONNXMINI_DW_INLINE void dw_store_rows(const DepthwisePlaneGeom& g, const DepthwisePlaneEpi& e,
                                      const typename T::Reg (&acc)[RB], float* y, int64_t oh0, int64_t ow,
                                      const typename T::Tail& t) {
  for (int r = 0; r < RB; ++r) {
    float* dst = y + (oh0 + r) * g.OW + ow;
    const typename T::Reg v = dw_activate_vec<T>(acc[r], e);
    if constexpr (kTail) T::store_part(dst, v, t);
    else T::store(dst, v);
  }
}

// dw_block with all K tap rows, dilation 1 and row stride SH known at compile time: the
// (RB - 1) SH + K input rows' starts once as pointers, so every load is a pointer plus a
// constant column. (dw_block's general loop recomputes row * W + column for each of its
// RB x K x K loads, integer work between the FMAs: 128 x 12x160 3x3 ran at a third of the
// FMA rate, 134 -> 95 us this way, AMD EPYC Zen 4; a table of RB x K pointers with the
// strides known only at run time gained nothing.)
template <class T, int K, int S, int RB, bool kTail, int SH>
ONNXMINI_DW_INLINE void dw_block_row_ptrs(const DepthwisePlaneGeom& g, const float* xc, const float* w,
                                          const DepthwisePlaneEpi& e, float* y, int64_t oh0, int64_t ow,
                                          const typename T::Tail& t) {
  using R = typename T::Reg;
  constexpr int kRows = (RB - 1) * SH + K;
  R acc[RB];
  for (int r = 0; r < RB; ++r) acc[r] = T::set1(e.bias);
  const float* row[kRows];
  for (int i = 0; i < kRows; ++i) row[i] = xc + i * g.W;
  for (int kh = 0; kh < K; ++kh)
    for (int kw = 0; kw < K; ++kw) {
      const R wv = T::set1(w[kh * K + kw]);
      const int64_t col = S == kParity ? (kw & 1) * g.parity_wq + (kw >> 1) : kw;  // parity copy: half, then index
      for (int r = 0; r < RB; ++r)
        acc[r] = T::fma(dw_load_cols<T, S, kTail>(row[r * SH + kh] + col, 1, t), wv, acc[r]);
    }
  dw_store_rows<T, RB, kTail>(g, e, acc, y, oh0, ow, t);
}

// Output rows oh0 .. oh0+RB-1 (tap rows [kh_lo, kh_hi) valid for all of them),
// columns ow .. ow+n-1 (interior columns; n = V unless kTail, then t's count).
// K: the kernel size when 3x3 / 5x5 (trip counts known at compile time), 0 = g's.
template <class T, int K, int S, int RB, bool kTail>
ONNXMINI_DW_INLINE void dw_block(const DepthwisePlaneGeom& g, const float* x, const float* w,
                                 const DepthwisePlaneEpi& e, float* y, int64_t oh0, int64_t kh_lo, int64_t kh_hi,
                                 int64_t ow, const typename T::Tail& t) {
  using R = typename T::Reg;
  const int64_t KW = K ? K : g.KW, sw = S == kParity ? 1 : S ? S : g.sw;
  R acc[RB];
  for (int r = 0; r < RB; ++r) acc[r] = T::set1(e.bias);
  const float* xc = x + (oh0 * g.sh - g.ph) * g.W + ow * sw - g.pw;
  if constexpr (K != 0 && (S == 1 || S == kParity)) {
    if (g.dh == 1 && g.dw == 1 && kh_lo == 0 && kh_hi == K) {
      if (g.sh == 1) return dw_block_row_ptrs<T, K, S, RB, kTail, 1>(g, xc, w, e, y, oh0, ow, t);
      if (g.sh == 2) return dw_block_row_ptrs<T, K, S, RB, kTail, 2>(g, xc, w, e, y, oh0, ow, t);
    }
  }
  for (int64_t kh = kh_lo; kh < kh_hi; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw) {
      const R wv = T::set1(w[kh * KW + kw]);
      const int64_t c = kw * g.dw;  // input column offset of the tap; in a parity copy: half, then index
      const float* p = xc + kh * g.dh * g.W + (S == kParity ? (c & 1) * g.parity_wq + (c >> 1) : c);
      for (int r = 0; r < RB; ++r) acc[r] = T::fma(dw_load_cols<T, S, kTail>(p + r * g.sh * g.W, sw, t), wv, acc[r]);
    }
  dw_store_rows<T, RB, kTail>(g, e, acc, y, oh0, ow, t);
}

// RB output rows from oh0 sharing the valid tap rows [kh_lo, kh_hi): border
// columns scalar, interior columns in registers (the last one masked).
template <class T, int K, int S, int RB>
ONNXMINI_DW_INLINE void dw_rows(const DepthwisePlaneGeom& g, const float* x, const float* w,
                                const DepthwisePlaneEpi& e, float* y, int64_t oh0, int64_t kh_lo, int64_t kh_hi,
                                int64_t ow_lo, int64_t ow_hi) {
  for (int r = 0; r < RB; ++r) {
    float* yrow = y + (oh0 + r) * g.OW;
    for (int64_t ow = 0; ow < ow_lo; ++ow) yrow[ow] = dw_border_value(g, x, w, e, kh_lo, kh_hi, oh0 + r, ow);
    for (int64_t ow = ow_hi; ow < g.OW; ++ow) yrow[ow] = dw_border_value(g, x, w, e, kh_lo, kh_hi, oh0 + r, ow);
  }
  int64_t ow = ow_lo;
  const typename T::Tail full = T::tail(T::V);
  for (; ow + T::V <= ow_hi; ow += T::V) dw_block<T, K, S, RB, false>(g, x, w, e, y, oh0, kh_lo, kh_hi, ow, full);
  // T::kOverlapTail (AVX2): the row's last V interior columns again as a full vector, the
  // overlap recomputed to the same values, where masked stores (vmaskmovps) are slow on AMD:
  // a 38-wide row (4 full vectors + 6) spent as long on its tail as on the rest.
  if (T::kOverlapTail && ow < ow_hi && ow_hi - ow_lo >= T::V)
    dw_block<T, K, S, RB, false>(g, x, w, e, y, oh0, kh_lo, kh_hi, ow_hi - T::V, full);
  else if (ow < ow_hi)
    dw_block<T, K, S, RB, true>(g, x, w, e, y, oh0, kh_lo, kh_hi, ow, T::tail(static_cast<int>(ow_hi - ow)));
}

template <class T, int K, int S>
void dw_plane(const DepthwisePlaneGeom& g, const float* x, const float* w, const DepthwisePlaneEpi& e, float* y) {
  constexpr int RB = 4;
  const int64_t KH = K ? K : g.KH, KW = K ? K : g.KW;
  int64_t oh_lo, oh_hi, ow_lo, ow_hi;
  dw_interior(g.H, g.OH, KH, g.sh, g.dh, g.ph, oh_lo, oh_hi);
  if constexpr (S == kParity) ow_lo = 0, ow_hi = g.OW;  // a padded copy: every column is interior
  else dw_interior(g.W, g.OW, KW, g.sw, g.dw, g.pw, ow_lo, ow_hi);
  int64_t oh = 0;
  for (; oh < oh_lo; ++oh) {  // top padding: only the valid tap rows
    int64_t kh_lo, kh_hi;
    dw_valid_taps(oh, g.H, KH, g.sh, g.dh, g.ph, kh_lo, kh_hi);
    dw_rows<T, 0, S, 1>(g, x, w, e, y, oh, kh_lo, kh_hi, ow_lo, ow_hi);
  }
  for (; oh + RB <= oh_hi; oh += RB) dw_rows<T, K, S, RB>(g, x, w, e, y, oh, 0, KH, ow_lo, ow_hi);
  for (; oh < oh_hi; ++oh) dw_rows<T, K, S, 1>(g, x, w, e, y, oh, 0, KH, ow_lo, ow_hi);
  for (; oh < g.OH; ++oh) {  // bottom padding
    int64_t kh_lo, kh_hi;
    dw_valid_taps(oh, g.H, KH, g.sh, g.dh, g.ph, kh_lo, kh_hi);
    dw_rows<T, 0, S, 1>(g, x, w, e, y, oh, kh_lo, kh_hi, ow_lo, ow_hi);
  }
}

// The scalar finish of a row's deinterleave, from input column i (even).
inline void dw_deinterleave_tail(const float* src, int64_t i, int64_t n, float* even, float* odd) {
  for (; i + 1 < n; i += 2) even[i / 2] = src[i], odd[i / 2] = src[i + 1];
  if (i < n) even[i / 2] = src[i];
}

// ---- channels in the lanes (dw_block_channels) -----------------------------
// Layout: the block's V input planes are transposed into xb[(hp * Wp + wp) * V
// + l] (the zero-padded plane of channel c0 + l), the filters into V-wide tap
// vectors, so each tap of an output pixel is one full-width load and one FMA
// for V channels, whatever the plane width; results go to ob[p * V + l] and are
// transposed back into the V output planes. A last block of fewer than V
// channels (a.nch) runs with zero filters in the unused lanes, which are never
// read from X nor written to Y. Used for small planes (7x7 .. 28x28 in
// MobileNetV3 / PP-LCNet), where the row-vectorised plane kernel had a partly
// used, masked vector per row and per-plane overhead.
//
// Blocking: the output pixels are taken in row-major order, 8 per step (8
// independent FMA chains sharing each tap's weight vector; dw_block_step), then
// one step of 4 and single pixels; a step may span output rows, so a 7x7 plane
// is 6 steps of 8 + 1 pixel rather than 7 rows of 4 + 3 single pixels (one
// dependent chain of 25 FMAs each: latency-bound). With 4 per step two FMA
// ports x 4 cycles latency left half the FMA slots empty.
// Each step runs only the taps that reach inside X for at least one of its
// pixels (the union of their valid tap rows / columns; the rest read the zero
// border): on a 2 x 96 plane with a 5x5 kernel and pad 2 that is 10 of 25 taps,
// on 7x7 with pad 2 about 70%.

// One step of dw_block_channels: N output pixels q .. q+N-1 (row-major, may
// span output rows) over the step's tap range st[0..4): N independent FMA
// chains sharing each tap's weight vector (one load of it per N FMAs). N = 8
// keeps both FMA ports busy through the 4-cycle latency (>= 8 chains in flight);
// 8 accumulators + the weight fit AVX2's 16 ymm as well as AVX-512's 32 zmm.
template <class T, int N, class Finish>
ONNXMINI_DW_INLINE void dw_block_step(const DepthwisePlaneGeom& g, const DepthwiseBlockArgs& a, const float* wv,
                                      int64_t tap_row, int64_t tap_col, int64_t q, const int32_t* st,
                                      typename T::Reg bias, const Finish& finish) {
  using R = typename T::Reg;
  constexpr int V = T::V;
  R c[N];
  const float* p[N];
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) c[i] = bias, p[i] = a.xb + a.pix_off[q + i] * V;
  // The step's taps as one flat loop (tap rows x tap columns): nested, the short
  // kw loop (3..5 taps) mispredicted its exit once per tap row.
  const int64_t nkw = st[3] - st[2], ntap = (st[1] - st[0]) * nkw;
  const float* wk_p = wv + (st[0] * g.KW + st[2]) * V;
  int64_t off = st[0] * tap_row + st[2] * tap_col;
  const int64_t wrap_w = (g.KW - nkw + 1) * V, wrap_off = tap_row - (nkw - 1) * tap_col;
  int64_t kw = 0;
  for (int64_t t = 0; t < ntap; ++t) {
    const R wk = T::load(wk_p);
#pragma GCC unroll 8
    for (int i = 0; i < N; ++i) c[i] = T::fma(T::load(p[i] + off), wk, c[i]);
    const bool wrap = ++kw == nkw;
    kw = wrap ? 0 : kw;
    wk_p += wrap ? wrap_w : V;
    off += wrap ? wrap_off : tap_col;
  }
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) T::store(a.ob + (q + i) * V, finish(c[i]));
}

// dw_block_channels' row path, for AVX-512 (32 zmm) and layers with stride 1 or 2 and
// dilation 1 along W and a 3- or 5-wide kernel: PX consecutive output pixels of one output
// row per step; per tap row its input pixels are loaded once and each feeds up to K FMAs
// (the flat steps above load one input per FMA). Stride 1: the PX + K - 1 inputs at once
// (PX accumulators + PX + K - 1 inputs + 1 weight = 29 registers for 5x5). Stride 2: the
// even input columns (taps kw = 0, 2, 4) then the odd ones (kw = 1, 3), PX + (K - 1) / 2
// at a time (27 registers for 5x5 with PX = 12): a 12-pixel strip of all 27 inputs would
// not fit. The zero-padded xb makes every column read valid (border columns read zeros:
// wasted FMAs at the row ends, so the path wants rows of kDwRowsMinOW pixels or more);
// tap rows outside X are skipped per output row.
template <class T, int PX, int K, int S, class Finish>
ONNXMINI_DW_INLINE void dw_rows_strip(const DepthwisePlaneGeom& g, const DepthwiseBlockArgs& a, const float* wv,
                                      int64_t oh, int64_t ow, int64_t kh_lo, int64_t kh_hi, typename T::Reg bias,
                                      const Finish& finish) {
  using R = typename T::Reg;
  constexpr int V = T::V;
  R c[PX];
#pragma GCC unroll 16
  for (int p = 0; p < PX; ++p) c[p] = bias;
  for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
    const float* xp = a.xb + ((oh * g.sh + kh * g.dh) * a.wp + ow * S) * V;
    const float* wk = wv + kh * K * V;
    if constexpr (S == 1) {
      constexpr int kIn = PX + K - 1;
      R in[kIn];
#pragma GCC unroll 16
      for (int i = 0; i < kIn; ++i) in[i] = T::load(xp + i * V);
#pragma GCC unroll 5
      for (int kw = 0; kw < K; ++kw) {
        const R w = T::load(wk + kw * V);
#pragma GCC unroll 16
        for (int p = 0; p < PX; ++p) c[p] = T::fma(in[p + kw], w, c[p]);
      }
    } else {
#pragma GCC unroll 2
      for (int q = 0; q < 2; ++q) {  // input column parity: taps kw = q, q + 2, ..
        const int kIn = PX + (K - 1 - q) / 2;
        R in[PX + (K - 1) / 2];
#pragma GCC unroll 16
        for (int i = 0; i < kIn; ++i) in[i] = T::load(xp + (2 * i + q) * V);
#pragma GCC unroll 3
        for (int kw = q; kw < K; kw += 2) {
          const R w = T::load(wk + kw * V);
#pragma GCC unroll 16
          for (int p = 0; p < PX; ++p) c[p] = T::fma(in[p + (kw - q) / 2], w, c[p]);
        }
      }
    }
  }
  float* o = a.ob + (oh * g.OW + ow) * V;
#pragma GCC unroll 16
  for (int p = 0; p < PX; ++p) T::store(o + p * V, finish(c[p]));
}

// The row path for AVX2 (16 ymm): the PX inputs of a strip do not fit beside PX
// accumulators, so the tap row's K weights are held instead and its (PX - 1) S + K input
// pixels streamed through one register, each FMA'd into the (up to K) accumulators it
// feeds: 8 accumulators + K weights + 1 input = 14 registers for 5x5, 8 independent FMA
// chains, per tap row (PX - 1) S + K input loads and K weight loads for PX * K FMAs (the
// flat steps: one input load per FMA).
template <class T, int PX, int K, int S, class Finish>
ONNXMINI_DW_INLINE void dw_rows_strip_stream(const DepthwisePlaneGeom& g, const DepthwiseBlockArgs& a,
                                             const float* wv, int64_t oh, int64_t ow, int64_t kh_lo, int64_t kh_hi,
                                             typename T::Reg bias, const Finish& finish) {
  using R = typename T::Reg;
  constexpr int V = T::V;
  constexpr int kIn = (PX - 1) * S + K;
  R c[PX];
#pragma GCC unroll 16
  for (int p = 0; p < PX; ++p) c[p] = bias;
  for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
    const float* xp = a.xb + ((oh * g.sh + kh * g.dh) * a.wp + ow * S) * V;
    const float* wk = wv + kh * K * V;
    R w[K];
#pragma GCC unroll 5
    for (int kw = 0; kw < K; ++kw) w[kw] = T::load(wk + kw * V);
#pragma GCC unroll 24
    for (int i = 0; i < kIn; ++i) {
      const R x = T::load(xp + i * V);
#pragma GCC unroll 5
      for (int kw = 0; kw < K; ++kw) {
        const int d = i - kw;  // input column i is tap kw of output pixel d / S
        if (d >= 0 && d % S == 0 && d / S < PX) c[d / S] = T::fma(x, w[kw], c[d / S]);
      }
    }
  }
  float* o = a.ob + (oh * g.OW + ow) * V;
#pragma GCC unroll 16
  for (int p = 0; p < PX; ++p) T::store(o + p * V, finish(c[p]));
}

template <class T, int K, int S, class Finish>
void dw_block_rows(const DepthwisePlaneGeom& g, const DepthwiseBlockArgs& a, const float* wv, typename T::Reg bias,
                   const Finish& finish) {
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    int64_t kh_lo, kh_hi;
    dw_valid_taps(oh, g.H, g.KH, g.sh, g.dh, g.ph, kh_lo, kh_hi);
    int64_t ow = 0;
    // The last < 4 pixels of a row: one 4-pixel strip ending at the row's end, which
    // recomputes up to 3 pixels (bit for bit: every pixel sums its taps in the same
    // order whatever the strip) instead of 1-pixel strips, each a single chain of
    // K * K dependent FMAs (perf: 6% of a 128 x 100x76 5x5 stride-2 layer, whose rows
    // of 38 pixels ended in two of them).
    // The path needs OW >= kDwRowsMinOW, so the strip stays inside the row.
    if constexpr (T::V == 16) {
      for (; ow + 12 <= g.OW; ow += 12) dw_rows_strip<T, 12, K, S>(g, a, wv, oh, ow, kh_lo, kh_hi, bias, finish);
      for (; ow + 4 <= g.OW; ow += 4) dw_rows_strip<T, 4, K, S>(g, a, wv, oh, ow, kh_lo, kh_hi, bias, finish);
      if (ow < g.OW) dw_rows_strip<T, 4, K, S>(g, a, wv, oh, g.OW - 4, kh_lo, kh_hi, bias, finish);
    } else {
      for (; ow + 8 <= g.OW; ow += 8) dw_rows_strip_stream<T, 8, K, S>(g, a, wv, oh, ow, kh_lo, kh_hi, bias, finish);
      for (; ow + 4 <= g.OW; ow += 4) dw_rows_strip_stream<T, 4, K, S>(g, a, wv, oh, ow, kh_lo, kh_hi, bias, finish);
      if (ow < g.OW) dw_rows_strip_stream<T, 4, K, S>(g, a, wv, oh, g.OW - 4, kh_lo, kh_hi, bias, finish);
    }
  }
}

// Whether dw_block_channels takes the row path: AVX-512 (dw_rows_strip) or AVX2
// (dw_rows_strip_stream; the portable traits have none), stride 1 or 2 and dilation 1
// along W, a 3- or 5-wide kernel, and output rows of at least kDwRowsMinOW pixels
// (measured in conv_depthwise.cc's rule comment).
constexpr int64_t kDwRowsMinOW = 24;
template <class T>
inline bool dw_rows_apply(const DepthwisePlaneGeom& g) {
  return T::kRowPath && (g.sw == 1 || g.sw == 2) && g.dw == 1 &&
         (g.KW == 3 || g.KW == 5) && g.OW >= kDwRowsMinOW && dw_rows_enabled();
}

// kRows: the row path (dw_block_rows) instead of the flat steps; dw_block_channels below
// picks the instantiation.
template <class T, bool kRows>
void dw_block_channels_impl(const DepthwisePlaneGeom& g, const DepthwiseBlockArgs& a) {
  using R = typename T::Reg;
  constexpr int V = T::V;
  const int64_t Wp = a.wp;
  const int nch = a.nch;
  // Transpose in: V planes -> pixel-major, channel-minor (border already zero),
  // V input pixels at a time (a plane's pixels are contiguous whatever its rows):
  // one load per channel, a V x V register transpose, one store per pixel into
  // its padded position. Lanes past nch load zeros.
  {
    const int64_t IP = g.H * g.W;
    int64_t ih = 0, iw = 0;  // the position of pixel p0
    int64_t p0 = 0;
    if (nch == V) {
      // A full block of channels: V unrolled loads straight into registers and a
      // running store pointer. (The general loop below keeps r[] on the stack: its
      // per-lane nch / tail selects stop the unrolling; with the 16 stores and reloads
      // per transpose, the transpose in took about a third of a 128 x 100x76 5x5
      // stride-2 layer's time in perf.)
      float* dst = a.xb + (g.ph * Wp + g.pw) * V;
      for (; p0 + V <= IP; p0 += V) {
        R r[V];
#pragma GCC unroll 16
        for (int l = 0; l < V; ++l) r[l] = T::load(a.x + l * a.ip + p0);
        T::transpose(r);
#pragma GCC unroll 16
        for (int j = 0; j < V; ++j) {
          T::store(dst, r[j]);
          dst += V;
          if (++iw == g.W) iw = 0, ++ih, dst += (Wp - g.W) * V;
        }
      }
    }
    for (; p0 < IP; p0 += V) {
      const int n = static_cast<int>(std::min<int64_t>(V, IP - p0));
      const typename T::Tail t = T::tail(n);
      R r[V];
      for (int l = 0; l < V; ++l)
        r[l] = l >= nch ? T::zero() : n == V ? T::load(a.x + l * a.ip + p0) : T::load_part(a.x + l * a.ip + p0, t);
      T::transpose(r);
      for (int j = 0; j < n; ++j) {
        T::store(a.xb + ((ih + g.ph) * Wp + iw + g.pw) * V, r[j]);
        if (++iw == g.W) iw = 0, ++ih;
      }
    }
  }
  const int64_t KP = g.KH * g.KW;
  // Tap vectors: wv[k][l] = filter of channel c0 + l, tap k (in ob's tail: ob is
  // OH * OW * V floats, the taps go after them; the caller sized it).
  float* wv = a.ob + g.OH * g.OW * V;
  // The block's filters are V rows of KP contiguous taps: transposed V taps at a
  // time like the input (rather than V scalar gathers per tap).
  for (int64_t k0 = 0; k0 < KP; k0 += V) {
    const int n = static_cast<int>(std::min<int64_t>(V, KP - k0));
    const typename T::Tail t = T::tail(n);
    R r[V];
    for (int l = 0; l < V; ++l)
      r[l] = l >= nch ? T::zero() : n == V ? T::load(a.w + l * a.kp + k0) : T::load_part(a.w + l * a.kp + k0, t);
    T::transpose(r);
    for (int j = 0; j < n; ++j) T::store(wv + (k0 + j) * V, r[j]);
  }
  R bias = T::zero(), slope = T::zero();
  if (a.bias) bias = T::load(a.bias);
  if (a.slope) slope = T::load(a.slope);
  DepthwisePlaneEpi e;  // for the activation switch only
  e.act = a.act, e.lo = a.lo, e.hi = a.hi, e.alpha = a.alpha, e.beta = a.beta;
  // Forced inline, as the traits' transpose: with the row path in the same file GCC left
  // both out of line (a call per output vector, r[] through memory around each transpose)
  // and the flat steps ran 15-20% slower (128 x 100x76 3x3 stride 2: 165 -> 190 us).
  auto finish = [&](R v) ONNXMINI_DW_LAMBDA_INLINE {
    if (a.act == gemm::Epilogue::Activation::PRelu) return T::prelu(v, slope);
    return dw_activate_vec<T>(v, e);
  };
  const int64_t tap_col = g.dw * V, tap_row = g.dh * Wp * V;
  const int64_t OP = g.OH * g.OW;
  if constexpr (kRows) {
    if (g.sw == 1) {
      if (g.KW == 5) dw_block_rows<T, 5, 1>(g, a, wv, bias, finish);
      else dw_block_rows<T, 3, 1>(g, a, wv, bias, finish);
    } else {
      if (g.KW == 5) dw_block_rows<T, 5, 2>(g, a, wv, bias, finish);
      else dw_block_rows<T, 3, 2>(g, a, wv, bias, finish);
    }
  } else {
    const int32_t* st = a.step_taps;
    int64_t q = 0;
    for (; q + 8 <= OP; q += 8, st += 4) dw_block_step<T, 8>(g, a, wv, tap_row, tap_col, q, st, bias, finish);
    for (; q + 4 <= OP; q += 4, st += 4) dw_block_step<T, 4>(g, a, wv, tap_row, tap_col, q, st, bias, finish);
    for (; q < OP; ++q, st += 4) dw_block_step<T, 1>(g, a, wv, tap_row, tap_col, q, st, bias, finish);
  }
  // Transpose out: pixel-major -> V planes, V output pixels at a time (one load
  // per pixel, a register transpose, one store per channel; lanes past nch are
  // not stored). Full blocks first, unrolled as the transpose in.
  int64_t p0 = 0;
  if (nch == V)
    for (; p0 + V <= OP; p0 += V) {
      R r[V];
#pragma GCC unroll 16
      for (int j = 0; j < V; ++j) r[j] = T::load(a.ob + (p0 + j) * V);
      T::transpose(r);
#pragma GCC unroll 16
      for (int l = 0; l < V; ++l) T::store(a.y + l * a.op + p0, r[l]);
    }
  for (; p0 < OP; p0 += V) {
    const int n = static_cast<int>(std::min<int64_t>(V, OP - p0));
    const typename T::Tail t = T::tail(n);
    R r[V];
    for (int j = 0; j < V; ++j) r[j] = j < n ? T::load(a.ob + (p0 + j) * V) : T::zero();
    T::transpose(r);
    for (int l = 0; l < nch; ++l) {
      if (n == V) T::store(a.y + l * a.op + p0, r[l]);
      else T::store_part(a.y + l * a.op + p0, r[l], t);
    }
  }
}

template <class T>
void dw_block_channels(const DepthwisePlaneGeom& g, const DepthwiseBlockArgs& a) {
  if (dw_rows_apply<T>(g)) return dw_block_channels_impl<T, true>(g, a);
  dw_block_channels_impl<T, false>(g, a);
}

// dw_block_channels' per-layer plan (DepthwiseBlockArgs::pix_off / step_taps):
// pix_off holds OH * OW entries, step_taps 4 * dw_block_steps(OH * OW), and
// axis_taps (scratch) 2 * (OH + OW). Wp: the padded plane's row length. A step
// whose pixels all read only padding gets an empty tap range (bias only). The
// valid taps are separable (rows by oh, columns by ow), so they are found once
// per output row and column and the steps only take unions (no division per pixel).
// Steps of dw_block_channels over OP output pixels: 8 at a time, then one of 4
// (if 4 or more remain), then single pixels.
inline int64_t dw_block_steps(int64_t OP) { return OP / 8 + (OP % 8) / 4 + OP % 4; }

inline void dw_block_plan(const DepthwisePlaneGeom& g, int64_t Wp, int64_t* pix_off, int32_t* step_taps,
                          int32_t* axis_taps) {
  const int64_t OP = g.OH * g.OW;
  int32_t* rows = axis_taps;              // [lo, hi) per output row
  int32_t* cols = axis_taps + 2 * g.OH;   // [lo, hi) per output column
  for (int64_t o = 0; o < g.OH; ++o) {
    int64_t lo, hi;
    dw_valid_taps(o, g.H, g.KH, g.sh, g.dh, g.ph, lo, hi);
    rows[2 * o] = static_cast<int32_t>(lo), rows[2 * o + 1] = static_cast<int32_t>(hi);
  }
  for (int64_t o = 0; o < g.OW; ++o) {
    int64_t lo, hi;
    dw_valid_taps(o, g.W, g.KW, g.sw, g.dw, g.pw, lo, hi);
    cols[2 * o] = static_cast<int32_t>(lo), cols[2 * o + 1] = static_cast<int32_t>(hi);
  }
  int64_t oh = 0, ow = 0;
  for (int64_t q = 0; q < OP; ++q) {
    pix_off[q] = oh * g.sh * Wp + ow * g.sw;
    if (++ow == g.OW) ow = 0, ++oh;
  }
  oh = 0, ow = 0;  // the position of the step's first pixel
  auto step = [&](int64_t n, int32_t* t) {
    int32_t kh_lo = static_cast<int32_t>(g.KH), kh_hi = 0, kw_lo = static_cast<int32_t>(g.KW), kw_hi = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int32_t l0 = rows[2 * oh], h0 = rows[2 * oh + 1], l1 = cols[2 * ow], h1 = cols[2 * ow + 1];
      if (l0 < h0 && l1 < h1) {
        kh_lo = std::min(kh_lo, l0), kh_hi = std::max(kh_hi, h0);
        kw_lo = std::min(kw_lo, l1), kw_hi = std::max(kw_hi, h1);
      }
      if (++ow == g.OW) ow = 0, ++oh;
    }
    if (kh_lo >= kh_hi || kw_lo >= kw_hi) kh_lo = kh_hi = kw_lo = kw_hi = 0;
    t[0] = kh_lo, t[1] = kh_hi, t[2] = kw_lo, t[3] = kw_hi;
  };
  int64_t q = 0;
  for (; q + 8 <= OP; q += 8, step_taps += 4) step(8, step_taps);
  for (; q + 4 <= OP; q += 4, step_taps += 4) step(4, step_taps);
  for (; q < OP; ++q, step_taps += 4) step(1, step_taps);
}

// The instantiation for g's kernel size and stride.
template <class T>
void dw_plane_dispatch(const DepthwisePlaneGeom& g, const float* x, const float* w, const DepthwisePlaneEpi& e,
                       float* y) {
  const int k = g.KH == g.KW && (g.KH == 3 || g.KH == 5) ? static_cast<int>(g.KH) : 0;
  if (g.parity_wq > 0) {
    if (k == 3) return dw_plane<T, 3, kParity>(g, x, w, e, y);
    if (k == 5) return dw_plane<T, 5, kParity>(g, x, w, e, y);
    return dw_plane<T, 0, kParity>(g, x, w, e, y);
  }
  const int s = g.sw == 1 ? 1 : 0;  // stride 2 arrives as a parity copy (above)
  switch (k * 2 + s) {
    case 3 * 2 + 1: return dw_plane<T, 3, 1>(g, x, w, e, y);
    case 3 * 2 + 0: return dw_plane<T, 3, 0>(g, x, w, e, y);
    case 5 * 2 + 1: return dw_plane<T, 5, 1>(g, x, w, e, y);
    case 5 * 2 + 0: return dw_plane<T, 5, 0>(g, x, w, e, y);
    case 1: return dw_plane<T, 0, 1>(g, x, w, e, y);
    default: return dw_plane<T, 0, 0>(g, x, w, e, y);
  }
}

}  // namespace
}  // namespace nn
}  // namespace onnxmini
