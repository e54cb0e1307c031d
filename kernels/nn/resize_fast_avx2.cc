// AVX2 + FMA row primitives of Resize's fast paths (resize_fast.h), 8 lanes.
// Rows are contiguous floats; loops run whole vectors and finish with scalars.
//   replicate_row: one load of 8 source floats gives s output vectors, lane l
//     of vector j taking source (8j + l) / s (vpermps with a per-j index),
//     each stored to every output row that repeats this source row (no
//     re-read of a finished row); factors above 8 fill with broadcasts. A row
//     of 8 or more sources ends with its last 8 again (an overlapping full
//     vector), not vmaskmovps stores (slow on AMD).
//   lerp_gather_row: the two source columns of each output column are read
//     from the tables and combined with one FMA. Upscaling: the sources of 8
//     consecutive outputs lie in a window of at most 8 floats (the tables are
//     monotone), taken with one load and two vpermps; otherwise (downscaling)
//     two gathers (vgatherdps) from the source row, which is hot in L1.
//   blend_rows: wa * a + wb * b, one FMA per vector.
//   nearest_flat: 8 outputs of the plane's stream per ymm, their sources a
//     window of hi - lo + 1 floats: below 8, one load and one vpermps; below
//     16, two of each and a blend; else a gather. The plane's last partial
//     vector goes through a stack buffer (vmaskmovps stores are slow on AMD).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/nn/resize_fast.h"

namespace onnxmini {
namespace nn {
namespace {

// vpermps indices of replicate_row, built once: idx[s][j] lane l = (8j + l) / s
// (per row they would cost 8 s integer divisions, more than a short row itself).
struct ReplicateLanes {
  __m256i idx[9][8];
  ReplicateLanes() {
    for (int s = 1; s <= 8; ++s)
      for (int j = 0; j < s; ++j) {
        alignas(32) int32_t lanes[8];
        for (int l = 0; l < 8; ++l) lanes[l] = (8 * j + l) / s;
        idx[s][j] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
      }
  }
};
const ReplicateLanes& replicate_lanes() {
  static const ReplicateLanes t;
  return t;
}

// The 2x nearest upsample (s = 2, two copies) with the factor and copies known at compile
// time, as replicate_row_2x2 in resize_fast_avx512.cc.
__attribute__((noinline)) void replicate_row_2x2(const float* src, int64_t w, float* dst, int64_t dst_stride) {
  const __m256i* idx = replicate_lanes().idx[2];
  const __m256i lo = idx[0], hi = idx[1];
  float* d1 = dst + dst_stride;
  auto eight = [&](int64_t at) {  // sources at .. at + 7 -> 16 outputs in both rows
    const __m256 v = _mm256_loadu_ps(src + at);
    const __m256 a = _mm256_permutevar8x32_ps(v, lo), b = _mm256_permutevar8x32_ps(v, hi);
    _mm256_storeu_ps(dst + 2 * at, a);
    _mm256_storeu_ps(dst + 2 * at + 8, b);
    _mm256_storeu_ps(d1 + 2 * at, a);
    _mm256_storeu_ps(d1 + 2 * at + 8, b);
  };
  int64_t i = 0;
  for (; i + 8 <= w; i += 8) eight(i);
  // The last 8 sources again, overlapping (same values), rather than vmaskmovps stores, which
  // are slow on AMD (96 x 26x26 -> 52x52 1.4x this way).
  if (i < w && w >= 8) {
    eight(w - 8);
  } else if (i < w) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int32_t rest = static_cast<int32_t>(w - i);  // 1..7 floats -> 2..14 outputs
    const __m256 v = _mm256_maskload_ps(src + i, _mm256_cmpgt_epi32(_mm256_set1_epi32(rest), lanes));
    const __m256i ma = _mm256_cmpgt_epi32(_mm256_set1_epi32(std::min(8, 2 * rest)), lanes);
    const __m256 a = _mm256_permutevar8x32_ps(v, lo), b = _mm256_permutevar8x32_ps(v, hi);
    _mm256_maskstore_ps(dst + 2 * i, ma, a);
    _mm256_maskstore_ps(d1 + 2 * i, ma, a);
    if (2 * rest > 8) {
      const __m256i mb = _mm256_cmpgt_epi32(_mm256_set1_epi32(2 * rest - 8), lanes);
      _mm256_maskstore_ps(dst + 2 * i + 8, mb, b);
      _mm256_maskstore_ps(d1 + 2 * i + 8, mb, b);
    }
  }
}

void replicate_row_avx2(const float* src, int64_t w, int64_t s, float* dst, int64_t copies, int64_t dst_stride) {
  if (s == 2 && copies == 2) return replicate_row_2x2(src, w, dst, dst_stride);
  auto store = [&](int64_t at, __m256 v) {
    for (int64_t r = 0; r < copies; ++r) _mm256_storeu_ps(dst + r * dst_stride + at, v);
  };
  int64_t i = 0;
  if (s == 1) {
    for (; i + 8 <= w; i += 8) store(i, _mm256_loadu_ps(src + i));
  } else if (s <= 8) {
    const __m256i* idx = replicate_lanes().idx[s];
    for (; i + 8 <= w; i += 8) {
      const __m256 v = _mm256_loadu_ps(src + i);
      for (int64_t j = 0; j < s; ++j) store(i * s + 8 * j, _mm256_permutevar8x32_ps(v, idx[j]));
    }
    if (i < w && w >= 8) {  // the last 8 sources again, overlapping (as replicate_row_2x2)
      i = w - 8;
      const __m256 v = _mm256_loadu_ps(src + i);
      for (int64_t j = 0; j < s; ++j) store(i * s + 8 * j, _mm256_permutevar8x32_ps(v, idx[j]));
      i = w;
    } else if (i < w) {
      // The last w - i < 8 floats: one masked load, then (w - i) * s outputs in masked
      // stores (a 38-wide row doubled: 6 floats, 12 outputs; one fill per float and copy
      // before, the row's slowest part).
      const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
      const int64_t rest = w - i, out_rest = rest * s;
      const __m256 v = _mm256_maskload_ps(src + i, _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(rest)), lanes));
      for (int64_t j = 0; 8 * j < out_rest; ++j) {
        const int32_t n = static_cast<int32_t>(std::min<int64_t>(8, out_rest - 8 * j));
        const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes);
        const __m256 o = _mm256_permutevar8x32_ps(v, idx[j]);
        for (int64_t r = 0; r < copies; ++r) _mm256_maskstore_ps(dst + r * dst_stride + i * s + 8 * j, m, o);
      }
      i = w;
    }
  } else {
    for (; i < w; ++i) {
      const __m256 v = _mm256_set1_ps(src[i]);
      int64_t j = 0;
      for (; j + 8 <= s; j += 8) store(i * s + j, v);
      for (; j < s; ++j)
        for (int64_t r = 0; r < copies; ++r) dst[r * dst_stride + i * s + j] = src[i];
    }
  }
  for (; i < w; ++i)
    for (int64_t r = 0; r < copies; ++r) std::fill(dst + r * dst_stride + i * s, dst + r * dst_stride + (i + 1) * s, src[i]);
}

void lerp_gather_row_avx2(const float* src, int64_t src_w, const int32_t* i0, const int32_t* i1, const float* w0,
                          const float* w1, int64_t n, bool monotone, float* dst) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  int64_t x = 0;
  for (; x + 8 <= n; x += 8) {
    const __m256i j0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(i0 + x));
    const __m256i j1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(i1 + x));
    __m256 a, b;
    const int64_t base = i0[x];
    if (monotone && i1[x + 7] - base < 8) {
      // The window src[base, base + 8) holds every source of these outputs.
      const int64_t avail = src_w - base;
      const __m256 win =
          avail >= 8 ? _mm256_loadu_ps(src + base)
                     : _mm256_maskload_ps(src + base, _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(avail)), lanes));
      const __m256i vb = _mm256_set1_epi32(static_cast<int32_t>(base));
      a = _mm256_permutevar8x32_ps(win, _mm256_sub_epi32(j0, vb));
      b = _mm256_permutevar8x32_ps(win, _mm256_sub_epi32(j1, vb));
    } else {
      a = _mm256_i32gather_ps(src, j0, 4);
      b = _mm256_i32gather_ps(src, j1, 4);
    }
    _mm256_storeu_ps(dst + x, _mm256_fmadd_ps(_mm256_loadu_ps(w1 + x), b, _mm256_mul_ps(_mm256_loadu_ps(w0 + x), a)));
  }
  for (; x < n; ++x) dst[x] = std::fma(w1[x], src[i1[x]], w0[x] * src[i0[x]]);
}

void blend_rows_avx2(const float* a, const float* b, float wa, float wb, int64_t n, float* dst) {
  const __m256 va = _mm256_set1_ps(wa), vb = _mm256_set1_ps(wb);
  int64_t x = 0;
  for (; x + 8 <= n; x += 8)
    _mm256_storeu_ps(dst + x, _mm256_fmadd_ps(vb, _mm256_loadu_ps(b + x), _mm256_mul_ps(va, _mm256_loadu_ps(a + x))));
  for (; x < n; ++x) dst[x] = std::fma(wb, b[x], wa * a[x]);
}

void nearest_flat_avx2(const float* src, int64_t src_n, const int32_t* idx, const int32_t* lo8, const int32_t* hi8,
                       int64_t n, float* dst) {
  auto window = [&](int64_t at) {  // src[at, at + 8), zeros past src_n
    if (src_n - at >= 8) return _mm256_loadu_ps(src + at);
    alignas(32) float t[8] = {};
    for (int64_t i = 0; i < src_n - at; ++i) t[i] = src[at + i];
    return _mm256_load_ps(t);
  };
  for (int64_t q = 0, c = 0; q < n; q += 8, ++c) {
    const int64_t m = std::min<int64_t>(8, n - q), lo = lo8[c], hi = hi8[c];
    __m256i ix;
    if (m == 8) {
      ix = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + q));
    } else {
      alignas(32) int32_t t[8] = {};  // lanes past the plane read source 0
      for (int64_t i = 0; i < m; ++i) t[i] = idx[q + i];
      ix = _mm256_load_si256(reinterpret_cast<const __m256i*>(t));
    }
    const __m256i rel = _mm256_sub_epi32(ix, _mm256_set1_epi32(static_cast<int32_t>(lo)));
    __m256 v;
    if (hi - lo < 8) {
      v = _mm256_permutevar8x32_ps(window(lo), rel);
    } else if (hi - lo < 16) {  // vpermps reads the index's low 3 bits: lanes >= 8 take the second window
      const __m256 a = _mm256_permutevar8x32_ps(window(lo), rel), b = _mm256_permutevar8x32_ps(window(lo + 8), rel);
      v = _mm256_blendv_ps(a, b, _mm256_castsi256_ps(_mm256_cmpgt_epi32(rel, _mm256_set1_epi32(7))));
    } else {
      v = _mm256_i32gather_ps(src, ix, 4);
    }
    if (m == 8) {
      _mm256_storeu_ps(dst + q, v);
    } else {
      alignas(32) float t[8];
      _mm256_store_ps(t, v);
      std::memcpy(dst + q, t, static_cast<size_t>(m) * sizeof(float));
    }
  }
}

}  // namespace

const ResizeRowKernels& resize_row_kernels_avx2() {
  static const ResizeRowKernels k{cpu::Isa::Avx2, replicate_row_avx2, lerp_gather_row_avx2, blend_rows_avx2,
                                  nearest_flat_avx2};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
