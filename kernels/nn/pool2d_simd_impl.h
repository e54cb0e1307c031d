// The body of the plane functions of avgpool2d_separable and
// maxpool2d_separable's float path (layout and passes: pool2d_simd.h), included
// once per ISA file: pool2d_simd.cc (portable), pool2d_simd_avx2.cc,
// pool2d_simd_avx512.cc, each compiled with its own -m flags. The loops are
// plain element-wise adds / maxima over contiguous floats, which the compiler
// vectorises for the file's ISA; pass 2 is instantiated for stride_w 1 and 2
// (the zoo's strides) so that the stride is a constant: stride 1 is an
// unaligned vector load, stride 2 an even/odd shuffle of two loads; other
// strides use the generic loop. No std:: algorithm templates here: their
// out-of-line copies are shared across files, so the AVX-512 file's could be
// linked into the portable path.
#pragma once
#include <type_traits>

#include "kernels/nn/pool2d_simd.h"

namespace onnxmini {
namespace nn {
namespace {

// The two reductions. Max keeps the accumulator when the new value is not
// greater (`v > m ? v : m`, a packed max), so the loops skip NaN taps; the
// caller's fix-up restores the scan's NaN rule (pool2d_simd.h).
struct SumOp {
  static float identity() { return 0.0f; }
  static float combine(float m, float v) { return m + v; }
};
struct MaxOp {
  static float identity() { return -__builtin_inff(); }
  static float combine(float m, float v) { return v > m ? v : m; }
};

// out[j] = op(out[j], src[j * stride]) for j in [0, n); __restrict: out and
// src are different scratch areas.
template <class Op, int64_t kStride>
inline void combine_strided(float* __restrict out, const float* __restrict src, int64_t n) {
  for (int64_t j = 0; j < n; ++j) out[j] = Op::combine(out[j], src[j * kStride]);
}
template <class Op>
inline void combine_strided_any(float* __restrict out, const float* __restrict src, int64_t n, int64_t stride) {
  for (int64_t j = 0; j < n; ++j) out[j] = Op::combine(out[j], src[j * stride]);
}
inline void fill(float* __restrict p, int64_t n, float v) {
  for (int64_t i = 0; i < n; ++i) p[i] = v;
}

// MaxPool's loops skip NaN taps; whether the plane holds one or some window is empty
// (ceil_mode overhang), so that max_fix_up must run. An OR of compares: vectorised.
inline bool max_needs_fix_up(const Pool2dPlan& p, const float* __restrict x) {
  int nan = 0;
  for (int64_t i = 0; i < p.H * p.W; ++i) nan |= x[i] != x[i];
  return nan || p.any_empty;
}

// MaxPool, as pool2d_direct's scan: a window with no tap inside gives lowest(); a NaN first
// tap is the result.
inline void max_fix_up(const Pool2dPlan& p, const float* x, float* y) {
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    float* out = y + oh * p.OW;
    const bool row_empty = p.row_lo[oh] >= p.row_hi[oh];
    const float* first_row = row_empty ? x : x + (oh * p.sh - p.ph + p.row_lo[oh] * p.dh) * p.W;
    for (int64_t o = 0; o < p.OW; ++o) {
      const int64_t c = p.col_first[o];
      if (row_empty || c < 0) {
        out[o] = -__FLT_MAX__;
        continue;
      }
      const float f = first_row[c];
      if (f != f) out[o] = f;
    }
  }
}

template <class Op, int64_t kStride>  // kStride 0: the stride is p.sw, at run time
void pool_plane(const Pool2dPlan& p, const float* __restrict x, float* __restrict y, float* __restrict scratch) {
  const int64_t W = p.W, Wp = p.Wp, OH = p.OH, OW = p.OW;
  if (OH <= 0 || OW <= 0) return;
  constexpr bool kMax = std::is_same_v<Op, MaxOp>;
  // xs: the input with identity pad columns (or the input itself).
  const float* xs = x;
  if (p.copy) {
    float* __restrict xp = scratch;
    scratch += p.H * Wp;
    fill(xp, p.H * Wp, Op::identity());
    for (int64_t ih = 0; ih < p.H; ++ih)
      for (int64_t i = 0; i < W; ++i) xp[ih * Wp + p.pw + i] = x[ih * W + i];
    xs = xp;
  }
  const bool fix_up = kMax && max_needs_fix_up(p, x);
  // Pass 1: column sums (maxima) per output row.
  float* __restrict col = scratch;
  fill(col, OH * Wp, Op::identity());
  for (int64_t kh = 0; kh < static_cast<int64_t>(p.kh_rows.size()); ++kh) {
    const auto [lo, hi] = p.kh_rows[kh];
    if (lo >= hi) continue;
    if (p.sh == 1) {  // consecutive input rows: one flat loop
      combine_strided<Op, 1>(col + lo * Wp, xs + (lo - p.ph + kh * p.dh) * Wp, (hi - lo) * Wp);
    } else {
      for (int64_t oh = lo; oh < hi; ++oh)
        combine_strided<Op, 1>(col + oh * Wp, xs + (oh * p.sh - p.ph + kh * p.dh) * Wp, Wp);
    }
  }
  // Pass 2: KW column values per output, flat over all rows.
  const int64_t tw = Wp / p.sw, n = (OH - 1) * tw + OW;
  float* __restrict tmp = col + OH * Wp;
  fill(tmp, n, Op::identity());
  for (int64_t k = 0; k < p.KW; ++k) {
    if constexpr (kStride > 0) combine_strided<Op, kStride>(tmp, col + k * p.dw, n);
    else combine_strided_any<Op>(tmp, col + k * p.dw, n, p.sw);
  }
  // Output rows (AveragePool: divided by the window's count).
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float* __restrict src = tmp + oh * tw;
    float* __restrict out = y + oh * OW;
    if constexpr (kMax) {
      for (int64_t o = 0; o < OW; ++o) out[o] = src[o];
    } else {
      const float rdiv = p.row_div[oh];
      const float* __restrict cdiv = p.col_div.data();
      for (int64_t o = 0; o < OW; ++o) out[o] = src[o] / (rdiv * cdiv[o]);
    }
  }
  if (fix_up) max_fix_up(p, x, y);
}

template <class Op>
void pool_plane_dispatch(const Pool2dPlan& p, const float* x, float* y, float* scratch) {
  if (p.sw == 1) pool_plane<Op, 1>(p, x, y, scratch);
  else if (p.sw == 2) pool_plane<Op, 2>(p, x, y, scratch);
  else pool_plane<Op, 0>(p, x, y, scratch);
}

}  // namespace
}  // namespace nn
}  // namespace onnxmini
