// The SIMD attention inner loops of attention_lanes.h, written once over the
// vector interface V of kernels/simd (V512: 16 lanes, V256: 8 lanes). Include
// only from an ISA file (attention_lanes_avx2.cc / _avx512.cc).
#pragma once
#include <cstdint>

#include "kernels/attention/attention_lanes.h"

namespace onnxmini {
namespace attention {
namespace {

// Scores of up to 4 query rows against one packed key block at a time: the
// kKeyBlock scores of a row live in kKeyBlock / W registers, so each key
// vector loaded from the block feeds 4 FMAs (one per row) and each broadcast
// query feature feeds kKeyBlock / W FMAs.
template <class V>
void block_scores(const float* q, int64_t rows, int64_t d_len, const float* kt, float* s) {
  using R = typename V::reg;
  constexpr int NV = static_cast<int>(kKeyBlock) / V::W;
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    R acc[4][NV];
    for (int i = 0; i < 4; ++i)
      for (int v = 0; v < NV; ++v) acc[i][v] = V::set1(0.f);
    const float* q0 = q + r * d_len;
    for (int64_t d = 0; d < d_len; ++d) {
      R k[NV];
      for (int v = 0; v < NV; ++v) k[v] = V::load(kt + d * kKeyBlock + v * V::W);
      for (int i = 0; i < 4; ++i) {
        const R qi = V::set1(q0[i * d_len + d]);
        for (int v = 0; v < NV; ++v) acc[i][v] = V::fmadd(qi, k[v], acc[i][v]);
      }
    }
    for (int i = 0; i < 4; ++i)
      for (int v = 0; v < NV; ++v) V::store(s + (r + i) * kKeyBlock + v * V::W, acc[i][v]);
  }
  for (; r < rows; ++r) {
    R acc[NV];
    for (int v = 0; v < NV; ++v) acc[v] = V::set1(0.f);
    const float* qr = q + r * d_len;
    for (int64_t d = 0; d < d_len; ++d) {
      const R qd = V::set1(qr[d]);
      for (int v = 0; v < NV; ++v) acc[v] = V::fmadd(qd, V::load(kt + d * kKeyBlock + v * V::W), acc[v]);
    }
    for (int v = 0; v < NV; ++v) V::store(s + r * kKeyBlock + v * V::W, acc[v]);
  }
}

// acc[0:dv] += p[0:n] . v[0:n][0:dv]: the output row stays in registers over
// the keys, 4 column vectors at a time, keys taken two at a time into two
// accumulator sets (8 independent FMA chains hide the FMA latency).
template <class V>
void accumulate_pv(const float* p, int64_t n, const float* v, int64_t v_stride, int64_t dv, float* acc) {
  using R = typename V::reg;
  for (int64_t c0 = 0; c0 < dv; c0 += 4 * V::W) {
    const int64_t width = dv - c0 < 4 * V::W ? dv - c0 : 4 * V::W;
    const int nvec = static_cast<int>((width + V::W - 1) / V::W);
    const bool full = width == 4 * V::W;
    const typename V::mask last = V::tail(width - (nvec - 1) * V::W);
    R a[4], b[4];
    for (int k = 0; k < 4; ++k) a[k] = b[k] = V::set1(0.f);
    auto load_col = [&](const float* row, int k) {
      if (full || k < nvec - 1) return V::load(row + c0 + k * V::W);
      return V::load_fill(row + c0 + k * V::W, last, V::set1(0.f));
    };
    int64_t j = 0;
    for (; j + 2 <= n; j += 2) {
      const R p0 = V::set1(p[j]), p1 = V::set1(p[j + 1]);
      const float* v0 = v + j * v_stride;
      const float* v1 = v0 + v_stride;
      for (int k = 0; k < nvec; ++k) {
        a[k] = V::fmadd(p0, load_col(v0, k), a[k]);
        b[k] = V::fmadd(p1, load_col(v1, k), b[k]);
      }
    }
    if (j < n) {
      const R p0 = V::set1(p[j]);
      for (int k = 0; k < nvec; ++k) a[k] = V::fmadd(p0, load_col(v + j * v_stride, k), a[k]);
    }
    for (int k = 0; k < nvec; ++k) {
      const R sum = V::add(a[k], b[k]);
      if (full || k < nvec - 1) {
        V::store(acc + c0 + k * V::W, V::add(V::load(acc + c0 + k * V::W), sum));
      } else {
        V::store_mask(acc + c0 + k * V::W, last, V::add(V::load_fill(acc + c0 + k * V::W, last, V::set1(0.f)), sum));
      }
    }
  }
}

template <class V>
void scale_row(float* y, float a, int64_t n) {
  const typename V::reg av = V::set1(a);
  int64_t i = 0;
  for (; i + V::W <= n; i += V::W) V::store(y + i, V::mul(V::load(y + i), av));
  if (i < n) {
    const auto m = V::tail(n - i);
    V::store_mask(y + i, m, V::mul(V::load_fill(y + i, m, V::set1(0.f)), av));
  }
}

}  // namespace
}  // namespace attention
}  // namespace onnxmini
