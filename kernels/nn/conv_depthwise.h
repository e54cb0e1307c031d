// conv_depthwise_simd: 2-D float32 depthwise convolution (one input and one
// output channel per group), NCHW, vectorised along the output row.
//
// Per ISA (portable, AVX2, AVX-512) one function computes one output plane;
// conv_depthwise_avx2.cc / conv_depthwise_avx512.cc may execute those
// instructions, so callers take the table from depthwise_kernels_for(), which
// never picks a level above the hardware's. The shared body is
// conv_depthwise_impl.h; layout and blocking are described there.
#pragma once
#include <cstdint>

#include "core/cpu_features.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/kernel.h"
#include "kernels/nn/conv_implicit.h"

namespace onnxmini {
namespace nn {

// One output plane's geometry (the same for every plane of a call).
// parity_wq > 0: X is a padded copy (ph = pw = 0) with stride_w 2 whose rows
// (W floats apart) hold the even input columns, then the odd ones from float
// parity_wq on, so a tap's inputs for consecutive output columns are contiguous.
struct DepthwisePlaneGeom {
  int64_t H, W, OH, OW;
  int64_t KH, KW, sh, sw, dh, dw, ph, pw;
  int64_t parity_wq = 0;
};

// Whether the plane and block kernels leave activation `a` to the caller's pass over
// each finished plane (gemm::apply_epilogue): those that need exp or erf (Sigmoid,
// Swish, Gelu, GeluTanh). The kernels pass such a value through unchanged.
inline bool depthwise_post_pass_activation(gemm::Epilogue::Activation a) {
  using A = gemm::Epilogue::Activation;
  return a == A::Sigmoid || a == A::Swish || a == A::Gelu || a == A::GeluTanh;
}

// The epilogue of one plane: bias, then the activation (Relu, Clip, PRelu with
// this channel's slope, HardSigmoid / HardSwish; Sigmoid, Swish and the Gelus need
// exp / erf and are applied by the caller afterwards: depthwise_post_pass_activation).
struct DepthwisePlaneEpi {
  float bias = 0;
  gemm::Epilogue::Activation act = gemm::Epilogue::Activation::None;
  float lo = 0, hi = 0;        // Clip bounds
  float slope = 0;             // PRelu slope
  float alpha = 0, beta = 0;   // HardSigmoid / HardSwish: max(0, min(1, alpha * x + beta)) [* x]
};

// y (OH x OW) = depthwise conv of x (H x W) with the KH x KW filter w, + epilogue.
using DepthwisePlaneFn = void (*)(const DepthwisePlaneGeom& g, const float* x, const float* w,
                                  const DepthwisePlaneEpi& e, float* y);

// even[m] = src[2m] (m < (n + 1) / 2), odd[m] = src[2m + 1] (m < n / 2): one
// input row into the column-parity copy.
using DeinterleaveFn = void (*)(const float* src, int64_t n, float* even, float* odd);

// V consecutive channels at once with the channels in the vector lanes (small
// planes, where a row is one partly used vector): x and y are channel c0's input
// and output planes (planes ip / op floats apart), w channel c0's filter (kp
// floats per channel). bias / slope: V floats each (this block's), or null.
// Scratch (per thread, grown by the caller): xb (Hp * Wp * V floats with
// Hp = H + pads, Wp = W + pads; its padding border must be zero and stays so),
// ob (OH * OW * V + KH * KW * V). Activations: as DepthwisePlaneEpi (Relu / Clip /
// PRelu / HardSigmoid / HardSwish here).
struct DepthwiseBlockArgs {
  const float* x;
  int64_t ip;
  const float* w;
  int64_t kp;
  float* y;
  int64_t op;
  const float* bias;
  const float* slope;
  gemm::Epilogue::Activation act;
  float lo, hi;
  float alpha, beta;  // HardSigmoid / HardSwish
  int64_t hp, wp;  // xb's padded plane: H + top + bottom pads, W + left + right pads
  float* xb;
  float* ob;  // OH * OW * V outputs, then KH * KW * V tap vectors
  int nch;    // channels in this block (<= V; the last block of a layer may be partial)
  // The same for every block of a layer (dw_block_plan): xb offset (floats / V) of
  // output pixel q's tap (0, 0), and per step of pixels (full steps of 8, one of 4,
  // then one per remaining pixel: dw_block_steps) the taps [kh_lo, kh_hi) x [kw_lo, kw_hi) that reach X.
  const int64_t* pix_off;
  const int32_t* step_taps;  // 4 per step
};
using DepthwiseBlockFn = void (*)(const DepthwisePlaneGeom& g, const DepthwiseBlockArgs& a);

struct DepthwiseKernels {
  cpu::Isa isa;
  DepthwisePlaneFn plane;
  DeinterleaveFn deinterleave;
  DepthwiseBlockFn block;  // channels-in-lanes, lanes channels per call
  int lanes;
};

const DepthwiseKernels& depthwise_kernels_portable();
const DepthwiseKernels& depthwise_kernels_avx2();
const DepthwiseKernels& depthwise_kernels_avx512();
// The table for `isa`, capped at what the hardware has.
const DepthwiseKernels& depthwise_kernels_for(cpu::Isa isa);

// The ISA conv_depthwise_simd uses: cpu::active_isa(), or the test override.
cpu::Isa depthwise_isa();
// Tests: run conv_depthwise_simd at `isa` (capped by the hardware); pass
// cpu::active_isa() to restore the default.
void set_depthwise_isa_for_tests(cpu::Isa isa);

// Padded planes: the rule (depthwise_pad_copy_wanted) copies each plane of a
// padded layer into a zero-padded per-thread buffer, so every output is an
// interior one, and at stride_w 2 splits its columns by parity (contiguous
// loads). In place (Never), border rows run the vector code over their valid
// tap rows and edge columns are scalar. Stride_w 2 is always copied: its
// in-place loads (two loads + a permute per vector, since removed) lost to the
// copy, and the portable build of them segfaulted under ctest
// (ConvDepthwise.EveryOutputWidthOnEveryIsa; not reproduced outside ctest,
// root cause not found).
// Tests / benchmarks force either way (also ONNXMINI_DEPTHWISE_PAD_COPY=1 / 0);
// Rule restores the rule.
enum class DepthwisePadCopy { Rule, Always, Never };
void set_depthwise_pad_copy(DepthwisePadCopy p);
bool depthwise_pad_copy_wanted(const Window& win);

// Whether the channels-in-lanes block kernel of `isa` takes the layer (all its
// channels, the last block partial when C is not a multiple of `lanes`): small planes,
// a measured rule per ISA (conv_depthwise.cc). ONNXMINI_DEPTHWISE_BLOCKS=0 / 1
// (read once) or set_depthwise_blocks force either way for tests and benchmarks.
enum class DepthwiseBlocks { Rule, Never, Always };
void set_depthwise_blocks(DepthwiseBlocks b);
bool depthwise_blocks_wanted(const Window& win, int64_t channels, int lanes, cpu::Isa isa);

// The block kernel's row path on AVX-512 and AVX2 (input reuse along a tap row,
// conv_depthwise_impl.h: dw_block_rows, and the AVX2 traits' dw_rows_strip_stream): on by
// default; ONNXMINI_DEPTHWISE_ROWS=0 (read once) or set_depthwise_rows(false) keep the flat
// pixel steps, for tests and benchmarks.
void set_depthwise_rows(bool on);
bool dw_rows_enabled();

// Whether conv_depthwise_simd can run g: 2-D, one input and one output channel per group,
// and a padded plane (the copy it works from) near the input's size (spatial.h).
inline bool depthwise_simd_fits(const ConvGeom& g) {
  return g.win.rank == 2 && g.group == g.C && g.M == g.C && padded_input_near(g.win);
}

// Y = depthwise conv(X, W) + bias [+ epi.residual, laid out as Y], then epi's
// activation (bias and PRelu slopes indexed by channel; epi.bias_per_row is
// ignored). Threads over N*C planes (or channel blocks). Returns the kernel_variant:
// "conv_depthwise_blocks" when the block kernel ran, else "conv_depthwise_simd".
const char* conv_depthwise_simd(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                                const gemm::Epilogue& epi, float* y);

}  // namespace nn
}  // namespace onnxmini
