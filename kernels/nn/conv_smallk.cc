// conv2d_smallk, the portable part: the dispatch policy and rule and the choice
// of the ISA's kernel. Nothing here may use AVX instructions (the kernels are in
// conv_smallk_avx512.cc / conv_smallk_avx2.cc, the shared driver in
// conv_smallk_impl.h).
#include "kernels/nn/conv_smallk.h"

#include <atomic>

#include "core/env_override.h"

namespace onnxmini {
namespace nn {
namespace {

// ONNXMINI_CONV_SMALLK (read once): "0" = never, "1" = wherever it fits, otherwise the rule.
std::atomic<int> g_policy{
    static_cast<int>(env_override("ONNXMINI_CONV_SMALLK", SmallKPolicy::Rule, SmallKPolicy::Never, SmallKPolicy::Always))};
std::atomic<int> g_isa{-1};  // -1: cpu::active_isa()

}  // namespace

SmallKPolicy smallk_policy() { return static_cast<SmallKPolicy>(g_policy.load(std::memory_order_relaxed)); }

void set_smallk_policy(SmallKPolicy p) { g_policy.store(static_cast<int>(p), std::memory_order_relaxed); }

cpu::Isa smallk_isa() {
  const int isa = g_isa.load(std::memory_order_relaxed);
  return isa < 0 ? cpu::active_isa() : static_cast<cpu::Isa>(isa);
}

void set_smallk_isa(cpu::Isa isa) {
  const cpu::Isa capped = static_cast<int>(isa) < static_cast<int>(cpu::hw_isa()) ? isa : cpu::hw_isa();
  g_isa.store(static_cast<int>(capped), std::memory_order_relaxed);
}

void reset_smallk_isa() { g_isa.store(-1, std::memory_order_relaxed); }

const char* smallk_isa_name() { return smallk_isa() == cpu::Isa::Avx512 ? "avx512" : "avx2"; }

const char* smallk_tile_description() {
  return smallk_isa() == cpu::Isa::Avx512 ? "register tile 2 zmm (32 output columns) x 12 output channels"
                                          : "register tile 2 ymm (16 output columns) x 6 output channels";
}

bool smallk_conv_fits(const ConvGeom& g) {
  const Window& win = g.win;
  return smallk_isa() != cpu::Isa::Portable && win.rank == 2 && g.group == 1 && g.M > 0 && padded_input_near(win) &&
         (win.stride[1] == 1 || win.stride[1] == 2) && g.C * win.kernel_size() <= kSmallKMaxTaps;
}

// Measured per layer against the previous choice (conv2d_lanes for strided
// layers, the implicit GEMM or conv2d_lanes at stride 1, the 1x1 GEMM on X) on
// the sweep's first layers, single-Conv models and the zoo (AMD EPYC Zen 5,
// AVX-512 and the AVX2 path, 1 and 2 threads, 5 interleaved rounds; numbers in
// docs/kernels/nn.md "conv2d_smallk"):
// - spatial kernels with K <= 32 won every layer: 1 -> 24 3x3 s2 at 64x160
//   18.5 -> 9.1 us, 3 -> 16 3x3 s2 at 320x320 198 -> 129 us, at 800x608 1265-1670
//   -> 703-727 us (two runs), 3 -> 16 / 32 3x3 s1 1.3x, 1 -> 32 5x5 1.42x;
// - plain 1x1 layers (K = C) were mixed against the GEMM on X: 16 -> 32 at 160x160
//   1.31x, 24 -> 24 and 32 -> 48 ties, 12 -> 96 0.87x, 32 -> 64 0.77x, 16 -> 1 0.83x:
//   they stay on the GEMM.
// Output rows narrower than one AVX-512 vector were not measured: they stay.
// (The K <= kSmallKMaxTaps limit is smallk_conv_fits', checked first.)
bool smallk_rule_says_yes(const ConvGeom& g) { return g.win.kernel_size() > 1 && g.win.out[1] >= 16; }

bool smallk_conv_applies(const ConvGeom& g) {
  if (!smallk_conv_fits(g)) return false;
  const SmallKPolicy p = smallk_policy();
  return p == SmallKPolicy::Always || (p == SmallKPolicy::Rule && smallk_rule_says_yes(g));
}

void conv2d_smallk(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                   const gemm::Epilogue& epi, const InputAffine& affine, float* y) {
  if (smallk_isa() == cpu::Isa::Avx512)
    conv2d_smallk_avx512(ctx, g, x, w, epi, affine, y);
  else
    conv2d_smallk_avx2(ctx, g, x, w, epi, affine, y);
}

}  // namespace nn
}  // namespace onnxmini
