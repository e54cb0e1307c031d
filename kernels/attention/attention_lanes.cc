// Portable attention inner loops and the run-time table choice (attention_lanes.h).
#include "kernels/attention/attention_lanes.h"

#include <atomic>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/float16.h"

namespace onnxmini {
namespace attention {
namespace {

void block_scores_portable(const float* q, int64_t rows, int64_t d_len, const float* kt, float* s) {
  for (int64_t r = 0; r < rows; ++r) {
    float* sr = s + r * kKeyBlock;
    for (int64_t j = 0; j < kKeyBlock; ++j) sr[j] = 0.f;
    const float* qr = q + r * d_len;
    for (int64_t d = 0; d < d_len; ++d) {
      const float qd = qr[d];
      const float* kd = kt + d * kKeyBlock;
      for (int64_t j = 0; j < kKeyBlock; ++j) sr[j] += qd * kd[j];
    }
  }
}

void accumulate_pv_portable(const float* p, int64_t rows, int64_t n, const float* v, int64_t v_stride, int64_t dv,
                            float* acc) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      const float pj = p[r * kKeyBlock + j];
      if (pj == 0.f) continue;
      const float* vj = v + j * v_stride;
      float* ar = acc + r * dv;
      for (int64_t c = 0; c < dv; ++c) ar[c] += pj * vj[c];
    }
}

void softmax_block_portable(float* s, int64_t n, float* m, float* l, float* acc, int64_t dv) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  float mb = neg_inf;
  for (int64_t j = 0; j < n; ++j) mb = std::max(mb, s[j]);
  if (mb == neg_inf) {
    std::fill(s, s + n, 0.f);
    return;
  }
  if (mb > *m) {
    const float corr = *m == neg_inf ? 0.f : std::exp(*m - mb);
    *l *= corr;
    for (int64_t c = 0; c < dv; ++c) acc[c] *= corr;
    *m = mb;
  }
  float sum = 0.f;
  for (int64_t j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - *m));
  *l += sum;
}

void pack_key_block_portable(const float* const* rows, int64_t n, int64_t d_len, float* kt) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t d = 0; d < d_len; ++d) kt[d * kKeyBlock + j] = rows[j][d];
}

void scale_row_portable(float* y, float a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= a;
}
void exp_row_portable(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}
void tanh_row_portable(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}
void half_to_float_portable(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = half_to_float(x[i]);
}
void float_to_half_portable(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = float_to_half(x[i]);
}

std::atomic<int> g_isa_override{-1};

}  // namespace

const AttentionLanes& attention_lanes_portable() {
  static const AttentionLanes k{cpu::Isa::Portable,    block_scores_portable,  softmax_block_portable,
                                accumulate_pv_portable, pack_key_block_portable, scale_row_portable, exp_row_portable,
                                tanh_row_portable,      half_to_float_portable, float_to_half_portable};
  return k;
}

const AttentionLanes& attention_lanes_for(cpu::Isa isa) {
  if (isa == cpu::Isa::Avx512 && cpu::hw_has_avx512()) return attention_lanes_avx512();
  if (isa != cpu::Isa::Portable && cpu::hw_has_avx2_fma()) return attention_lanes_avx2();
  return attention_lanes_portable();
}

cpu::Isa attention_isa() {
  const int o = g_isa_override.load(std::memory_order_relaxed);
  return o < 0 ? cpu::active_isa() : static_cast<cpu::Isa>(o);
}

void set_attention_isa_for_tests(cpu::Isa isa) { g_isa_override.store(static_cast<int>(isa)); }

}  // namespace attention
}  // namespace onnxmini
