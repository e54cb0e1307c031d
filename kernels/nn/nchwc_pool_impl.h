// The blocked pooling row routines (nchwc_pool.h), instantiated once per ISA translation
// unit. Each output pixel keeps 16 float accumulators (one per channel of its block); the
// fixed 16-lane inner loops become one zmm (AVX-512), two ymm (AVX2) or four xmm (portable
// SSE2 baseline) operations per tap.
#pragma once
#include <algorithm>
#include <limits>

#include "kernels/nn/nchwc_pool.h"

namespace onnxmini {
namespace nn {
namespace nchwc_pool_detail {

constexpr int kLanes = 16;

template <bool kMax>
inline void pool_row(const NchwcPoolArgs& a, const float* x, float* y, int64_t oh) {
  const NchwcTaps& r = a.rows[oh];
  const int64_t ih0 = oh * a.sh - a.ph;
  float* yr = y + oh * a.OW * kLanes;
  for (int64_t ow = 0; ow < a.OW; ++ow) {
    const NchwcTaps& c = a.cols[ow];
    const int64_t iw0 = ow * a.sw - a.pw;
    float acc[kLanes];
    for (int l = 0; l < kLanes; ++l) acc[l] = kMax ? std::numeric_limits<float>::lowest() : 0.0f;
    for (int64_t kh = r.lo; kh < r.hi; ++kh) {
      const float* xr = x + (ih0 + kh * a.dh) * a.W * kLanes;
      for (int64_t kw = c.lo; kw < c.hi; ++kw) {
        const float* v = xr + (iw0 + kw * a.dw) * kLanes;
        for (int l = 0; l < kLanes; ++l) acc[l] = kMax ? (v[l] > acc[l] ? v[l] : acc[l]) : acc[l] + v[l];
      }
    }
    float* out = yr + ow * kLanes;
    if (kMax) {
      for (int l = 0; l < kLanes; ++l) out[l] = acc[l];
    } else {
      const int64_t div = a.count_include_pad ? r.padded * c.padded : (r.hi - r.lo) * (c.hi - c.lo);
      const float inv = div > 0 ? 1.0f / static_cast<float>(div) : 0.0f;
      for (int l = 0; l < kLanes; ++l) out[l] = acc[l] * inv;
    }
  }
}

inline void global_max(const float* x, int64_t hw, float* y) {
  float acc[kLanes];
  for (int l = 0; l < kLanes; ++l) acc[l] = hw > 0 ? x[l] : 0.0f;
  for (int64_t p = 1; p < hw; ++p)
    for (int l = 0; l < kLanes; ++l) acc[l] = x[p * kLanes + l] > acc[l] ? x[p * kLanes + l] : acc[l];
  for (int l = 0; l < kLanes; ++l) y[l] = acc[l];
}

// Float sums over chunks of 64 pixels, chunks added in double: each float lane adds at most
// 64 terms (rounding <= 64 u max|x| per chunk), as pool.cc's plane_sum bounds its lanes.
inline void global_avg(const float* x, int64_t hw, float* y) {
  constexpr int64_t kChunk = 64;
  double total[kLanes] = {};
  for (int64_t p0 = 0; p0 < hw; p0 += kChunk) {
    const int64_t p1 = std::min(hw, p0 + kChunk);
    float acc[kLanes] = {};
    for (int64_t p = p0; p < p1; ++p)
      for (int l = 0; l < kLanes; ++l) acc[l] += x[p * kLanes + l];
    for (int l = 0; l < kLanes; ++l) total[l] += acc[l];
  }
  for (int l = 0; l < kLanes; ++l) y[l] = hw > 0 ? static_cast<float>(total[l] / static_cast<double>(hw)) : 0.0f;
}

inline void scale(const float* x, int64_t hw, const float* g, float* y) {
  for (int64_t p = 0; p < hw; ++p)
    for (int l = 0; l < kLanes; ++l) y[p * kLanes + l] = x[p * kLanes + l] * g[l];
}

inline NchwcPoolKernels make_table(cpu::Isa isa) {
  return NchwcPoolKernels{isa, pool_row<true>, pool_row<false>, global_max, global_avg, scale};
}

}  // namespace nchwc_pool_detail
}  // namespace nn
}  // namespace onnxmini
