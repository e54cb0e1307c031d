// The blocked pooling routines (nchwc_pool.h) as templates over a block type B (one Reg = the
// 16 channels of one pixel), instantiated per ISA translation unit with its own traits:
// AVX-512 one zmm, AVX2 two ymm, portable four SSE2 xmm (the x86-64 baseline). Plain 16-lane
// loops over a float[16] were not vectorised by GCC at our flags (no vmaxps in the AVX-512
// object), hence explicit registers. Everything here has internal linkage (anonymous
// namespace): the three translation units' instantiations must not be merged by the linker.
#pragma once
#include <algorithm>
#include <limits>

#include "kernels/nn/nchwc_pool.h"

namespace onnxmini {
namespace nn {
namespace {

constexpr int kPoolLanes = 16;

template <class B, bool kMax>
void nchwc_pool_row(const NchwcPoolArgs& a, const float* x, float* y, int64_t oh) {
  using Reg = typename B::Reg;
  const NchwcTaps& r = a.rows[oh];
  const int64_t ih0 = oh * a.sh - a.ph;
  float* yr = y + oh * a.OW * kPoolLanes;
  const Reg init = B::set1(kMax ? std::numeric_limits<float>::lowest() : 0.0f);
  for (int64_t ow = 0; ow < a.OW; ++ow) {
    const NchwcTaps& c = a.cols[ow];
    const int64_t iw0 = ow * a.sw - a.pw;
    Reg acc = init;
    for (int64_t kh = r.lo; kh < r.hi; ++kh) {
      const float* xr = x + (ih0 + kh * a.dh) * a.W * kPoolLanes;
      for (int64_t kw = c.lo; kw < c.hi; ++kw) {
        const Reg v = B::load(xr + (iw0 + kw * a.dw) * kPoolLanes);
        acc = kMax ? B::max(v, acc) : B::add(acc, v);
      }
    }
    if (!kMax) {
      const int64_t div = a.count_include_pad ? r.padded * c.padded : (r.hi - r.lo) * (c.hi - c.lo);
      acc = B::mul(acc, B::set1(div > 0 ? 1.0f / static_cast<float>(div) : 0.0f));
    }
    B::store(yr + ow * kPoolLanes, acc);
  }
}

template <class B>
void nchwc_global_max(const float* x, int64_t hw, float* y) {
  typename B::Reg acc = hw > 0 ? B::load(x) : B::set1(0.0f);
  for (int64_t p = 1; p < hw; ++p) acc = B::max(B::load(x + p * kPoolLanes), acc);
  B::store(y, acc);
}

// Float sums over chunks of 64 pixels, chunks added in double: each float lane adds at most
// 64 terms (rounding <= 64 u max|x| per chunk), as global_pool.cc's plane_sum_f32 bounds its lanes.
template <class B>
void nchwc_global_avg(const float* x, int64_t hw, float* y) {
  constexpr int64_t kChunk = 64;
  double total[kPoolLanes] = {};
  for (int64_t p0 = 0; p0 < hw; p0 += kChunk) {
    const int64_t p1 = std::min(hw, p0 + kChunk);
    typename B::Reg acc = B::set1(0.0f);
    for (int64_t p = p0; p < p1; ++p) acc = B::add(acc, B::load(x + p * kPoolLanes));
    float part[kPoolLanes];
    B::store(part, acc);
    for (int l = 0; l < kPoolLanes; ++l) total[l] += part[l];
  }
  for (int l = 0; l < kPoolLanes; ++l) y[l] = hw > 0 ? static_cast<float>(total[l] / static_cast<double>(hw)) : 0.0f;
}

template <class B>
void nchwc_scale(const float* x, int64_t hw, const float* g, float* y) {
  const typename B::Reg gv = B::load(g);
  for (int64_t p = 0; p < hw; ++p) B::store(y + p * kPoolLanes, B::mul(B::load(x + p * kPoolLanes), gv));
}

template <class B>
NchwcPoolKernels nchwc_pool_table(cpu::Isa isa) {
  return NchwcPoolKernels{isa, nchwc_pool_row<B, true>, nchwc_pool_row<B, false>, nchwc_global_max<B>,
                          nchwc_global_avg<B>, nchwc_scale<B>};
}

}  // namespace
}  // namespace nn
}  // namespace onnxmini
