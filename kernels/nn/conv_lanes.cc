// conv2d_lanes, the portable part: the dispatch policy and rule, the filter
// packing (session creation) and the choice of the ISA's kernel. Nothing here
// may use AVX instructions: it runs on every machine (the kernels are in
// conv_lanes_avx512.cc / conv_lanes_avx2.cc, the shared driver in
// conv_lanes_driver.h).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "kernels/nn/conv_lanes.h"

namespace onnxmini {
namespace nn {
namespace {

std::atomic<int> g_policy{-1};  // -1: not read yet
std::atomic<bool> g_pad_copy{false};
std::atomic<int> g_isa{-1};  // -1: cpu::active_isa()

bool plain_1x1(const Window& win) {
  bool plain = win.kernel_size() == 1 && win.stride[0] == 1 && win.stride[1] == 1;
  for (size_t d = 0; d < 2; ++d) plain = plain && win.pad_begin[d] == 0 && win.pad_end[d] == 0;
  return plain;
}

// AVX-512. First measured on small.onnx's layers (64 channels: 3x3 stride 1
// and 2, 1x1 stride 2, lanes faster than the implicit GEMM), then per layer on
// the zoo's detectors and on single-Conv models (issue #14 item 1,
// docs/performance.md "Profile-driven"; ONNXMINI_CONV_VARIANT=lanes vs implicit,
// 5 interleaved rounds, Xeon AVX-512):
// - strided: lanes won every layer, also with 16 output channels and K = 27
//   (the first 3 -> 16 stride-2 layers: 254 vs 314 us at 320x320, 0.81x;
//   16 -> 16 at 160x160 0.74x; 96 -> 24 at 40x40 0.72x): the implicit GEMM
//   reads a stride-2 input through column-parity planes, lanes reads it in place;
// - stride 1: lanes lost with K = C*KH*KW < 288 whatever the channels
//   (16 -> 16 3x3 at 80x80 1.33x slower, 24 -> 24 1.37..1.58x, 12 -> 24 at
//   208x208 1.32x, 16 -> 64 1.15x, 8 -> 64 1.25x) and with fewer than 32 output
//   channels (96 -> 24 at 80x80 1.43x: one or one and a half zmm of channels
//   give 6 or 12 FMAs per 7..8 loads); it tied at K = 288 (32 -> 32, 32 -> 48:
//   1.01x, 1.03x) and won above (32 -> 64 0.92x, 48 -> 48 and wider 3x3 layers).
// So the same shape test as AVX2's stride-1 rule, without its row-width cap.
// 1x1 stride 1 without padding stays a plain GEMM on X.
bool rule_avx512(const ConvGeom& g) {
  const Window& win = g.win;
  if (plain_1x1(win) || g.M < 16) return false;
  const bool strided = win.stride[0] > 1 || win.stride[1] > 1;
  return strided || (g.M >= 32 && g.C * win.kernel_size() >= 288);
}

// AVX2, measured per layer with ONNXMINI_ISA=avx2 on the AVX-512 Xeon (the
// AVX2 code path, not an AVX2-only CPU) against the AVX2 implicit GEMM / 1x1
// GEMM on small.onnx, ddddocr_det and nudenet_320n (docs/kernels/nn.md):
// - strided (3x3 and 1x1 stride 2): lanes won every layer, 1.18x..3.1x, also
//   with 16 output channels and K = 27 (nudenet's first layer 1.7x);
// - stride 1: won with 32..192 output channels, K >= 288 and output rows of
//   13..80 columns (1.0x..1.65x, ties on 13x13 outputs; a 64 -> 64 3x3 layer:
//   56x56 1.17x, 80x80 1.36x), tied at 112x112 (small.onnx's n9 and the same
//   layer alone: 0.96x..1.00x in 5 measurements), lost with 16 or 24 channels
//   (0.70x..0.99x: 16 channels fill one tile either way, 24 fill 24 of 32
//   lanes) and with K = 27 (small.onnx's first layer, 0.74x..0.90x);
// - 1x1 stride 1 unpadded: the plain GEMM on X won (0.75x..0.95x for lanes).
// Output rows wider than 80 at stride 1 stay on the implicit GEMM (81..111 not measured).
bool rule_avx2(const ConvGeom& g) {
  const Window& win = g.win;
  if (plain_1x1(win) || g.M < 16) return false;
  const bool strided = win.stride[0] > 1 || win.stride[1] > 1;
  return strided || (g.M >= 32 && g.C * win.kernel_size() >= 288 && win.out[1] <= 80);
}

}  // namespace

LanesPolicy lanes_policy() {
  int p = g_policy.load(std::memory_order_relaxed);
  if (p < 0) {
    const char* e = std::getenv("ONNXMINI_CONV_LANES");
    p = static_cast<int>(!e ? LanesPolicy::Rule
                            : std::strcmp(e, "0") == 0 ? LanesPolicy::Never
                            : std::strcmp(e, "1") == 0 ? LanesPolicy::Always : LanesPolicy::Rule);
    g_policy.store(p, std::memory_order_relaxed);
  }
  return static_cast<LanesPolicy>(p);
}

void set_lanes_policy(LanesPolicy p) { g_policy.store(static_cast<int>(p), std::memory_order_relaxed); }

void set_lanes_pad_copy(bool always_copy) { g_pad_copy.store(always_copy, std::memory_order_relaxed); }
bool lanes_pad_copy_forced() { return g_pad_copy.load(std::memory_order_relaxed); }

cpu::Isa lanes_active_isa() {
  const int isa = g_isa.load(std::memory_order_relaxed);
  return isa < 0 ? cpu::active_isa() : static_cast<cpu::Isa>(isa);
}

void set_lanes_isa(cpu::Isa isa) {
  const cpu::Isa capped = static_cast<int>(isa) < static_cast<int>(cpu::hw_isa()) ? isa : cpu::hw_isa();
  g_isa.store(static_cast<int>(capped), std::memory_order_relaxed);
}

void reset_lanes_isa() { g_isa.store(-1, std::memory_order_relaxed); }

const char* lanes_isa_name() { return lanes_active_isa() == cpu::Isa::Avx512 ? "avx512" : "avx2"; }

const char* lanes_tile_description() {
  return lanes_active_isa() == cpu::Isa::Avx512 ? "register tile 4 zmm (64 output channels) x 6 output columns"
                                               : "register tile 2 ymm (16 output channels) x 6 output columns";
}

bool lanes_rule_says_yes(const ConvGeom& g) {
  return lanes_active_isa() == cpu::Isa::Avx512 ? rule_avx512(g) : rule_avx2(g);
}

std::shared_ptr<const LanesFilter> pack_lanes_filter(const float* w, int64_t M, int64_t C, int64_t KH, int64_t KW) {
  auto f = std::make_shared<LanesFilter>();
  f->M = M, f->C = C, f->KH = KH, f->KW = KW;
  const int64_t K = C * KH * KW, group = kLanesGroup;
  const int64_t groups = (M + group - 1) / group;
  f->allocate(((M + 15) / 16) * 16 * K);
  for (int64_t grp = 0; grp < groups; ++grp) {
    const int64_t m0 = grp * group;
    const int64_t width = std::min<int64_t>(group, (M - m0 + 15) / 16 * 16);
    float* dst = f->mutable_data() + m0 * K;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t l = 0; l < width && m0 + l < M; ++l) dst[k * width + l] = w[(m0 + l) * K + k];
  }
  return f;
}

void conv2d_lanes(KernelContext& ctx, const ConvGeom& g, const float* x, const LanesFilter& f,
                  const gemm::Epilogue& epi, const InputAffine& affine, float* y) {
  if (lanes_active_isa() == cpu::Isa::Avx512)
    conv2d_lanes_avx512(ctx, g, x, f, epi, affine, y);
  else
    conv2d_lanes_avx2(ctx, g, x, f, epi, affine, y);
}

}  // namespace nn
}  // namespace onnxmini
