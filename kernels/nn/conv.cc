// Conv (opset 1..): N-D convolution with groups, pads / auto_pad, strides,
// dilations and bias, float32 and float64.
//
// Layout: X is N x C x D1..Dk, W is M x C/group x K1..Kk, B is M, Y is
// N x M x O1..Ok, all dense row-major. For one image n and group g the
// convolution is one GEMM:
//   Y[n, g] (M/g x P)  =  W[g] (M/g x C/g*Kprod)  *  col (C/g*Kprod x P)
// where P = O1*..*Ok and col is the im2col matrix of X[n, g]: row (c, k) holds,
// for every output position, the input pixel that kernel tap k of channel c
// sees (0 in the padding). Variants, chosen per call:
//   conv_depthwise_simd one input and one output channel per group, 2-D float32: SIMD
//                       plane kernel per ISA (conv_depthwise.h), vectorised along W
//   conv_depthwise_blocks the same layers with small planes (a per-ISA measured rule):
//                       V channels per vector, transposed in and out (conv_depthwise.h)
//   conv_depthwise      the same layers in float64 (or forced by ONNXMINI_CONV_VARIANT=direct):
//                       the portable direct loops, no GEMM
//   conv2d_direct       2-D with fewer than 4 output channels per group: the same direct loops
//   conv1x1_gemm        1x1 kernel, no padding, stride 1: X[n, g] *is* col, no copy
//   conv1x1_gemv        the same over a 1x1 image (one output column): simd dot_rows
//                       (AVX2 / AVX-512), not a GEMM tile with one used column
//   conv1x1_transposed  the same over a small image (P <= 192, not whole 32-column tiles,
//                       >= 128 input / 64 output channels, float32, measured rule):
//                       C = X^T W^T (P x M/g) then transposed into Y (conv1x1_transposed.cc)
//   conv1x1_strided_gemm 1x1 kernel, no padding, strides: col is a strided subsample of X
//   conv1d_shifted_gemm 1-D (1xK / Kx1 after drop_unit_axes) float32, stride 1, constant
//                       filter, short rows (measured rule): one transposed GEMM per tap reading
//                       X in place, no im2col (conv_row.cc)
//   conv1d_im2row_gemm  1-D float32, one group, constant filter, 1..16 outputs per image
//                       (measured rule): C = rows (N*P x C*taps) * W^T, the whole batch in
//                       one GEMM with the output channels in the vector lanes, then
//                       transposed into Y (conv1d_im2row.cc)
//   conv1d_implicit_gemm other 1-D float32 with stride 1, > 16 outputs and a small im2col
//                       matrix (measured rule): the implicit GEMM on one padded row
//   conv2d_smallk       2-D float32, one group, AVX-512 or AVX2, at most 32 taps per output
//                       (first layers; conv_smallk.cc's rule): output columns in the lanes
//                       (conv_smallk_avx512.cc, conv_smallk_avx2.cc)
//   conv2d_lanes        2-D float32, one group, constant filter, AVX-512 or AVX2, where
//                       lanes_rule_says_yes: direct convolution with output channels
//                       in the vector lanes (conv_lanes_avx512.cc, conv_lanes_avx2.cc)
//   conv2d_implicit_gemm other 2-D float32: the GEMM reads a padded copy of X in place
//                       (conv_implicit.cc), no im2col matrix
//   conv<k>d_im2col     everything else
// A constant float32 filter is packed for the GEMM once, at session creation
// (and, for one group on AVX-512 / AVX2, also in conv2d_lanes' layout).
// Bias goes into the GEMM epilogue (per output row = per output channel), and so
// does an activation fused by the graph pass (kernels/fused_attributes.h). A
// BatchNormalization fused in front (fused_attr::kInputScale / kInputShift) is
// applied while X is copied (implicit path) or into a scratch copy of X.
// A fused residual Z (input 3, fused_attr::kResidual: a Conv -> Add folded by the
// graph pass, onnxruntime FusedConv's Z) gives Y = act(conv(X, W) + B + Z). Per path:
//   GEMM paths (im2col, 1x1, implicit)  in the GEMM tile epilogue (gemm::Epilogue::residual),
//                                       one pass over Y
//   conv1x1_transposed, conv1d_shifted, conv1d_im2row  bias, Z and activation on each Y row after the
//                                       transposing store (transpose_with_epilogue)
//   conv2d_smallk                       in the tile epilogue (Z laid out as Y: one load per vector)
//   conv2d_lanes                        bias in the tile epilogue; Z and the activation on each
//                                       output row right after its transposing store (still in L1)
//   conv_depthwise_simd                 Z and the activation on each plane after it is computed
//                                       (in cache), as the plane kernels' post-pass activations
//   conv2d_direct / conv_depthwise      Y initialised from Z + B, then accumulated
//   conv_reference                      added to the double sum of each element
// so every path honours Z and none needs to be excluded.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>

#include "core/checked_math.h"
#include "core/cpu_features.h"
#include "kernels/fused_attributes.h"
#include "kernels/gemm_engine/fused_activation.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/nn/conv1d_im2row.h"
#include "kernels/nn/conv1x1_transposed.h"
#include "kernels/nn/conv_depthwise.h"
#include "kernels/nn/conv_implicit.h"
#include "kernels/nn/conv_lanes.h"
#include "kernels/nn/conv_row.h"
#include "kernels/nn/conv_smallk.h"
#include "kernels/nn/conv_variant.h"
#include "kernels/nn/spatial.h"
#include "kernels/registry.h"
#include "kernels/simd/f32_kernels.h"
#include "core/logging.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace nn {
namespace {
std::atomic<int> g_conv_variant{-1};  // -1: not read from the environment yet
}  // namespace

ConvVariant conv_variant_override() {
  int v = g_conv_variant.load(std::memory_order_relaxed);
  if (v < 0) {
    ConvVariant parsed = ConvVariant::Rule;
    if (const char* e = std::getenv("ONNXMINI_CONV_VARIANT"); e && *e) {
      const std::string s = e;
      if (s == "im2col") parsed = ConvVariant::Im2col;
      else if (s == "implicit") parsed = ConvVariant::Implicit;
      else if (s == "direct") parsed = ConvVariant::Direct;
      else if (s == "depthwise") parsed = ConvVariant::Depthwise;
      else if (s == "lanes") parsed = ConvVariant::Lanes;
      else if (s == "transposed") parsed = ConvVariant::Transposed;
      else if (s == "row") parsed = ConvVariant::Row;
      else if (s == "im2row") parsed = ConvVariant::Im2row;
      else if (s == "smallk") parsed = ConvVariant::SmallK;
      else
        ONNXMINI_LOG(default_logger(), Warning,
                     "ONNXMINI_CONV_VARIANT={} is not one of im2col, implicit, direct, depthwise, lanes, transposed, row, im2row, smallk; using the rule", s);
    }
    v = static_cast<int>(parsed);
    g_conv_variant.store(v, std::memory_order_relaxed);
  }
  return static_cast<ConvVariant>(v);
}

void set_conv_variant_override(ConvVariant v) { g_conv_variant.store(static_cast<int>(v), std::memory_order_relaxed); }

namespace {

// ---- reference: the direct loops, one output element at a time ----------
// For every image n, output channel m and output position o:
//   y = bias[m] + sum over input channels c of m's group, over kernel taps k:
//         x[n, c, o*stride - pad_begin + k*dilation] * w[m, c, k]
// Taps that land in the padding contribute 0.
// z (Y's shape, may be null): the fused residual, added to each sum.
template <typename T>
void conv_reference(const ConvGeom& g, const T* x, const T* w, const T* bias, const T* z, T* y) {
  const Window& win = g.win;
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  const int64_t P = win.out_size(), KP = win.kernel_size(), IP = win.in_size();
  const auto in_st = row_major_strides(win.in);
  std::vector<int64_t> oc(win.rank), kc(win.rank);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m) {
      const int64_t grp = m / mg;
      for (int64_t o = 0; o < P; ++o) {
        unravel_index(o, win.out, oc.data());
        double acc = bias ? bias[m] : 0.0;
        for (int64_t c = 0; c < cg; ++c) {
          const T* xc = x + (n * g.C + grp * cg + c) * IP;
          const T* wc = w + (m * cg + c) * KP;
          for (int64_t k = 0; k < KP; ++k) {
            unravel_index(k, win.kernel, kc.data());
            int64_t off = 0;
            bool inside = true;
            for (size_t d = 0; d < win.rank; ++d) {
              const int64_t i = oc[d] * win.stride[d] - win.pad_begin[d] + kc[d] * win.dilation[d];
              if (i < 0 || i >= win.in[d]) { inside = false; break; }
              off += i * in_st[d];
            }
            if (inside) acc += static_cast<double>(xc[off]) * wc[k];
          }
        }
        if (z) acc += z[(n * g.M + m) * P + o];
        y[(n * g.M + m) * P + o] = static_cast<T>(acc);
      }
    }
}

// ---- im2col ---------------------------------------------------------------
// col is (channels * Kprod) x P, row-major. Row r = (c, k): loop over the
// output positions with the last spatial axis innermost, so every write is
// contiguous and reads are contiguous when stride is 1.
template <typename T>
void im2col(const Window& win, int64_t channels, const T* x, T* col, ThreadPool* pool) {
  const int64_t KP = win.kernel_size(), P = win.out_size(), IP = win.in_size();
  const size_t r = win.rank;
  const int64_t OW = win.out[r - 1], outer = P / OW;
  const auto in_st = row_major_strides(win.in);
  std::vector<int64_t> outer_shape(win.out.begin(), win.out.end() - 1);
  parallel_for(pool, channels * KP, 4, [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> kc(r), oc(r > 1 ? r - 1 : 1);
    for (int64_t row = r0; row < r1; ++row) {
      const T* xc = x + (row / KP) * IP;
      unravel_index(row % KP, win.kernel, kc.data());
      T* dst = col + row * P;
      const int64_t s = win.stride[r - 1];
      const int64_t off_w = kc[r - 1] * win.dilation[r - 1] - win.pad_begin[r - 1];
      for (int64_t q = 0; q < outer; ++q, dst += OW) {
        unravel_index(q, outer_shape, oc.data());
        int64_t base = 0;
        bool inside = true;
        for (size_t d = 0; d + 1 < r; ++d) {
          const int64_t i = oc[d] * win.stride[d] - win.pad_begin[d] + kc[d] * win.dilation[d];
          if (i < 0 || i >= win.in[d]) { inside = false; break; }
          base += i * in_st[d];
        }
        if (!inside) { std::fill(dst, dst + OW, T(0)); continue; }
        const T* src = xc + base;
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t iw = ow * s + off_w;
          dst[ow] = (iw >= 0 && iw < win.in[r - 1]) ? src[iw] : T(0);
        }
      }
    }
  });
}

// The per-call extras of the float32 fast path: prepacked filters (one per
// group, may be empty), the fused activation (for output channel 0 of the whole
// Conv; offset per group) and a fused input affine.
struct ConvExtras {
  const std::vector<std::shared_ptr<gemm::PackedA>>* packed = nullptr;
  gemm::Epilogue act;  // activation part only
  InputAffine affine;
  const LanesFilter* lanes = nullptr;  // set when conv2d_lanes runs this call
  const float* residual = nullptr;     // fused Z (Y's shape), or null
  // W^T per group for conv1x1_transposed (constant filter), or null: packed per call.
  const std::vector<std::shared_ptr<gemm::PackedB>>* packed_t = nullptr;
  const RowFilter* row = nullptr;  // set when conv1d_shifted runs this call
  const gemm::PackedB* im2row = nullptr;  // W^T, set when conv1d_im2row runs this call
  bool smallk = false;                    // conv2d_smallk runs this call
  // The epilogue for group `grp` of `mg` output channels (no residual: GEMM callers
  // offset it per image and group: gemm_rows, epilogue_with_residual).
  gemm::Epilogue epilogue(const float* bias, int64_t grp, int64_t mg) const {
    gemm::Epilogue e = act;
    e.bias_per_row = true;
    e.bias = bias ? bias + grp * mg : nullptr;
    if (act.prelu_slope) e.prelu_slope = act.prelu_slope + grp * mg;
    return e;
  }
  // The epilogue with the whole residual (row stride `P`, from image 0 channel 0),
  // for the paths that offset it themselves (implicit, lanes, depthwise).
  gemm::Epilogue epilogue_with_residual(const float* bias, int64_t mg, int64_t P) const {
    gemm::Epilogue e = epilogue(bias, 0, mg);
    e.residual = residual, e.residual_ld = P;
    return e;
  }
};

// C (M x N) = A (M x K) * B (K x N, row stride ldb) + bias [+ Z] and activation per
// row; A is group `grp`'s filter, prepacked when available; z (may be null) is the
// residual block laid out as C.
inline void gemm_rows(const KernelContext& ctx, int64_t M, int64_t N, int64_t K, const float* A, const float* B,
                      int64_t ldb, const float* bias, const ConvExtras& ex, int64_t grp, const float* z, float* C) {
  gemm::SgemmArgs a;
  a.M = M, a.N = N, a.K = K;
  a.A = A, a.lda = K, a.B = B, a.ldb = ldb, a.C = C, a.ldc = N;
  a.epilogue = ex.epilogue(bias, grp, M);
  a.epilogue.residual = z, a.epilogue.residual_ld = N;
  if (ex.packed && !ex.packed->empty()) ctx.gemm().sgemm_packed_a(a, *(*ex.packed)[grp], ctx.threads());
  else ctx.gemm().sgemm(a, ctx.threads());
}
// float64: no extras (the fusion pass only fuses float32 convolutions).
inline void gemm_rows(const KernelContext& ctx, int64_t M, int64_t N, int64_t K, const double* A, const double* B,
                      int64_t ldb, const double* bias, const ConvExtras&, int64_t grp, const double*, double* C) {
  if (bias) bias += grp * M;
  gemm::DgemmArgs a;
  a.M = M, a.N = N, a.K = K;
  a.A = A, a.lda = K, a.B = B, a.ldb = ldb, a.C = C, a.ldc = N;
  ctx.gemm().dgemm(a, ctx.threads());
  if (bias)  // dgemm has no epilogue
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * N + j] += bias[i];
}

// Direct 2-D convolution, one output plane (n, m) per task (z, may be null: the
// fused residual, which the plane starts from with the bias). Used for
// depthwise convolutions (one input and one output channel per group) and when
// a group has very few output channels, where a GEMM with M = 1..3 rows would
// spend its time in im2col. Per plane:
//   y[oh, ow] = bias + sum_{c, kh, kw} x[c, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw] * w[m, c, kh, kw].
// For each tap the valid ow range is computed once, so the inner loop has no
// bounds checks (and is a plain axpy when sw == 1).
template <typename T>
void conv_direct2d(const ConvGeom& g, const T* x, const T* w, const T* bias, const T* z, T* y, ThreadPool* pool) {
  const Window& win = g.win;
  const int64_t H = win.in[0], W = win.in[1], OH = win.out[0], OW = win.out[1];
  const int64_t KH = win.kernel[0], KW = win.kernel[1], sh = win.stride[0], sw = win.stride[1];
  const int64_t dh = win.dilation[0], dw = win.dilation[1], ph = win.pad_begin[0], pw = win.pad_begin[1];
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  parallel_for(pool, g.N * g.M, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n = p / g.M, m = p % g.M, grp = m / mg;
      T* yc = y + p * OH * OW;
      const T b0 = bias ? bias[m] : T(0);
      if (z) {
        const T* zc = z + p * OH * OW;
        for (int64_t i = 0; i < OH * OW; ++i) yc[i] = zc[i] + b0;
      } else {
        std::fill(yc, yc + OH * OW, b0);
      }
      for (int64_t c = 0; c < cg; ++c) {
        const T* xc = x + (n * g.C + grp * cg + c) * H * W;
        const T* wc = w + (m * cg + c) * KH * KW;
        for (int64_t oh = 0; oh < OH; ++oh) {
          T* yrow = yc + oh * OW;
          for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t ih = oh * sh - ph + kh * dh;
            if (ih < 0 || ih >= H) continue;
            const T* xrow = xc + ih * W;
            for (int64_t kw = 0; kw < KW; ++kw) {
              const int64_t off = kw * dw - pw;  // iw = ow*sw + off
              const int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
              const int64_t hi = std::min<int64_t>(OW, W - 1 - off < 0 ? 0 : (W - 1 - off) / sw + 1);
              const T wv = wc[kh * KW + kw];
              if (sw == 1)
                for (int64_t ow = lo; ow < hi; ++ow) yrow[ow] += wv * xrow[ow + off];
              else
                for (int64_t ow = lo; ow < hi; ++ow) yrow[ow] += wv * xrow[ow * sw + off];
            }
          }
        }
      }
    }
  });
}

// A fused activation on paths without a GEMM epilogue: one pass per output plane.
void apply_activation(const gemm::Epilogue& act, const ConvGeom& g, float* y) {
  if (act.activation == gemm::Epilogue::Activation::None) return;
  gemm::Epilogue e = act;
  e.bias = nullptr;
  e.bias_per_row = true;  // PRelu slope indexed by output channel
  const int64_t P = g.win.out_size();
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m) gemm::apply_epilogue(e, y + (n * g.M + m) * P, P, m, 0);
}
void apply_activation(const gemm::Epilogue&, const ConvGeom&, double*) {}

// The direct loops for depthwise layers and for fewer than 4 output channels per
// group (a 7x7 2 -> 1 spatial conv: 1 of 16 lanes used elsewhere), except a plain
// 1x1 (stride 1, unpadded) over >= 32 input channels: the GEMM on X needs no copy
// and won there on every ISA with SIMD (YOLOX's 96 -> 1 objectness heads: 52x52
// 55 -> 35 us, 13x13 11 -> 4 us; 256 -> 3 at 26x26 183 -> 39 us; AVX2 1.4x..6x;
// Xeon, 5 interleaved rounds, docs/performance.md "Profile-driven").
bool uses_direct2d(const ConvGeom& g) {
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  bool plain_1x1 = g.win.kernel_size() == 1;
  for (size_t d = 0; d < g.win.rank; ++d)
    plain_1x1 = plain_1x1 && g.win.stride[d] == 1 && g.win.pad_begin[d] == 0 && g.win.pad_end[d] == 0;
  if (plain_1x1 && cg >= 32) return false;
  return g.win.rank == 2 && ((cg == 1 && mg == 1) || mg < 4);
}

// The path choice with ONNXMINI_CONV_VARIANT applied (conv_variant.h).
bool takes_direct2d(const ConvGeom& g) {
  switch (conv_variant_override()) {
    case ConvVariant::Direct: return g.win.rank == 2;
    case ConvVariant::Im2col:
    case ConvVariant::Implicit: return false;
    default: return uses_direct2d(g);
  }
}
// conv_depthwise_simd (float32): every depthwise layer, unless another path is forced.
bool takes_depthwise_simd(const ConvGeom& g) {
  const ConvVariant v = conv_variant_override();
  return (v == ConvVariant::Rule || v == ConvVariant::Depthwise) && depthwise_simd_fits(g);
}
// 1-D (and 1xK / Kx1 after drop_unit_axes) layers take the implicit GEMM with stride
// 1, more than 16 outputs and an im2col matrix of at most 192K floats (Xeon, AVX-512
// and AVX2, forced variants interleaved, load 8-12): ppocr_v4_rec's 960 -> 60 1x3 over
// 40 columns 273 -> 170 us (AVX2 288 -> 203), 64 ch x 100 38 -> 22 us (AVX2 43 -> 32),
// 128 ch x 400 315 -> 237 us (AVX2 441 -> 402). Larger ones did not win on both ISAs:
// magika's 256 -> 512 5x1 over 512 rows tied on AVX-512 and lost on AVX2 (11.8 -> 16.9
// ms), 256 ch 5 taps over 200 columns won on AVX-512 (957 -> 869 us) and lost on AVX2.
// Up to 16 outputs the im2col GEMM has N <= the tile width and takes the skinny route,
// A read in place, which the implicit GEMM lacks (silero's 129 -> 128 over 4 columns
// 59 -> 71 us); strided layers (silero's 256-tap stride-128 front end, 65 -> 92 us)
// read a subsample that im2col copies cheaply.
// On AVX-512 the size cap is gone: on the AMD EPYC (Zen 5, forced variants interleaved,
// load ~1) magika's layer (650K col floats) took 3149 -> 2722 us at 1 thread and 1769
// -> 1395 us at 2 (onnxruntime 2677 / 1333), where the Xeon had read a tie. The EPYC's
// AVX2 path gained too (5941 -> 5518 us) but the Xeon's AVX2 lost: AVX2 keeps the cap.
constexpr int64_t kImplicit1dMaxColFloats = 192 * 1024;

int64_t implicit_1d_max_col_floats() {
  return cpu::active_isa() == cpu::Isa::Avx512 ? std::numeric_limits<int64_t>::max() : kImplicit1dMaxColFloats;
}

bool takes_implicit(const ConvGeom& g) {
  switch (conv_variant_override()) {
    case ConvVariant::Im2col: return false;
    case ConvVariant::Implicit: return implicit_conv_applies(g);
    default: {
      if (!implicit_conv_applies(g)) return false;
      if (g.win.rank == 2) return true;
      const int64_t col = g.C / g.group * g.win.kernel_size() * g.win.out_size();
      return g.win.stride[0] == 1 && g.win.out[0] > 16 && col <= implicit_1d_max_col_floats();
    }
  }
}

// conv1d_shifted (float32, a constant filter packed for it): 1-D stride-1 layers by
// the rule of conv_row.cc or forced (ONNXMINI_CONV_VARIANT=row).
bool takes_row(const ConvGeom& g) {
  if (g.win.rank != 1 || g.win.stride[0] != 1 || !padded_input_near(g.win)) return false;
  const ConvVariant v = conv_variant_override();
  return v == ConvVariant::Row || (v == ConvVariant::Rule && row_conv_wins(g));
}

// conv1d_im2row (float32 1-D, one group, a constant filter packed for it): by the rule
// of conv1d_im2row.cc or forced (ONNXMINI_CONV_VARIANT=im2row). It goes before
// conv1d_shifted and the implicit GEMM, which handle one image per GEMM.
bool takes_im2row(const ConvGeom& g) {
  if (g.win.rank != 1 || g.group != 1 || !padded_input_near(g.win)) return false;
  const ConvVariant v = conv_variant_override();
  return v == ConvVariant::Im2row || (v == ConvVariant::Rule && im2row_conv_wins(g));
}

// conv2d_smallk (float32 2-D, few taps per output): by the rule of conv_smallk.cc or
// forced (ONNXMINI_CONV_VARIANT=smallk). Tests that force conv2d_lanes everywhere
// (LanesPolicy::Always) keep it.
bool takes_smallk(const ConvGeom& g) {
  const ConvVariant v = conv_variant_override();
  if (v == ConvVariant::SmallK) return smallk_conv_fits(g);
  return v == ConvVariant::Rule && lanes_policy() != LanesPolicy::Always && smallk_conv_applies(g);
}

// A 1x1 kernel with stride 1 and no padding: X[n, g] is the GEMM's B operand as is.
bool plain_1x1(const Window& w) {
  bool plain = w.kernel_size() == 1;
  for (size_t d = 0; d < w.rank; ++d) plain = plain && w.stride[d] == 1 && w.pad_begin[d] == 0 && w.pad_end[d] == 0;
  return plain;
}
// conv1x1_transposed (float32): plain 1x1 layers over a few pixels, by the rule of
// conv1x1_transposed.cc or forced (ONNXMINI_CONV_VARIANT=transposed).
bool takes_transposed(const ConvGeom& g) {
  if (!plain_1x1(g.win) || g.win.out_size() <= 1) return false;
  const ConvVariant v = conv_variant_override();
  return v == ConvVariant::Transposed || (v == ConvVariant::Rule && conv1x1_transposed_wins(g));
}

// Spatial axes the convolution does not move along - input size 1, one kernel
// tap, no padding (so output size 1) - are dropped before a path is chosen:
// the data layout is the same without them, and the paths are picked for the
// real rank. A [1,256,512,1] input with a 5x1 kernel (a 1-D convolution that
// jax2tf writes as 2-D) then takes the 1-D GEMM path: 10.4 ms -> 3.6 ms for
// magika's 256->512-channel layer on the Xeon (AVX-512), where conv2d_lanes
// had one output column per tile. At least one axis stays.
void drop_unit_axes(Window& w) {
  Window kept;
  for (size_t d = 0; d < w.rank; ++d) {
    const bool unit = w.in[d] == 1 && w.kernel[d] == 1 && w.pad_begin[d] == 0 && w.pad_end[d] == 0;
    if (unit && (kept.rank > 0 || d + 1 < w.rank)) continue;  // keep the last axis when all are unit
    kept.rank++;
    kept.in.push_back(w.in[d]), kept.kernel.push_back(w.kernel[d]), kept.stride.push_back(w.stride[d]);
    kept.dilation.push_back(w.dilation[d]), kept.pad_begin.push_back(w.pad_begin[d]);
    kept.pad_end.push_back(w.pad_end[d]), kept.out.push_back(w.out[d]);
  }
  if (kept.rank != w.rank) w = std::move(kept);
}

// A plain 1x1 Conv over a 1x1 image (squeeze-and-excitation layers, classifier
// heads: N = 1 column) is a matrix-vector product per image and group. The GEMM
// spent its FMAs on a 32-column tile of which one column was used (1280 x 512:
// 7 GFLOP/s); simd dot_rows reads each filter row once with 4 rows in flight.
// AVX2 / AVX-512 (the portable table has no dot_rows: the GEMM stays).
bool takes_gemv(const ConvGeom& g) {
  const ConvVariant v = conv_variant_override();
  return (v == ConvVariant::Rule || v == ConvVariant::Im2col) && g.win.out_size() == 1 && simd::f32_kernels().dot_rows;
}

void conv1x1_gemv(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w, const ConvExtras& ex,
                  const float* bias, float* y) {
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  const simd::DotRowsFn dot = simd::f32_kernels().dot_rows;
  ctx.stats().isa = cpu::isa_name(simd::f32_kernels().isa);
  // Rows in blocks of 64 (whole 4-row steps) per task, threads only past ~64K filter floats.
  constexpr int64_t kRowsPerTask = 64;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const float* xg = x + n * g.C + grp * cg;
      const float* wg = w + grp * mg * cg;
      float* yg = y + n * g.M + grp * mg;
      auto rows = [&](int64_t b0, int64_t b1) {
        const int64_t r0 = b0 * kRowsPerTask, r1 = std::min(mg, b1 * kRowsPerTask);
        dot(wg + r0 * cg, cg, xg, r1 - r0, cg, yg + r0);
      };
      const int64_t tasks = (mg + kRowsPerTask - 1) / kRowsPerTask;
      if (mg * cg >= 64 * 1024) parallel_for(ctx.threads(), tasks, 1, rows);
      else rows(0, tasks);
      gemm::Epilogue e = ex.epilogue(bias, grp, mg);
      e.bias_per_row = false;  // the group's mg outputs are one row of mg columns here
      if (ex.residual) e.residual = ex.residual + n * g.M + grp * mg, e.residual_ld = 0;  // Z laid out as Y
      gemm::apply_epilogue(e, yg, mg, 0, 0);
    }
}

template <typename T>
const char* conv_fast(KernelContext& ctx, const ConvGeom& g, const T* x, const T* w, const T* bias,
                      const ConvExtras& ex, T* y) {
  const Window& win = g.win;
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  const int64_t P = win.out_size(), KP = win.kernel_size(), IP = win.in_size(), K = cg * KP;
  if constexpr (std::is_same_v<T, float>) {
    if (ex.smallk) {
      conv2d_smallk(ctx, g, x, w, ex.epilogue_with_residual(bias, mg, P), ex.affine, y);
      ctx.stats().isa = smallk_isa_name();
      return "conv2d_smallk";
    }
    if (ex.lanes) {
      conv2d_lanes(ctx, g, x, *ex.lanes, ex.epilogue_with_residual(bias, mg, P), ex.affine, y);
      ctx.stats().isa = lanes_isa_name();
      return "conv2d_lanes";
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    if (takes_depthwise_simd(g)) {
      return conv_depthwise_simd(ctx, g, x, w, ex.epilogue_with_residual(bias, mg, P), y);  // sets stats().isa
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    if (takes_transposed(g)) {
      static const std::vector<std::shared_ptr<gemm::PackedB>> none;
      conv1x1_transposed(ctx, g, x, w, ex.packed_t ? *ex.packed_t : none, ex.epilogue_with_residual(bias, mg, P), y);
      ctx.stats().isa = ctx.gemm().sgemm_path(gemm::SgemmArgs{}, false).isa;
      return "conv1x1_transposed";
    }
  }
  const T* z = nullptr;
  if constexpr (std::is_same_v<T, float>) z = ex.residual;
  if (takes_direct2d(g)) {
    conv_direct2d(g, x, w, bias, z, y, ctx.threads());
    apply_activation(ex.act, g, y);
    ctx.stats().isa = "portable";  // plain loops (compiler-vectorised for the baseline ISA)
    return cg == 1 && mg == 1 ? "conv_depthwise" : "conv2d_direct";
  }
  if constexpr (std::is_same_v<T, float>) {
    if (ex.im2row) {
      conv1d_im2row(ctx, g, x, *ex.im2row, ex.epilogue_with_residual(bias, mg, P), y);
      ctx.stats().isa = ctx.gemm().sgemm_path(gemm::SgemmArgs{}, false).isa;
      return "conv1d_im2row_gemm";
    }
    if (ex.row) {
      conv1d_shifted(ctx, g, x, *ex.row, ex.epilogue_with_residual(bias, mg, P), ex.affine, y);
      ctx.stats().isa = ctx.gemm().sgemm_path(gemm::SgemmArgs{}, false).isa;
      return "conv1d_shifted_gemm";
    }
    if (takes_implicit(g)) {
      static const std::vector<std::shared_ptr<gemm::PackedA>> none;
      conv2d_implicit(ctx, g, x, w, ex.packed ? *ex.packed : none, ex.epilogue_with_residual(bias, mg, P), ex.affine,
                      y);
      ctx.stats().isa = ctx.gemm().sgemm_path(gemm::SgemmArgs{}, false).isa;
      return win.rank == 1 ? "conv1d_implicit_gemm" : "conv2d_implicit_gemm";
    }
  }
  bool one_by_one = KP == 1, unit_stride = true;
  for (size_t d = 0; d < win.rank; ++d) {
    one_by_one = one_by_one && win.pad_begin[d] == 0 && win.pad_end[d] == 0;
    unit_stride = unit_stride && win.stride[d] == 1;
  }
  const bool direct = one_by_one && unit_stride;  // X[n, g] is already the col matrix
  if constexpr (std::is_same_v<T, float>) {
    if (direct && takes_gemv(g)) {
      conv1x1_gemv(ctx, g, x, w, ex, bias, y);
      return "conv1x1_gemv";
    }
  }
  // The GEMM engine's micro-kernels do the work (float32; float64 is the portable dgemm).
  ctx.stats().isa = std::is_same_v<T, float> ? ctx.gemm().sgemm_path(gemm::SgemmArgs{}, false).isa : "portable";
  Tensor col;
  if (!direct) col = ctx.scratch(dtype_of<T>::value, {K, P});
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const T* xg = x + (n * g.C + grp * cg) * IP;
      const T* B = xg;
      if (!direct) {
        im2col(win, cg, xg, col.mutable_data<T>(), ctx.threads());  // 1x1 strided: im2col is the subsample
        B = col.data<T>();
      }
      const int64_t block = (n * g.M + grp * mg) * P;  // this image and group's rows of Y (and Z)
      gemm_rows(ctx, mg, P, K, w + grp * mg * K, B, P, bias, ex, grp, z ? z + block : nullptr, y + block);
    }
  if (direct) return "conv1x1_gemm";
  if (one_by_one) return "conv1x1_strided_gemm";
  static const char* names[] = {"conv_im2col", "conv1d_im2col", "conv2d_im2col", "conv3d_im2col"};
  return win.rank <= 3 ? names[win.rank] : names[0];
}

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const KernelInfo& info)
      : attrs_(read_window_attrs(info)),
        group_(info.attrs.get_int("group", 1)),
        fused_(gemm::FusedActivation::read(info)),
        in_scale_(info.attrs.get_floats(fused_attr::kInputScale, {})),
        in_shift_(info.attrs.get_floats(fused_attr::kInputShift, {})),
        residual_(info.attrs.get_int(fused_attr::kResidual, 0) != 0) {
    if (group_ <= 0) info.fail("group must be positive, got {}", group_);
    // ONNX Conv has X, W, B; a 4th input is the residual Z of a fused Conv (the graph
    // pass, or a com.microsoft FusedConv in the model), never silently ignored.
    if (info.num_inputs > 3 && !residual_)
      info.fail("has {} inputs; Conv takes X, W and an optional B (a residual Z only as com.microsoft FusedConv)",
                info.num_inputs);
    if (residual_ && !info.has_input(3)) info.fail("fused residual Z (input 3) is missing");
    if (in_scale_.size() != in_shift_.size()) info.fail("fused input scale and shift differ in length");
    // A constant float32 filter is the GEMM's A operand for every call: pack it once.
    const Tensor* w = info.constant_input(1);
    if (w && info.mode == KernelMode::Fast && w->dtype() == DType::Float32 && w->rank() >= 3 && w->dim(0) > 0 &&
        w->dim(0) % group_ == 0 && w->dim(0) / group_ >= 4) {
      const int64_t M = w->dim(0), mg = M / group_, K = w->numel() / M;
      const auto& engine = gemm::engine(info.gemm, info.mode);
      for (int64_t grp = 0; grp < group_; ++grp)
        packed_.push_back(engine.pack_a(false, mg, K, w->data<float>() + grp * mg * K, K));
      packed_m_ = M, packed_k_ = K;
      if (w->numel() == M * w->dim(1)) packed_t_k_ = w->dim(1);  // a 1x1 filter: conv1x1_transposed may pack W^T
    }
    // A 1-D, 1xK or Kx1 constant filter: conv1d_shifted may pack it per tap on first use.
    if (w && info.mode == KernelMode::Fast && w->dtype() == DType::Float32 && w->numel() > 0 &&
        (w->rank() == 3 || (w->rank() == 4 && (w->dim(2) == 1 || w->dim(3) == 1))) && w->dim(0) % group_ == 0)
      row_cg_ = w->dim(1), row_taps_ = w->numel() / (w->dim(0) * w->dim(1));
    // A one-group 1-D constant filter: conv1d_im2row may pack W^T on first use.
    if (w && info.mode == KernelMode::Fast && w->dtype() == DType::Float32 && w->numel() > 0 && group_ == 1 &&
        (w->rank() == 3 || (w->rank() == 4 && (w->dim(2) == 1 || w->dim(3) == 1))))
      im2row_m_ = w->dim(0), im2row_k_ = w->numel() / w->dim(0);
    if (w && info.mode == KernelMode::Fast && w->dtype() == DType::Float32 && w->numel() > 0 &&
        lanes_filter_wanted(w->rank(), group_))
      lanes_ = pack_lanes_filter(w->data<float>(), w->dim(0), w->dim(1), w->dim(2), w->dim(3));
  }

  // Mirrors run() and conv_fast's choice (keep them in step).
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& in) const override {
    const DType dt = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    if (in.size() < 2 || !in[0] || !in[1] || dt == DType::Undefined) return KernelPlan::at_run_time();
    ConvGeom g = geometry_of(info, *in[0], *in[1]);
    if (lanes_policy() != LanesPolicy::Always) drop_unit_axes(g.win);
    const bool f32 = dt == DType::Float32;
    if (f32 && takes_smallk(g)) return KernelPlan{"conv2d_smallk", smallk_isa_name(), smallk_tile_description()};
    const ConvVariant forced = conv_variant_override();  // ONNXMINI_CONV_VARIANT, as run() reads it
    const bool lanes = forced == ConvVariant::Lanes ? lanes_conv_fits(g, lanes_.get())
                       : forced == ConvVariant::Rule && lanes_conv_applies(g, lanes_.get());
    if (f32 && lanes) return KernelPlan{"conv2d_lanes", lanes_isa_name(), lanes_tile_description()};
    const int64_t cg = g.C / g.group, mg = g.M / g.group;
    if (f32 && takes_depthwise_simd(g)) {
      const DepthwiseKernels& dk = depthwise_kernels_for(depthwise_isa());
      if (depthwise_blocks_wanted(g.win, g.C, dk.lanes, dk.isa))
        return KernelPlan{"conv_depthwise_blocks", cpu::isa_name(dk.isa),
                          "channels in the lanes, 4 output columns per step"};
      return KernelPlan{"conv_depthwise_simd", cpu::isa_name(dk.isa), "4 output rows x 1 vector of output columns"};
    }
    if (f32 && takes_transposed(g)) {
      gemm::SgemmArgs t;  // C^T = X^T W^T: P x mg, K = cg
      t.trans_a = t.trans_b = true, t.M = g.win.out_size(), t.N = mg, t.K = cg;
      const gemm::SgemmPath tp = gemm::engine(info.gemm, info.mode).sgemm_path(t, true);
      return KernelPlan{"conv1x1_transposed", tp.isa, gemm::sgemm_blocking(tp)};
    }
    if (takes_direct2d(g)) return KernelPlan{cg == 1 && mg == 1 ? "conv_depthwise" : "conv2d_direct", "portable", ""};
    gemm::SgemmArgs args;  // one group's product: mg x P, K = cg * kernel size
    args.M = mg, args.N = g.win.out_size(), args.K = cg * g.win.kernel_size();
    const gemm::SgemmPath path = gemm::engine(info.gemm, info.mode).sgemm_path(args, false);
    KernelPlan p{nullptr, f32 ? path.isa : "portable", f32 ? gemm::sgemm_blocking(path) : ""};
    if (f32 && im2row_k_ > 0 && takes_im2row(g) && g.M == im2row_m_ && g.C * g.win.kernel[0] == im2row_k_) {
      gemm::SgemmArgs t;  // C = rows * W^T: N*P x M, K = C * taps
      t.trans_b = true, t.M = g.N * g.win.out_size(), t.N = g.M, t.K = im2row_k_;
      const gemm::SgemmPath tp = gemm::engine(info.gemm, info.mode).sgemm_path(t, true);
      return KernelPlan{"conv1d_im2row_gemm", tp.isa, gemm::sgemm_blocking(tp)};
    }
    if (f32 && row_taps_ > 0 && takes_row(g) && g.C / g.group == row_cg_ && g.win.kernel[0] == row_taps_) {
      gemm::SgemmArgs t;  // one tap: C^T = X_k^T W_k^T, P x mg, K = cg
      t.trans_a = t.trans_b = true, t.M = g.win.out_size(), t.N = mg, t.K = cg;
      const gemm::SgemmPath tp = gemm::engine(info.gemm, info.mode).sgemm_path(t, true);
      return KernelPlan{"conv1d_shifted_gemm", tp.isa, gemm::sgemm_blocking(tp)};
    }
    if (f32 && takes_implicit(g)) {
      p.variant = g.win.rank == 1 ? "conv1d_implicit_gemm" : "conv2d_implicit_gemm";
      return p;
    }
    bool one_by_one = g.win.kernel_size() == 1, unit_stride = true;
    for (size_t d = 0; d < g.win.rank; ++d) {
      one_by_one = one_by_one && g.win.pad_begin[d] == 0 && g.win.pad_end[d] == 0;
      unit_stride = unit_stride && g.win.stride[d] == 1;
    }
    static const char* names[] = {"conv_im2col", "conv1d_im2col", "conv2d_im2col", "conv3d_im2col"};
    if (f32 && one_by_one && unit_stride && takes_gemv(g))
      return KernelPlan{"conv1x1_gemv", cpu::isa_name(simd::f32_kernels().isa), "4 filter rows x 2 vectors per step"};
    p.variant = one_by_one && unit_stride ? "conv1x1_gemm"
                : one_by_one              ? "conv1x1_strided_gemm"
                                          : names[g.win.rank <= 3 ? g.win.rank : 0];
    return p;
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    ConvGeom g = geometry(ctx, x, w);
    if (ctx.has_input(2)) {
      const Tensor& b = ctx.input(2);
      if (b.dtype() != x.dtype()) ctx.fail("bias dtype {} differs from input dtype {}", dtype_name(b.dtype()), dtype_name(x.dtype()));
      if (b.rank() != 1 || b.dim(0) != g.M) ctx.fail("bias has shape {}, expected [{}] (one per output channel)", shape_to_string(b.shape()), g.M);
    }
    Shape out{g.N, g.M};
    out.insert(out.end(), g.win.out.begin(), g.win.out.end());
    if (residual_) {  // Z is added element by element: exactly Y's shape, no broadcasting (as onnxruntime)
      const Tensor& z = ctx.input(3);
      if (z.dtype() != x.dtype()) ctx.fail("residual Z dtype {} differs from input dtype {}", dtype_name(z.dtype()), dtype_name(x.dtype()));
      if (z.shape() != out)
        ctx.fail("residual Z has shape {}, expected the output's shape {}", shape_to_string(z.shape()), shape_to_string(out));
    }
    ctx.allocate_output(0, x.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    ConvGeom g = geometry(ctx, x, w);
    // (Not when tests force conv2d_lanes on every shape: its edge cases include unit axes.)
    if (!ctx.reference_mode() && lanes_policy() != LanesPolicy::Always) drop_unit_axes(g.win);
    ctx.stats().flops = 2.0 * g.N * g.M * g.win.out_size() * (g.C / g.group) * g.win.kernel_size();
    if (x.dtype() == DType::Float32) run<float>(ctx, g);
    else run<double>(ctx, g);
  }

 private:
  template <typename T>
  void run(KernelContext& ctx, const ConvGeom& g) {
    const T* x = ctx.input(0).data<T>();
    const T* w = ctx.input(1).data<T>();
    const T* b = ctx.has_input(2) ? ctx.input(2).data<T>() : nullptr;
    T* y = ctx.output(0).mutable_data<T>();
    ConvExtras ex;
    const T* z = residual_ ? ctx.input(3).data<T>() : nullptr;
    const bool fused = fused_.active() || !in_scale_.empty() || residual_;
    if constexpr (std::is_same_v<T, float>) {
      fused_.set(ex.act);
      ex.residual = z;
      if (fused_.act == gemm::Epilogue::Activation::PRelu && static_cast<int64_t>(fused_.params.size()) != g.M)
        ctx.fail("fused PRelu has {} slopes, the Conv has {} output channels", fused_.params.size(), g.M);
      if (!in_scale_.empty()) {
        if (static_cast<int64_t>(in_scale_.size()) != g.C)
          ctx.fail("fused input affine has {} channels, the input has {}", in_scale_.size(), g.C);
        ex.affine.scale = in_scale_.data(), ex.affine.shift = in_shift_.data();
      }
      const ConvVariant forced = conv_variant_override();
      const bool lanes = forced == ConvVariant::Lanes ? lanes_conv_fits(g, lanes_.get())
                         : forced == ConvVariant::Rule && lanes_conv_applies(g, lanes_.get());
      ex.smallk = !ctx.reference_mode() && takes_smallk(g);
      if (!ctx.reference_mode() && lanes && !ex.smallk) ex.lanes = lanes_.get();
      if (!packed_.empty() && g.M == packed_m_ && g.M / g.group * (g.C / g.group) * g.win.kernel_size() == packed_k_)
        ex.packed = &packed_;
      // conv1x1_transposed's W^T panels: packed on the first call that takes the path
      // (only layers on small images pay the memory), under once_flag (concurrent runs).
      if (!ctx.reference_mode() && packed_t_k_ > 0 && g.C / g.group == packed_t_k_ && !ex.lanes &&
          takes_transposed(g)) {
        std::call_once(packed_t_once_, [&] {
          packed_t_ = pack_conv1x1_transposed(ctx.gemm(), ctx.input(1).data<float>(), g.M, packed_t_k_, g.group);
        });
        ex.packed_t = &packed_t_;
      }
      // conv1d_im2row's W^T, likewise packed on the first call that takes the path.
      if (!ctx.reference_mode() && im2row_k_ > 0 && !ex.lanes && takes_im2row(g) &&
          g.M == im2row_m_ && g.C * g.win.kernel[0] == im2row_k_) {
        std::call_once(im2row_once_, [&] {
          im2row_ = pack_im2row_filter(ctx.gemm(), ctx.input(1).data<float>(), im2row_m_, im2row_k_);
        });
        if (im2row_conv_fits(g, im2row_.get(), im2row_m_, im2row_k_)) ex.im2row = im2row_.get();
      }
      // conv1d_shifted's per-tap W^T panels, likewise packed on first use.
      if (!ctx.reference_mode() && !ex.im2row && row_taps_ > 0 && g.C / g.group == row_cg_ && g.win.rank == 1 &&
          g.win.kernel[0] == row_taps_ && takes_row(g)) {
        std::call_once(row_once_, [&] {
          row_ = pack_row_filter(ctx.gemm(), ctx.input(1).data<float>(), g.M, row_cg_, row_taps_, g.group);
        });
        if (row_conv_fits(g, row_.get())) ex.row = row_.get();
      }
    } else if (fused) {
      ctx.unsupported("fused Conv is float32 only, got {}", dtype_name(ctx.input(0).dtype()));
    }
    // The input affine, when the chosen path cannot apply it on the fly: X' = scratch copy.
    Tensor xa;
    // (conv1d_im2row reads X as is: the affine goes into the scratch copy.)
    const bool implicit = !ctx.reference_mode() && !ex.im2row &&
                          (ex.smallk || ex.lanes || ex.row || (!takes_direct2d(g) && takes_implicit(g)));
    if constexpr (std::is_same_v<T, float>) {
      if (ex.affine && !implicit) {
        xa = ctx.scratch(DType::Float32, ctx.input(0).shape());
        float* xd = xa.mutable_data<float>();
        const int64_t IP = g.win.in_size();
        for (int64_t n = 0; n < g.N; ++n)
          for (int64_t c = 0; c < g.C; ++c) {
            const float *src = x + (n * g.C + c) * IP, s = in_scale_[c], t = in_shift_[c];
            float* dst = xd + (n * g.C + c) * IP;
            for (int64_t i = 0; i < IP; ++i) dst[i] = src[i] * s + t;
          }
        x = xd;
        ex.affine = InputAffine();
      }
    }
    if (ctx.reference_mode()) {
      conv_reference(g, x, w, b, z, y);
      apply_activation(ex.act, g, y);
      ctx.stats().variant = "conv_reference";
    } else {
      ctx.stats().variant = conv_fast(ctx, g, x, w, b, ex, y);
    }
  }

  ConvGeom geometry(const KernelContext& ctx, const Tensor& x, const Tensor& w) const {
    if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64) ctx.unsupported("dtype {} is not supported (float, double)", dtype_name(x.dtype()));
    if (w.dtype() != x.dtype()) ctx.fail("weight dtype {} differs from input dtype {}", dtype_name(w.dtype()), dtype_name(x.dtype()));
    return geometry_of(ctx, x.shape(), w.shape());
  }

  // ctx: KernelContext (run time) or KernelInfo (describe).
  template <typename Ctx>
  ConvGeom geometry_of(const Ctx& ctx, const Shape& xs, const Shape& ws) const {
    if (xs.size() < 3) ctx.fail("input has shape {}, expected N x C x D1 [x D2 ...]", shape_to_string(xs));
    if (ws.size() != xs.size()) ctx.fail("weight has rank {} ({}), input has rank {}", ws.size(), shape_to_string(ws), xs.size());
    ConvGeom g;
    g.N = xs[0], g.C = xs[1], g.M = ws[0], g.group = group_;
    // group comes from the model: weight channels x group is checked (2^62 would wrap).
    const auto expected_channels = try_mul(ws[1], group_);
    if (!expected_channels || g.C != *expected_channels)
      ctx.fail("input has {} channels, weight expects {} (group {})", g.C,
               expected_channels ? std::to_string(*expected_channels)
                                 : fmt::format("{} x {}, more than int64 holds", ws[1], group_),
               group_);
    if (g.M % group_ != 0) ctx.fail("weight has {} output channels, not divisible by group {}", g.M, group_);
    std::vector<int64_t> in(xs.begin() + 2, xs.end()), kernel(ws.begin() + 2, ws.end());
    if (!attrs_.kernel.empty() && attrs_.kernel != kernel)
      ctx.fail("kernel_shape [{}] does not match the weight's spatial shape [{}]", fmt::join(attrs_.kernel, ","), fmt::join(kernel, ","));
    g.win = resolve_window(ctx, attrs_, in, kernel);
    return g;
  }

  WindowAttrs attrs_;
  int64_t group_;
  gemm::FusedActivation fused_;              // set by the graph fusion pass
  std::vector<float> in_scale_, in_shift_;   // fused BatchNormalization in front, per input channel
  bool residual_;                            // input 3 is a fused residual Z (fused_attr::kResidual)
  std::vector<std::shared_ptr<gemm::PackedA>> packed_;  // constant filter, one per group
  std::shared_ptr<const LanesFilter> lanes_;            // constant filter in conv2d_lanes' layout
  int64_t packed_m_ = 0, packed_k_ = 0;
  int64_t packed_t_k_ = 0;                              // constant 1x1 filter: its input channels per group
  std::once_flag packed_t_once_;
  std::vector<std::shared_ptr<gemm::PackedB>> packed_t_;  // its W^T per group (conv1x1_transposed)
  int64_t row_cg_ = 0, row_taps_ = 0;                   // constant 1-D / 1xK / Kx1 filter, else 0
  std::once_flag row_once_;
  std::shared_ptr<const RowFilter> row_;                // its per-tap W^T panels (conv1d_shifted)
  int64_t im2row_m_ = 0, im2row_k_ = 0;                 // one-group 1-D constant filter: M, C * taps
  std::once_flag im2row_once_;
  std::shared_ptr<gemm::PackedB> im2row_;               // its W^T (conv1d_im2row)
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("conv", "", "Conv", 1, INT_MAX, make_kernel<ConvKernel>);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_conv);
