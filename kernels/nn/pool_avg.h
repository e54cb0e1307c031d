// avgpool2d_separable: 2-D float32 AveragePool, NCHW, vectorised per ISA.
//
// A sum over a KH x KW window is a sum over KW column sums of KH taps each, so
// each output row takes two passes over contiguous memory instead of KH*KW
// scattered taps per output: (1) column sums: the KH valid input rows of the
// window added element-wise into a W-float buffer (stride-1 loads and stores
// whatever the strides), (2) row pass: for every tap kw, the buffer at
// o * stride_w + kw * dilation_w - pad_w added into the output columns o where
// that tap is inside the row, then each output divided by its window's count.
// The divisor is separable too: (valid or padded rows) x (valid or padded
// columns). Per ISA (portable, AVX2, AVX-512) one function computes one plane;
// pool_avg_avx2.cc / pool_avg_avx512.cc may execute those instructions, so
// callers take the table from avgpool_kernels_for(), which never picks a level
// above the hardware's. The shared body is pool_avg_impl.h.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "core/cpu_features.h"

namespace onnxmini {
class ThreadPool;
namespace nn {

// One plane's geometry and the per-row / per-column tap ranges, computed once
// per input shape (the kernel keeps it between runs).
struct AvgPool2dPlan {
  int64_t H = 0, W = 0, OH = 0, OW = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0, KW = 0;
  std::vector<int64_t> row_lo, row_hi;      // valid kh taps [lo, hi) per output row
  std::vector<float> row_div;               // that row's divisor factor (>= 1)
  std::vector<std::pair<int64_t, int64_t>> kw_cols;  // per kw: output columns [lo, hi) with the tap inside
  std::vector<float> col_div;               // per output column: divisor factor (>= 1)
};

// y (OH x OW) = average pool of x (H x W); colsum: W floats of scratch.
using AvgPlaneFn = void (*)(const AvgPool2dPlan& p, const float* x, float* y, float* colsum);

struct AvgPoolKernels {
  cpu::Isa isa;
  AvgPlaneFn plane;
};

const AvgPoolKernels& avgpool_kernels_portable();
const AvgPoolKernels& avgpool_kernels_avx2();
const AvgPoolKernels& avgpool_kernels_avx512();
// The table for `isa`, capped at what the hardware has.
const AvgPoolKernels& avgpool_kernels_for(cpu::Isa isa);

// The ISA avgpool2d_separable uses: cpu::active_isa(), or the test override.
cpu::Isa avgpool_isa();
// Tests: run avgpool2d_separable at `isa` (capped by the hardware); pass
// cpu::active_isa() to restore the default.
void set_avgpool_isa_for_tests(cpu::Isa isa);

// Runs `planes` planes of x into y on the pool's threads with the active table.
void avgpool2d_separable(const AvgPool2dPlan& p, int64_t planes, const float* x, float* y, ThreadPool* pool);

}  // namespace nn
}  // namespace onnxmini
