// conv2d_smallk: a direct 2-D float32 convolution for layers with few taps per
// output (K = C * KH * KW small: the 1- and 3-channel first layers of image
// models), output columns in the vector lanes. One kernel per ISA
// (conv_smallk_avx512.cc: 16 columns per zmm; conv_smallk_avx2.cc: 8 per ymm)
// over a shared driver (conv_smallk_impl.h); this header and conv_smallk.cc are
// portable, and callers enter conv2d_smallk only when smallk_isa() has a kernel.
//
// Why: with K = 9 (a 1-channel 3x3 layer) the channels-in-lanes tile
// (conv2d_lanes) and the GEMM tiles spend as much on their accumulators'
// stores, the transpose into NCHW and the padded edge copies as on the 9
// FMAs per output; here each output vector is stored once, straight into its
// NCHW row, and the filter is read as broadcasts.
#pragma once
#include <cstdint>

#include "core/cpu_features.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/kernel.h"
#include "kernels/nn/conv_implicit.h"

namespace onnxmini {
namespace nn {

// Taps per output (C * KH * KW) the kernel takes: the gathered input rows of one
// output row must stay small (L1), and past this the channels-in-lanes tile's
// overheads are paid back.
constexpr int64_t kSmallKMaxTaps = 32;

// Test / benchmark override of the dispatch rule. Default: ONNXMINI_CONV_SMALLK
// (read once: "0" = never, "1" = wherever the kernel can run, otherwise the rule).
enum class SmallKPolicy { Rule, Never, Always };
SmallKPolicy smallk_policy();
void set_smallk_policy(SmallKPolicy p);  // tests; SmallKPolicy::Rule restores the default

// The ISA conv2d_smallk runs as: cpu::active_isa(), unless a test set another
// (capped by the hardware).
cpu::Isa smallk_isa();
void set_smallk_isa(cpu::Isa isa);  // tests
void reset_smallk_isa();            // tests: follow cpu::active_isa() again
// The kernel_variant isa ("avx512" / "avx2") and register tile of the active ISA's kernel.
const char* smallk_isa_name();
const char* smallk_tile_description();

// Whether the kernel can run the layer: AVX2 or AVX-512, 2-D, one group,
// stride_w 1 or 2, at most kSmallKMaxTaps taps per output.
bool smallk_conv_fits(const ConvGeom& g);
// The measured rule (conv_smallk.cc, docs/kernels/nn.md), for layers that fit.
bool smallk_rule_says_yes(const ConvGeom& g);
// fits, and the rule or the override says yes.
bool smallk_conv_applies(const ConvGeom& g);

// Y = conv(X, W) + bias [+ epi.residual, laid out as Y], then the activation of
// `epi` (bias and PRelu slopes per output channel, epi.bias_per_row), with the
// input affine applied to real input pixels. W is the ONNX filter M x C x KH x KW.
void conv2d_smallk(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                   const gemm::Epilogue& epi, const InputAffine& affine, float* y);
void conv2d_smallk_avx512(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                          const gemm::Epilogue& epi, const InputAffine& affine, float* y);
void conv2d_smallk_avx2(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                        const gemm::Epilogue& epi, const InputAffine& affine, float* y);

}  // namespace nn
}  // namespace onnxmini
