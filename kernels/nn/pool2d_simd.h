// 2-D float32 AveragePool (avgpool2d_separable) and MaxPool without Indices
// (maxpool2d_separable's float path), NCHW, vectorised per ISA.
//
// A sum (max) over a KH x KW window is a sum (max) over KW column sums of KH
// taps each. Layout per plane, all row-major with one row stride Wp (the input
// width plus the left pad, widened so that every output column's taps fall
// inside, rounded up to a multiple of stride_w):
//   xs  H x Wp:  the input with identity (0 / -inf) pad columns; a copy unless
//                there are no pads and Wp == W (then the input itself);
//   col OH x Wp: pass 1, column sums: for each tap kh, the output rows where it
//                lies inside the input; at stride_h 1 they read consecutive
//                input rows, so the whole range is one flat loop of
//                (rows x Wp) floats, else one loop of Wp per row;
//   tmp OH x (Wp / stride_w): pass 2, for each tap kw one flat loop over all
//                rows: tmp[j] += col[j * stride_w + kw * dilation_w] (the pad
//                columns make this right at the edges; the last few of each
//                row are unused);
// then each output row is copied out of tmp (AveragePool: divided by its
// window's count, separable too: (valid or padded rows) x (valid or padded
// columns)). Flat loops: narrow maps (13 x 13 SPP windows, 2 x 96 rows) give
// vectors hundreds of floats long instead of one partial vector per row.
// MaxPool's loops skip NaN taps (`v > m ? v : m`); when the plane holds a NaN
// or some window is empty (ceil_mode overhang) a scalar fix-up gives a window
// whose first valid tap is NaN that NaN and an empty window lowest(), exactly
// pool2d_direct's scan. Per ISA (portable, AVX2, AVX-512) one function per op
// computes one plane; pool2d_simd_avx2.cc / pool2d_simd_avx512.cc may execute
// those instructions, so callers take the table from pool2d_kernels_for(),
// which never picks a level above the hardware's. The shared body is
// pool2d_simd_impl.h.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "core/cpu_features.h"

namespace onnxmini {
class ThreadPool;
namespace nn {

// One plane's geometry, tap ranges and divisors (make_pool2d_plan in pool.cc).
struct Pool2dPlan {
  int64_t H = 0, W = 0, OH = 0, OW = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0, KH = 0, KW = 0;
  int64_t Wp = 0;      // row stride of xs / col (see above)
  bool copy = false;   // xs is a padded copy (else the input itself)
  bool any_empty = false;  // some window has no valid tap (MaxPool fix-up)
  std::vector<std::pair<int64_t, int64_t>> kh_rows;  // per kh: output rows [lo, hi) with the tap inside
  std::vector<int64_t> row_lo, row_hi;  // per output row: valid kh taps [lo, hi)
  std::vector<float> row_div;           // per output row: divisor factor (>= 1)
  std::vector<float> col_div;           // per output column: divisor factor (>= 1)
  std::vector<int64_t> col_first;       // per output column: input column of its first valid tap, or -1
  // Scratch floats one plane needs: xs (if copied), col, tmp.
  int64_t scratch_floats() const { return (copy ? H * Wp : 0) + OH * Wp + OH * (Wp / sw) + OW; }
};

// y (OH x OW) = average / max pool of x (H x W); scratch: p.scratch_floats().
using Pool2dPlaneFn = void (*)(const Pool2dPlan& p, const float* x, float* y, float* scratch);

struct Pool2dKernels {
  cpu::Isa isa;
  Pool2dPlaneFn average;
  Pool2dPlaneFn max;
  // The lanes of the table's maxpool2d_rows register kernel (pool2d_max_rows_impl.h: strides
  // and dilations 1, kernel width <= lanes + 1), which its `max` runs where it fits; 0: none.
  int max_rows_lanes = 0;
};

// Whether maxpool2d_rows takes plan p on a table of `lanes` lanes.
// Stride_w 1 with kernel width <= lanes + 1, or stride_w 2 with kernel width <= 2
// (maxpool2d_rows_s2: the 2x2 stride-2 downsampling pools); any stride_h, dilations 1.
inline bool max_rows_fits(const Pool2dPlan& p, int lanes) {
  const bool cols = (p.sw == 1 && p.KW <= lanes + 1) || (p.sw == 2 && p.KW <= 2);
  return lanes > 0 && cols && p.dh == 1 && p.dw == 1 && p.OW > 0 && p.OH > 0;
}
// The kernel_variant of the table's row kernel for plan p (max_rows_fits).
inline const char* max_rows_variant(const Pool2dPlan& p) { return p.sw == 2 ? "maxpool2d_rows_s2" : "maxpool2d_rows"; }

const Pool2dKernels& pool2d_kernels_portable();
const Pool2dKernels& pool2d_kernels_avx2();
const Pool2dKernels& pool2d_kernels_avx512();
// The table for `isa`, capped at what the hardware has.
const Pool2dKernels& pool2d_kernels_for(cpu::Isa isa);

// The ISA these paths use: cpu::active_isa(), or the test override.
cpu::Isa pool2d_isa();
// Tests: run them at `isa` (capped by the hardware); pass
// cpu::active_isa() to restore the default.
void set_pool2d_isa_for_tests(cpu::Isa isa);

// Runs `planes` planes of x into y on the pool's threads with the active
// table's average (max = false) or max plane function.
void pool2d_simd(const Pool2dPlan& p, bool max, int64_t planes, const float* x, float* y, ThreadPool* pool);

}  // namespace nn
}  // namespace onnxmini
