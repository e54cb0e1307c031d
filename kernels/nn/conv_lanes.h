// Dispatch glue for conv2d_lanes: a direct 2-D float32 convolution with output
// channels in the vector lanes, one kernel per ISA (conv_lanes_avx512.cc: 16
// lanes per zmm; conv_lanes_avx2.cc: 8 per ymm), sharing the filter layout and
// the driver (conv_lanes_driver.h). This header and conv_lanes.cc are
// portable; conv2d_lanes_avx512 / _avx2 run only on their ISA, and callers
// enter conv2d_lanes only when lanes_isa() is true.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/nn/conv_implicit.h"

namespace onnxmini {
namespace nn {

// Output channels per filter group: the AVX-512 tile's 4 zmm; the AVX2 tile
// walks a group 16 channels (2 ymm) at a time.
constexpr int64_t kLanesGroup = 64;

// The filter M x C x KH x KW repacked once (session creation): output channels
// in groups of 64 (the last group 16, 32 or 48 wide),
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
bool lanes_pad_copy_forced();

// The ISA conv2d_lanes runs as: cpu::active_isa(), unless a test set another
// (set_lanes_isa, capped by the hardware, so that one process checks the AVX2
// and AVX-512 kernels; the filter layout is the same for both).
cpu::Isa lanes_active_isa();
void set_lanes_isa(cpu::Isa isa);  // tests
void reset_lanes_isa();            // tests: follow cpu::active_isa() again

// AVX-512 or AVX2 (+FMA): the ISAs with a conv2d_lanes kernel.
inline bool lanes_isa() { return lanes_active_isa() != cpu::Isa::Portable; }
// The kernel_variant isa ("avx512" / "avx2") and register tile of the active ISA's kernel.
const char* lanes_isa_name();
const char* lanes_tile_description();

// Whether a constant filter is worth repacking at session creation (the
// geometry is not known yet): 2-D, one group, and the ISA has the kernel.
inline bool lanes_filter_wanted(int64_t rank, int64_t group) {
  return rank == 4 && group == 1 && lanes_isa() && lanes_policy() != LanesPolicy::Never;
}

// The measured rule for the active ISA (see conv_lanes.cc and docs/kernels/nn.md).
bool lanes_rule_says_yes(const ConvGeom& g);

// True when conv2d_lanes can run this call (a filter packed for exactly this weight
// shape, one group, 2-D, AVX-512 or AVX2), and when it does run it: fits, and the rule (or
// the override) says yes.
inline bool lanes_conv_fits(const ConvGeom& g, const LanesFilter* f) {
  if (!f || g.group != 1 || g.win.rank != 2 || !lanes_isa() || !padded_input_near(g.win)) return false;
  return f->M == g.M && f->C == g.C && f->KH == g.win.kernel[0] && f->KW == g.win.kernel[1];
}
inline bool lanes_conv_applies(const ConvGeom& g, const LanesFilter* f) {
  if (!lanes_conv_fits(g, f)) return false;
  const LanesPolicy p = lanes_policy();
  return p == LanesPolicy::Always || (p == LanesPolicy::Rule && lanes_rule_says_yes(g));
}

// Packs w (M x C x KH x KW, row-major). Portable code.
std::shared_ptr<const LanesFilter> pack_lanes_filter(const float* w, int64_t M, int64_t C, int64_t KH, int64_t KW);

// Y = conv(X, filter) + bias [+ epi.residual, laid out as Y], then the activation
// of `epi` (bias and PRelu slopes indexed by output channel from channel 0;
// bias_per_row ignored), with the input affine applied to real input pixels.
// Runs the active ISA's kernel (only when lanes_isa()).
void conv2d_lanes(KernelContext& ctx, const ConvGeom& g, const float* x, const LanesFilter& f,
                  const gemm::Epilogue& epi, const InputAffine& affine, float* y);
// The kernels themselves: only where the hardware has that ISA (conv2d_lanes
// picks by lanes_active_isa()).
void conv2d_lanes_avx512(KernelContext& ctx, const ConvGeom& g, const float* x, const LanesFilter& f,
                         const gemm::Epilogue& epi, const InputAffine& affine, float* y);
void conv2d_lanes_avx2(KernelContext& ctx, const ConvGeom& g, const float* x, const LanesFilter& f,
                       const gemm::Epilogue& epi, const InputAffine& affine, float* y);

}  // namespace nn
}  // namespace onnxmini
