// Inner loops of the fused Attention kernel (attention.cc), one table per ISA
// (portable, AVX2, AVX-512) chosen at run time. attention_lanes_avx2.cc /
// attention_lanes_avx512.cc execute those instructions, so callers go through
// attention_lanes_for(), which never picks a level above the hardware's.
//
// Data layout the routines assume (all float32):
//   - a packed key block: kKeyBlock keys transposed, kt[d * kKeyBlock + j] =
//     key j, feature d (zero-padded past the last key), so one query feature
//     broadcast against a contiguous vector of keys gives kKeyBlock scores;
//   - query rows: dense rows of `d` floats, already multiplied by the scale;
//   - value rows: `dv` floats, consecutive keys `v_stride` floats apart.
#pragma once
#include <cstdint>

#include "core/cpu_features.h"

namespace onnxmini {
namespace attention {

// Keys per packed block (a multiple of every ISA's lane count: 2 zmm, 4 ymm).
constexpr int64_t kKeyBlock = 32;

struct AttentionLanes {
  cpu::Isa isa;
  // s[r * kKeyBlock + j] = sum_d q[r * d_len + d] * kt[d * kKeyBlock + j] for r < rows.
  void (*block_scores)(const float* q, int64_t rows, int64_t d_len, const float* kt, float* s);
  // acc[c] += sum_{j < n} p[j] * v[j * v_stride + c] for c < dv.
  void (*accumulate_pv)(const float* p, int64_t n, const float* v, int64_t v_stride, int64_t dv, float* acc);
  // y[c] *= a for c < n.
  void (*scale_row)(float* y, float a, int64_t n);
  // y[j] = exp(x[j]) for j < n (exp(-inf) = 0); x and y may alias.
  void (*exp_row)(const float* x, float* y, int64_t n);
  // y[j] = tanh(x[j]).
  void (*tanh_row)(const float* x, float* y, int64_t n);
  // IEEE half <-> float32 rows (F16C on the SIMD levels).
  void (*half_to_float)(const uint16_t* x, float* y, int64_t n);
  void (*float_to_half)(const float* x, uint16_t* y, int64_t n);
};

const AttentionLanes& attention_lanes_portable();
const AttentionLanes& attention_lanes_avx2();
const AttentionLanes& attention_lanes_avx512();
// The table for `isa`, capped at what the hardware has.
const AttentionLanes& attention_lanes_for(cpu::Isa isa);

// The ISA the attention kernels use: cpu::active_isa(), or the test override.
cpu::Isa attention_isa();
// Tests: run the fast paths at `isa` (capped by the hardware); pass
// cpu::active_isa() to restore the default.
void set_attention_isa_for_tests(cpu::Isa isa);

}  // namespace attention
}  // namespace onnxmini
