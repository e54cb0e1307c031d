// Hand-written SIMD float32 kernels for memory-bound ops whose rows are short
// (element-wise broadcasting, row reductions, ArgMin/ArgMax, Softmax, row
// dot products). One
// table per instruction set: f32_kernels_avx512.cc and f32_kernels_avx2.cc
// fill theirs from the templates of f32_kernels_impl.h; the portable table is
// empty (every entry null), and callers then keep their plain C++ loops.
//
// Callers split the rows across threads (parallel_for with their own grain);
// every function here works on one range of rows on the calling thread.
#pragma once
#include <cstdint>

#include "core/cpu_features.h"

namespace onnxmini {
namespace simd {

enum BinOp { kAdd = 0, kSub, kMul, kDiv, kNumBinOps };

// A 2-D broadcast of two operands into a dense output of `cols` columns:
//   y[r * cols + c] = a[r * a_row + (a_vec ? c : 0)] op b[r * b_row + (b_vec ? c : 0)]
// Covers row-scalar ([N,1] op [N,C]), column-vector ([C] op [N,C]), both
// ([N,1] op [1,C]) and plain vectors (one row).
struct BinaryRows {
  const float* a;
  int64_t a_row;
  bool a_vec;
  const float* b;
  int64_t b_row;
  bool b_vec;
  float* y;
  int64_t cols;
};
using BinaryRowsFn = void (*)(const BinaryRows& p, int64_t r0, int64_t r1);

// What a row reduction accumulates: sum of x, of x*x, of |x|, max, min
// (max and min propagate NaN, as reduce_ops.h's Max/Min do).
enum RowKind { kRowSum = 0, kRowSumSquare, kRowAbs, kRowMax, kRowMin, kNumRowKinds };
// out[r] = the accumulation of row r of x (rows of n contiguous floats), not finalised.
using ReduceRowsFn = void (*)(const float* x, int64_t rows, int64_t n, float* out);

// ArgMax (is_max) / ArgMin of each row of n contiguous floats with the scalar
// kernel's rules (first element is the initial best; strictly better replaces,
// or better-or-equal with `last`; NaN never replaces). Handles whole groups of
// rows only and returns how many rows it did (a multiple of the SIMD width);
// the caller finishes the rest.
using ArgRowsFn = int64_t (*)(const float* x, int64_t rows, int64_t n, bool last, int64_t* out);

// Softmax of each row of n contiguous floats, n <= softmax_max_len (rows of
// up to two registers are held in registers, longer rows take three passes).
using SoftmaxRowsFn = void (*)(const float* x, int64_t rows, int64_t n, float* y);

// out[r] = sum_k a[r * lda + k] * x[k] for r in [0, rows): a row-major matrix
// times a vector (Conv over a 1x1 image, e.g. squeeze-and-excitation layers).
using DotRowsFn = void (*)(const float* a, int64_t lda, const float* x, int64_t rows, int64_t n, float* out);

// y[i] = f(x[i]) over n contiguous floats.
using UnaryFn = void (*)(const float* x, float* y, int64_t n);

// y[i] = f(x[i] + bias[(col0 + i) % bias_len]) over n contiguous floats: a bias of
// bias_len floats (the last dimension, or 1 for a scalar) added in the same pass;
// col0 is the bias column of x[0], so callers can split a tensor anywhere.
using BiasUnaryFn = void (*)(const float* x, const float* bias, int64_t bias_len, int64_t col0, float* y, int64_t n);

struct F32Kernels {
  cpu::Isa isa;
  UnaryFn sqrt;     // IEEE, correctly rounded: the same bits as std::sqrt
  UnaryFn exp;      // fast_math.h's fast_expf, vectorised (subnormal results kept)
  UnaryFn sigmoid;  // fast_sigmoidf, vectorised
  UnaryFn tanh;     // fast_tanhf, vectorised
  // erf_impl.h (scalar twins in erf_scalar.h): erf within 4 ulp of std::erf (2.3 measured),
  // Gelu approximate "none" and "tanh" (relative bounds in tests/kernels/simd/test_erf.cc).
  UnaryFn erf;
  UnaryFn gelu_erf;
  UnaryFn gelu_tanh;
  // The same two Gelus of x + bias (com.microsoft BiasGelu / FastGelu).
  BiasUnaryFn gelu_erf_bias;
  BiasUnaryFn gelu_tanh_bias;
  BinaryRowsFn binary[kNumBinOps];
  ReduceRowsFn reduce_rows[kNumRowKinds];
  ArgRowsFn arg_rows[2];  // [0] ArgMin, [1] ArgMax
  int64_t arg_max_len;    // arg_rows handles rows of n <= arg_max_len
  SoftmaxRowsFn softmax_rows;
  int64_t softmax_max_len;
  DotRowsFn dot_rows;
};

// The table for `isa` (never above what the hardware has); tests use it to run
// every level.
const F32Kernels& f32_kernels_for(cpu::Isa isa);
// The table for cpu::active_isa().
const F32Kernels& f32_kernels();

const F32Kernels& f32_kernels_avx512();
const F32Kernels& f32_kernels_avx2();

}  // namespace simd
}  // namespace onnxmini
