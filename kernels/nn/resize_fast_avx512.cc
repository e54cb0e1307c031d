// AVX-512 row primitives of Resize's fast paths (resize_fast.h), 16 lanes.
// Rows are contiguous floats; row tails use masked loads / stores / gathers.
//   replicate_row: one load of 16 source floats gives s output vectors, lane
//     l of vector j taking source (16j + l) / s (vpermps with a per-j index;
//     2x = the two halves of the register each spread over a vector), each
//     stored to every output row that repeats this source row (no re-read of
//     a finished row); the tail of fewer than 16 sources is a masked load and
//     masked stores.
//     Factors above 16 fill with broadcasts.
//   lerp_gather_row: the two source columns of each output column are read
//     from the tables and combined with one FMA. Upscaling: the sources of 16
//     consecutive outputs lie in a window of at most 16 floats (the tables
//     are monotone), taken with one load and two vpermps; otherwise (down-
//     scaling, or a window past 16) two gathers (vgatherdps). Row tails are
//     masked gathers.
//   blend_rows: wa * a + wb * b, one FMA per vector.
//   nearest_flat: 16 outputs of the plane's stream per zmm, the sources of its
//     two 8-output chunks a window of hi - lo + 1 floats: below 16, one load
//     and one vpermps; below 32, two loads and one vpermt2ps; else a gather.
//     Row boundaries fall inside vectors, so a 20-wide output row costs 1.25
//     stores, not a full and a masked one.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/nn/resize_fast.h"

// GCC 12 reports a false -Wmaybe-uninitialized inside its own masked-intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace onnxmini {
namespace nn {
namespace {

__mmask16 tail_mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }

// vpermps indices of replicate_row, built once: idx[s][j] lane l = (16j + l) / s
// (per row they would cost 16 s integer divisions, more than the row itself).
struct ReplicateLanes {
  __m512i idx[17][16];
  ReplicateLanes() {
    for (int s = 1; s <= 16; ++s)
      for (int j = 0; j < s; ++j) {
        alignas(64) int32_t lanes[16];
        for (int l = 0; l < 16; ++l) lanes[l] = (16 * j + l) / s;
        idx[s][j] = _mm512_load_si512(lanes);
      }
  }
};
const ReplicateLanes& replicate_lanes() {
  static const ReplicateLanes t;
  return t;
}

// The 2x nearest upsample (s = 2, two copies: the detectors' FPN Resize), with the factor and
// the copies known at compile time: the general loop's per-store loop over copies and run-time
// s cost as much as the stores on short rows (96 x 26x26 -> 52x52: 25 us against onnxruntime's
// 20, AMD EPYC).
void replicate_row_2x2(const float* src, int64_t w, float* dst, int64_t dst_stride) {
  const __m512i* idx = replicate_lanes().idx[2];
  const __m512i lo = idx[0], hi = idx[1];
  float* d1 = dst + dst_stride;
  int64_t i = 0;
  for (; i + 16 <= w; i += 16) {
    const __m512 v = _mm512_loadu_ps(src + i);
    const __m512 a = _mm512_permutexvar_ps(lo, v), b = _mm512_permutexvar_ps(hi, v);
    _mm512_storeu_ps(dst + 2 * i, a);
    _mm512_storeu_ps(dst + 2 * i + 16, b);
    _mm512_storeu_ps(d1 + 2 * i, a);
    _mm512_storeu_ps(d1 + 2 * i + 16, b);
  }
  if (i < w) {
    const int64_t rest = w - i;  // 1..15 floats -> 2..30 outputs
    const __m512 v = _mm512_maskz_loadu_ps(tail_mask(rest), src + i);
    const __mmask16 ma = tail_mask(std::min<int64_t>(16, 2 * rest));
    const __mmask16 mb = 2 * rest > 16 ? tail_mask(2 * rest - 16) : __mmask16(0);
    const __m512 a = _mm512_permutexvar_ps(lo, v), b = _mm512_permutexvar_ps(hi, v);
    _mm512_mask_storeu_ps(dst + 2 * i, ma, a);
    _mm512_mask_storeu_ps(d1 + 2 * i, ma, a);
    if (mb) {
      _mm512_mask_storeu_ps(dst + 2 * i + 16, mb, b);
      _mm512_mask_storeu_ps(d1 + 2 * i + 16, mb, b);
    }
  }
}

void replicate_row_avx512(const float* src, int64_t w, int64_t s, float* dst, int64_t copies,
                          int64_t dst_stride) {
  if (s == 2 && copies == 2) return replicate_row_2x2(src, w, dst, dst_stride);
  auto store = [&](int64_t at, __m512 v) {
    for (int64_t r = 0; r < copies; ++r) _mm512_storeu_ps(dst + r * dst_stride + at, v);
  };
  auto store_masked = [&](int64_t at, __mmask16 m, __m512 v) {
    for (int64_t r = 0; r < copies; ++r) _mm512_mask_storeu_ps(dst + r * dst_stride + at, m, v);
  };
  if (s > 16) {
    for (int64_t i = 0; i < w; ++i) {
      const __m512 v = _mm512_set1_ps(src[i]);
      int64_t j = 0;
      for (; j + 16 <= s; j += 16) store(i * s + j, v);
      if (j < s) store_masked(i * s + j, tail_mask(s - j), v);
    }
    return;
  }
  const __m512i* idx = replicate_lanes().idx[s];
  int64_t i = 0;
  for (; i + 16 <= w; i += 16) {
    const __m512 v = _mm512_loadu_ps(src + i);
    for (int64_t j = 0; j < s; ++j) store(i * s + 16 * j, _mm512_permutexvar_ps(idx[j], v));
  }
  if (i < w) {
    const int64_t rest = w - i, out_rest = rest * s;  // out_rest < 16 * s
    const __m512 v = _mm512_maskz_loadu_ps(tail_mask(rest), src + i);
    for (int64_t j = 0; 16 * j < out_rest; ++j)
      store_masked(i * s + 16 * j, tail_mask(std::min<int64_t>(16, out_rest - 16 * j)), _mm512_permutexvar_ps(idx[j], v));
  }
}

void lerp_gather_row_avx512(const float* src, int64_t src_w, const int32_t* i0, const int32_t* i1, const float* w0,
                            const float* w1, int64_t n, bool monotone, float* dst) {
  int64_t x = 0;
  for (; x + 16 <= n; x += 16) {
    const __m512i j0 = _mm512_loadu_si512(i0 + x), j1 = _mm512_loadu_si512(i1 + x);
    __m512 a, b;
    const int64_t base = i0[x];
    if (monotone && i1[x + 15] - base < 16) {
      // The window src[base, base + 16) holds every source of these outputs.
      const int64_t avail = src_w - base;
      const __m512 win = avail >= 16 ? _mm512_loadu_ps(src + base) : _mm512_maskz_loadu_ps(tail_mask(avail), src + base);
      const __m512i vb = _mm512_set1_epi32(static_cast<int32_t>(base));
      a = _mm512_permutexvar_ps(_mm512_sub_epi32(j0, vb), win);
      b = _mm512_permutexvar_ps(_mm512_sub_epi32(j1, vb), win);
    } else {
      a = _mm512_i32gather_ps(j0, src, 4);
      b = _mm512_i32gather_ps(j1, src, 4);
    }
    _mm512_storeu_ps(dst + x, _mm512_fmadd_ps(_mm512_loadu_ps(w1 + x), b, _mm512_mul_ps(_mm512_loadu_ps(w0 + x), a)));
  }
  if (x < n) {
    const __mmask16 m = tail_mask(n - x);
    const __m512 zero = _mm512_setzero_ps();
    const __m512 a = _mm512_mask_i32gather_ps(zero, m, _mm512_maskz_loadu_epi32(m, i0 + x), src, 4);
    const __m512 b = _mm512_mask_i32gather_ps(zero, m, _mm512_maskz_loadu_epi32(m, i1 + x), src, 4);
    const __m512 r =
        _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w1 + x), b, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, w0 + x), a));
    _mm512_mask_storeu_ps(dst + x, m, r);
  }
}

void blend_rows_avx512(const float* a, const float* b, float wa, float wb, int64_t n, float* dst) {
  const __m512 va = _mm512_set1_ps(wa), vb = _mm512_set1_ps(wb);
  int64_t x = 0;
  for (; x + 16 <= n; x += 16)
    _mm512_storeu_ps(dst + x, _mm512_fmadd_ps(vb, _mm512_loadu_ps(b + x), _mm512_mul_ps(va, _mm512_loadu_ps(a + x))));
  if (x < n) {
    const __mmask16 m = tail_mask(n - x);
    const __m512 r = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, b + x), _mm512_mul_ps(va, _mm512_maskz_loadu_ps(m, a + x)));
    _mm512_mask_storeu_ps(dst + x, m, r);
  }
}

void nearest_flat_avx512(const float* src, int64_t src_n, const int32_t* idx, const int32_t* lo8, const int32_t* hi8,
                         int64_t n, float* dst) {
  auto window = [&](int64_t at) {  // src[at, at + 16), zeros past src_n
    const int64_t avail = src_n - at;
    return avail >= 16 ? _mm512_loadu_ps(src + at) : _mm512_maskz_loadu_ps(tail_mask(std::max<int64_t>(avail, 0)), src + at);
  };
  for (int64_t q = 0, c = 0; q < n; q += 16, c += 2) {
    const int64_t m = std::min<int64_t>(16, n - q);
    const __mmask16 mask = tail_mask(m);
    const int64_t lo = m > 8 ? std::min(lo8[c], lo8[c + 1]) : lo8[c];
    const int64_t hi = m > 8 ? std::max(hi8[c], hi8[c + 1]) : hi8[c];
    const __m512i ix = m == 16 ? _mm512_loadu_si512(idx + q) : _mm512_maskz_loadu_epi32(mask, idx + q);
    const __m512i rel = _mm512_sub_epi32(ix, _mm512_set1_epi32(static_cast<int32_t>(lo)));
    __m512 v;
    if (hi - lo < 16) v = _mm512_permutexvar_ps(rel, window(lo));
    else if (hi - lo < 32) v = _mm512_permutex2var_ps(window(lo), rel, window(lo + 16));
    else v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, ix, src, 4);
    if (m == 16) _mm512_storeu_ps(dst + q, v);
    else _mm512_mask_storeu_ps(dst + q, mask, v);
  }
}

}  // namespace

const ResizeRowKernels& resize_row_kernels_avx512() {
  static const ResizeRowKernels k{cpu::Isa::Avx512, replicate_row_avx512, lerp_gather_row_avx512, blend_rows_avx512,
                                  nearest_flat_avx512};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
