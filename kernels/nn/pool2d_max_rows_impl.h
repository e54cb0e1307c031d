// maxpool2d_rows: 2-D float MaxPool with strides and dilations 1 (YOLO's SPP / SPPF 5x5
// windows, 2x2 / 3x3 stride-1 pools), written once over a vector traits class T and
// instantiated by pool2d_simd_avx2.cc and pool2d_simd_avx512.cc (internal linkage, as
// pool2d_simd_impl.h).
//
// Layout and blocking. Per output row and chunk of V output columns, everything stays in
// registers: the vertical maxima of the output row's valid input rows over the V + KW - 1
// input columns the chunk reads (two registers; lanes outside X load -inf through masks),
// then the window along the row as KW shifted copies of that pair (T::shift: valignd on
// AVX-512, two vpermps and a blend on AVX2), one store per chunk. The separable flat passes
// of pool2d_simd_impl.h over a padded copy took ~17 passes of 14 vectors on a 13x13 plane
// with a 5x5 window (170 ns per plane, AMD EPYC); here a 13-wide row is one chunk.
// Needs KW <= V + 1 (the two registers hold every column a chunk reads).
// NaN: the maxima start at -inf and keep the accumulator when a tap is not greater
// (T::max(v, m)), so NaN taps are skipped; the caller's max_fix_up then gives a window whose
// first valid tap is NaN that NaN, exactly pool2d_direct's scan, as for the flat passes.
#pragma once
#include <cstdint>

#include "kernels/nn/pool2d_simd_impl.h"

namespace onnxmini {
namespace nn {
namespace {

// The chunk of V output columns is the outer loop, so its column masks (which lanes of its
// two input registers lie inside X) are made once per chunk, and the KW shifts' permute
// indices once per call: the inner loops are plain masked loads, maxima and permutes.
template <class T>
void max_plane_rows(const Pool2dPlan& p, const float* x, float* y) {
  using R = typename T::Reg;
  constexpr int V = T::V;
  constexpr int kMaxShifts = 2 * V;
  typename T::Shift shifts[kMaxShifts];
  for (int64_t kw = 1; kw < p.KW; ++kw) shifts[kw] = T::make_shift(static_cast<int>(kw));
  const R ninf = T::set1(-__builtin_inff());
  for (int64_t next = 0; next < p.OW; next += V) {
    // A row at least V wide ends in a full chunk that overlaps the one before it (13 = 0..7,
    // 5..12): the overlap is computed twice and stored twice with the same values, and
    // every store is a full vector.
    const int64_t ow0 = next + V > p.OW && p.OW >= V ? p.OW - V : next;
    const int64_t c0 = ow0 - p.pw;  // the input column of lane 0
    const typename T::Mask m_lo = T::col_mask(c0, p.W), m_hi = T::col_mask(c0 + V, p.W);
    const int64_t n = p.OW - ow0 < V ? p.OW - ow0 : V;
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      const float* row = x + (oh * p.sh - p.ph + p.row_lo[oh]) * p.W + c0;
      R lo = ninf, hi = ninf;
      for (int64_t kh = p.row_lo[oh]; kh < p.row_hi[oh]; ++kh, row += p.W) {
        lo = T::max(T::load(row, m_lo), lo);
        if (p.KW > 1) hi = T::max(T::load(row + V, m_hi), hi);
      }
      R out = lo;
      for (int64_t kw = 1; kw < p.KW; ++kw) out = T::max(T::shift(lo, hi, shifts[kw]), out);
      T::store_n(y + oh * p.OW + ow0, out, n);
    }
  }
}

// maxpool2d_rows_s2: stride_w 2 and a window 1 or 2 wide (the 2x2 stride-2 pools of OCR
// and classifier models), any stride_h. A chunk of V output columns reads 2V input
// columns: the vertical maxima in two registers as above, then the window as the even
// lanes of the pair (T::even) and, for KW = 2, the odd ones (T::odd). The flat passes
// (padded copy, a row pass and a column pass through scratch) had taken ~54 ns per
// 2 x 96 plane of ppocr_mobile_v2_cls's first MaxPool (AMD EPYC, AVX-512), mostly setup.
template <class T>
void max_plane_rows_s2(const Pool2dPlan& p, const float* x, float* y) {
  using R = typename T::Reg;
  constexpr int V = T::V;
  const R ninf = T::set1(-__builtin_inff());
  for (int64_t ow0 = 0; ow0 < p.OW; ow0 += V) {
    const int64_t c0 = 2 * ow0 - p.pw;  // the input column of lane 0 of the pair
    const typename T::Mask m_lo = T::col_mask(c0, p.W), m_hi = T::col_mask(c0 + V, p.W);
    const int64_t n = p.OW - ow0 < V ? p.OW - ow0 : V;
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      const float* row = x + (oh * p.sh - p.ph + p.row_lo[oh]) * p.W + c0;
      R lo = ninf, hi = ninf;
      for (int64_t kh = p.row_lo[oh]; kh < p.row_hi[oh]; ++kh, row += p.W) {
        lo = T::max(T::load(row, m_lo), lo);
        hi = T::max(T::load(row + V, m_hi), hi);
      }
      R out = T::even(lo, hi);
      if (p.KW == 2) out = T::max(T::odd(lo, hi), out);
      T::store_n(y + oh * p.OW + ow0, out, n);
    }
  }
}

// A table's `max` plane function: maxpool2d_rows / _s2 where they fit (max_rows_fits), the
// flat passes of pool2d_simd_impl.h otherwise; then the NaN / empty-window fix-up.
template <class T>
void max_plane_rows_or_passes(const Pool2dPlan& p, const float* x, float* y, float* scratch) {
  if (!max_rows_fits(p, T::V)) return pool_plane_dispatch<MaxOp>(p, x, y, scratch);
  if (p.sw == 2) max_plane_rows_s2<T>(p, x, y);
  else max_plane_rows<T>(p, x, y);
  if (max_needs_fix_up(p, x)) max_fix_up(p, x, y);
}

}  // namespace
}  // namespace nn
}  // namespace onnxmini
