// GlobalMaxPool / GlobalAveragePool over float32 planes, with the SIMD row
// reductions of kernels/simd (one table per ISA). Exposed so that the tests can
// run every table, not only the active one; SqueezeExcite shares plane_sum_f32.
#pragma once
#include <cstdint>

#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
class ThreadPool;

namespace nn {

// Floats per row handed to reduce_rows: each SIMD lane adds at most
// kPlaneSumBlock / W terms in float before the row's sum goes to double.
constexpr int64_t kPlaneSumBlock = 256;

// The sum of one plane of n floats: rows of kPlaneSumBlock floats summed by `row_sum`
// (the ISA's reduce_rows[kRowSum]; null: 16 float chains the compiler vectorises),
// the row sums added in double.
double plane_sum_f32(const float* v, int64_t n, simd::ReduceRowsFn row_sum);

// y[p] = the maximum (max) or mean of plane p of x, planes of n contiguous floats,
// p < planes. `k`: the SIMD table (null, or its null entries: plain loops). Max
// propagates NaN, as ReduceMax does. Threads over planes (`pool` may be null).
void global_pool_f32(const float* x, int64_t planes, int64_t n, bool max, const simd::F32Kernels* k,
                     ThreadPool* pool, float* y);

}  // namespace nn
}  // namespace onnxmini
