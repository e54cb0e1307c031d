// Pooling, nearest Resize and SqueezeExcite on the blocked layout NCHW16c (nchwc_conv.h): the ops the
// nchwc_layout pass (runtime/graph_layout_nchwc.cc) keeps inside a region so that YOLO's
// SPPF MaxPool / neck Resize and the SE blocks' GlobalAveragePool do not cut it.
//
// Layout: X [N, Cb, H, W, 16], Y [N, Cb, OH, OW, 16]; one vector is the 16 channels of
// one pixel, so every window tap is one contiguous 16-float load and all 16 channels of an
// output pixel are reduced together. The routines (nchwc_pool_impl.h) are templates over one
// block register per ISA (AVX-512 zmm, AVX2 2 ymm, portable 4 SSE2 xmm); the table picks the
// translation unit built for the ISA (nchwc_pool.cc, nchwc_pool_avx2.cc, nchwc_pool_avx512.cc).
#pragma once
#include <cstdint>
#include <vector>

#include "core/cpu_features.h"

namespace onnxmini {
namespace nn {

// The valid taps [lo, hi) of one output row / column and the taps inside the declared
// pads (AveragePool count_include_pad): spatial.h's window_taps.
struct NchwcTaps {
  int64_t lo = 0, hi = 0, padded = 0;
};

struct NchwcPoolArgs {
  int64_t H = 0, W = 0, OH = 0, OW = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  bool count_include_pad = false;
  std::vector<NchwcTaps> rows, cols;  // per output row / column
};

// Output row oh of one (image, channel block) plane: x the plane [H, W, 16], y [OH, OW, 16].
using NchwcPoolRowFn = void (*)(const NchwcPoolArgs& a, const float* x, float* y, int64_t oh);
// The whole plane [hw, 16] reduced to y[16] (max, or the mean).
using NchwcGlobalFn = void (*)(const float* x, int64_t hw, float* y);
// y[p][l] = x[p][l] * g[l] over a plane [hw, 16] (NchwcSqueezeExcite's scaling).
using NchwcScaleFn = void (*)(const float* x, int64_t hw, const float* g, float* y);

struct NchwcPoolKernels {
  cpu::Isa isa;
  NchwcPoolRowFn max_row, avg_row;
  NchwcGlobalFn global_max, global_avg;
  NchwcScaleFn scale;
};

const NchwcPoolKernels& nchwc_pool_kernels_portable();
const NchwcPoolKernels& nchwc_pool_kernels_avx2();
const NchwcPoolKernels& nchwc_pool_kernels_avx512();
// The table for `isa` capped at the hardware's level (the same override as NchwcConv:
// set_nchwc_isa_for_tests).
const NchwcPoolKernels& nchwc_pool_kernels_for(cpu::Isa isa);

}  // namespace nn
}  // namespace onnxmini
