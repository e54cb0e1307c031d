// The SIMD attention inner loops of attention_lanes.h, written once over the
// vector interface V of kernels/simd (V512: 16 lanes, V256: 8 lanes). Include
// only from an ISA file (attention_lanes_avx2.cc / _avx512.cc).
#pragma once
#include <cstdint>

#include <cmath>
#include <limits>

#include "kernels/attention/attention_lanes.h"
#include "kernels/simd/f32_kernels_impl.h"  // simd::exp<V>, simd::hreduce

namespace onnxmini {
namespace attention {
namespace {

// Scores of ROWS query rows against NV vectors of keys of one packed block
// (kt and s point at the first of those keys; both have rows of kKeyBlock
// floats): each key vector loaded feeds ROWS FMAs, each broadcast query
// feature NV.
template <class V, int ROWS, int NV>
inline void score_tile(const float* q, int64_t d_len, const float* kt, float* s) {
  using R = typename V::reg;
  R acc[ROWS][NV];
  for (int i = 0; i < ROWS; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = V::set1(0.f);
  for (int64_t d = 0; d < d_len; ++d) {
    R k[NV];
    for (int v = 0; v < NV; ++v) k[v] = V::load(kt + d * kKeyBlock + v * V::W);
    for (int i = 0; i < ROWS; ++i) {
      const R qi = V::set1(q[i * d_len + d]);
      for (int v = 0; v < NV; ++v) acc[i][v] = V::fmadd(qi, k[v], acc[i][v]);
    }
  }
  for (int i = 0; i < ROWS; ++i)
    for (int v = 0; v < NV; ++v) V::store(s + i * kKeyBlock + v * V::W, acc[i][v]);
}

// Score tiles: 4 key vectors x as many rows as fit beside them (AVX-512: the
// whole block, 6 rows x 4 zmm = 24 of 32 registers; AVX2: half a block at a
// time, 3 rows x 4 ymm = 12 of 16).
template <class V>
constexpr int kScoreRows = V::W == 16 ? 6 : 3;

template <class V, int ROWS>
inline void score_rows(const float* q, int64_t d_len, const float* kt, float* s) {
  for (int64_t k0 = 0; k0 < kKeyBlock; k0 += 4 * V::W) score_tile<V, ROWS, 4>(q, d_len, kt + k0, s + k0);
}

template <class V>
void block_scores(const float* q, int64_t rows, int64_t d_len, const float* kt, float* s) {
  constexpr int RT = kScoreRows<V>;
  int64_t r = 0;
  for (; r + RT <= rows; r += RT) score_rows<V, RT>(q + r * d_len, d_len, kt, s + r * kKeyBlock);
  for (; r + 2 <= rows; r += 2) score_rows<V, 2>(q + r * d_len, d_len, kt, s + r * kKeyBlock);
  for (; r < rows; ++r) score_rows<V, 1>(q + r * d_len, d_len, kt, s + r * kKeyBlock);
}

// One tile of P . V: ROWS rows x NV column vectors of the output stay in
// registers while the keys stream by; each value vector loaded feeds ROWS
// FMAs. kMasked: the (single) column vector is a tail of `last` lanes.
template <class V, int ROWS, int NV, bool kMasked>
inline void pv_tile(const float* p, int64_t n, const float* v, int64_t v_stride, float* acc, int64_t dv,
                    typename V::mask last) {
  using R = typename V::reg;
  const R zero = V::set1(0.f);
  R c[ROWS][NV];
  for (int r = 0; r < ROWS; ++r)
    for (int k = 0; k < NV; ++k)
      c[r][k] = kMasked ? V::load_fill(acc + r * dv, last, zero) : V::load(acc + r * dv + k * V::W);
  for (int64_t j = 0; j < n; ++j) {
    R x[NV];
    for (int k = 0; k < NV; ++k)
      x[k] = kMasked ? V::load_fill(v + j * v_stride, last, zero) : V::load(v + j * v_stride + k * V::W);
    for (int r = 0; r < ROWS; ++r) {
      const R pr = V::set1(p[r * kKeyBlock + j]);
      for (int k = 0; k < NV; ++k) c[r][k] = V::fmadd(pr, x[k], c[r][k]);
    }
  }
  for (int r = 0; r < ROWS; ++r)
    for (int k = 0; k < NV; ++k) {
      if (kMasked) V::store_mask(acc + r * dv, last, c[r][k]);
      else V::store(acc + r * dv + k * V::W, c[r][k]);
    }
}

template <class V, int ROWS>
inline void pv_rows(const float* p, int64_t n, const float* v, int64_t v_stride, int64_t dv, float* acc) {
  int64_t c = 0;
  const typename V::mask all = V::tail(V::W);
  for (; c + 4 * V::W <= dv; c += 4 * V::W) pv_tile<V, ROWS, 4, false>(p, n, v + c, v_stride, acc + c, dv, all);
  for (; c + V::W <= dv; c += V::W) pv_tile<V, ROWS, 1, false>(p, n, v + c, v_stride, acc + c, dv, all);
  if (c < dv) pv_tile<V, ROWS, 1, true>(p, n, v + c, v_stride, acc + c, dv, V::tail(dv - c));
}

// Rows per P . V tile (x 4 column vectors): AVX-512 4 (16 of 32 zmm), AVX2 2
// (8 of 16 ymm), leaving room for the value vectors and the broadcast.
template <class V>
constexpr int kPvRows = V::W == 16 ? 4 : 2;

template <class V>
void accumulate_pv(const float* p, int64_t rows, int64_t n, const float* v, int64_t v_stride, int64_t dv, float* acc) {
  constexpr int RT = kPvRows<V>;
  int64_t r = 0;
  for (; r + RT <= rows; r += RT) pv_rows<V, RT>(p + r * kKeyBlock, n, v, v_stride, dv, acc + r * dv);
  for (; r < rows; ++r) pv_rows<V, 1>(p + r * kKeyBlock, n, v, v_stride, dv, acc + r * dv);
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

struct MaxC {
  template <class V> static typename V::reg apply(typename V::reg a, typename V::reg b) { return V::max(a, b); }
};

// The online-softmax step (AttentionLanes::softmax_block): block max, exp
// and its sum in vectors (tails filled with -inf, whose exp is 0).
template <class V>
void softmax_block(float* s, int64_t n, float* m, float* l, float* acc, int64_t dv) {
  using R = typename V::reg;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const R ninf = V::set1(neg_inf);
  R mx = ninf;
  int64_t j = 0;
  for (; j + V::W <= n; j += V::W) mx = V::max(mx, V::load(s + j));
  if (j < n) mx = V::max(mx, V::load_fill(s + j, V::tail(n - j), ninf));
  const float mb = simd::hreduce<V, MaxC>(mx);
  if (mb == neg_inf) {
    for (j = 0; j < n; ++j) s[j] = 0.f;
    return;
  }
  if (mb > *m) {
    const float corr = *m == neg_inf ? 0.f : std::exp(*m - mb);
    *l *= corr;
    scale_row<V>(acc, corr, dv);
    *m = mb;
  }
  const R mv = V::set1(*m);
  R sum = V::set1(0.f);
  for (j = 0; j + V::W <= n; j += V::W) {
    const R p = simd::exp<V, true>(V::sub(V::load(s + j), mv));
    V::store(s + j, p);
    sum = V::add(sum, p);
  }
  if (j < n) {
    const auto t = V::tail(n - j);
    const R p = simd::exp<V, true>(V::sub(V::load_fill(s + j, t, ninf), mv));
    V::store_mask(s + j, t, p);
    sum = V::add(sum, p);
  }
  *l += simd::hreduce<V, simd::AddC>(sum);
}

}  // namespace
}  // namespace attention
}  // namespace onnxmini
