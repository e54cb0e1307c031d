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
//   - value rows: `dv` floats, consecutive keys `v_stride` floats apart;
//   - probabilities and output accumulators: rows of kKeyBlock / dv floats.
#pragma once
#include <cstdint>

#include "core/cpu_features.h"

namespace onnxmini {
namespace attention {

// Keys per packed block (a multiple of every ISA's lane count: 4 zmm, 8 ymm).
// Per block and row the online softmax pays a fixed cost (max, rescale, two
// horizontal reductions), so longer blocks amortise it better; 64 keys of 64
// features are 16 KiB, which stays in L1 next to the value rows.
constexpr int64_t kKeyBlock = 64;

struct AttentionLanes {
  cpu::Isa isa;
  // s[r * kKeyBlock + j] = sum_d q[r * d_len + d] * kt[d * kKeyBlock + j] for r < rows.
  void (*block_scores)(const float* q, int64_t rows, int64_t d_len, const float* kt, float* s);
  // The online-softmax step of one row over one key block: s[0:n] are the
  // row's biased scores (-inf where masked). Raises the running max m (the
  // running sum l and acc[0:dv] are rescaled by exp(m_old - m_new)) and
  // overwrites s with p_j = exp(s_j - m), adding their sum to l. A block with
  // every score -inf leaves m, l, acc alone and sets p = 0.
  void (*softmax_block)(float* s, int64_t n, float* m, float* l, float* acc, int64_t dv);
  // acc[r * dv + c] += sum_{j < n} p[r * kKeyBlock + j] * v[j * v_stride + c]
  // for r < rows, c < dv: P (rows x n) times the block's values (n x dv), 4
  // rows at a time so each value vector loaded feeds 4 FMAs.
  void (*accumulate_pv)(const float* p, int64_t rows, int64_t n, const float* v, int64_t v_stride, int64_t dv,
                        float* acc);
  // kt[d * kKeyBlock + j] = rows[j][d] for j < n (<= kKeyBlock), d < d_len:
  // packs one key block (kt's other columns are left as they are).
  void (*pack_key_block)(const float* const* rows, int64_t n, int64_t d_len, float* kt);
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
