// Dispatch glue for conv2d_lanes (conv_lanes_avx512.cc): a direct 2-D float32
// convolution with output channels in the AVX-512 vector lanes. This header is
// portable; every function defined in conv_lanes_avx512.cc may execute AVX-512
// instructions, so callers enter them only when lanes_isa() is true.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/nn/conv_implicit.h"

namespace onnxmini {
namespace nn {

// The filter M x C x KH x KW repacked once (session creation): output channels
// in groups of 64 (the register tile's 4 zmm; the last group 16, 32 or 48 wide),
// group g at data() + 64 * g * K (K = C*KH*KW) laid out [k][width] with
// k = (c, kh, kw) and width = that group's lanes; lanes past M are zero.
class LanesFilter {
 public:
  int64_t M = 0, C = 0, KH = 0, KW = 0;
  const float* data() const { return data_; }
  void allocate(int64_t floats) {
    storage_.assign(static_cast<size_t>(floats + 16), 0.0f);
    const auto addr = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + ((64 - addr % 64) % 64) / sizeof(float);  // 64-byte aligned zmm loads
  }
  float* mutable_data() { return data_; }

 private:
  std::vector<float> storage_;
  float* data_ = nullptr;
};

// Test / benchmark override of the dispatch rule. Default: ONNXMINI_CONV_LANES
// (read once: "0" = never, "1" = always where the kernel can run, otherwise
// the measured rule, lanes_rule_says_yes).
enum class LanesPolicy { Rule, Never, Always };
LanesPolicy lanes_policy();
void set_lanes_policy(LanesPolicy p);  // tests; LanesPolicy::Rule restores the default
// A padded Conv without a fused input affine reads X in place (edges from
// small per-task copies); true makes it copy the whole padded image first, as
// with an affine. Tests; false restores the default.
void set_lanes_pad_copy(bool always_copy);

inline bool lanes_isa() { return cpu::active_isa() == cpu::Isa::Avx512; }

// Whether a constant filter is worth repacking at session creation (the
// geometry is not known yet): 2-D, one group, and the ISA has the kernel.
inline bool lanes_filter_wanted(int64_t rank, int64_t group) {
  return rank == 4 && group == 1 && lanes_isa() && lanes_policy() != LanesPolicy::Never;
}

// The measured rule (see conv_lanes_avx512.cc's header and docs/kernels/nn.md).
bool lanes_rule_says_yes(const ConvGeom& g);

// True when conv2d_lanes can run this call (a filter packed for exactly this weight
// shape, one group, 2-D, AVX-512), and when it does run it: fits, and the rule (or
// the override) says yes.
inline bool lanes_conv_fits(const ConvGeom& g, const LanesFilter* f) {
  if (!f || g.group != 1 || g.win.rank != 2 || !lanes_isa()) return false;
  return f->M == g.M && f->C == g.C && f->KH == g.win.kernel[0] && f->KW == g.win.kernel[1];
}
inline bool lanes_conv_applies(const ConvGeom& g, const LanesFilter* f) {
  if (!lanes_conv_fits(g, f)) return false;
  const LanesPolicy p = lanes_policy();
  return p == LanesPolicy::Always || (p == LanesPolicy::Rule && lanes_rule_says_yes(g));
}

// Packs w (M x C x KH x KW, row-major). AVX-512 code: only when lanes_isa().
std::shared_ptr<const LanesFilter> pack_lanes_filter(const float* w, int64_t M, int64_t C, int64_t KH, int64_t KW);

// Y = conv(X, filter) + bias, then the activation of `epi` (bias and PRelu
// slopes indexed by output channel from channel 0; bias_per_row ignored),
// with the input affine applied to real input pixels.
void conv2d_lanes(KernelContext& ctx, const ConvGeom& g, const float* x, const LanesFilter& f,
                  const gemm::Epilogue& epi, const InputAffine& affine, float* y);

}  // namespace nn
}  // namespace onnxmini
