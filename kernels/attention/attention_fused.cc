// The fused Attention kernel: softmax(Q K^T * scale + bias) V without the
// full score matrix (flash-attention style), float32 math for every storage
// type.
//
// Data layout and blocking:
//   1. Keys are packed once per run, per (batch, kv head), into blocks of
//      kKeyBlock keys transposed ([d][kKeyBlock], float32, zero tail), read
//      from past_key then K in any layout / float type. Values are read in
//      place when float32 without a past cache, else converted once to
//      float32 [B, kv_heads, Ltot, Dv].
//   2. A task is (batch, kv head, block of query positions): its rows are
//      every query head of the kv head's group (GQA) at those positions, so
//      one packed key block feeds group * positions rows. Tasks run in
//      parallel (batch x kv heads x query blocks).
//   3. Per key block: scores of all rows (AttentionLanes::block_scores), then
//      per row softcap, bias and the online softmax update (softmax_block:
//      running max m and sum l; the output accumulator is rescaled by
//      exp(m_old - m_new) when the max grows), then acc += P . V for all rows
//      together (accumulate_pv, 4 rows per value load). Key blocks no row of
//      the task may attend (causal, window, nonpad) are skipped.
//   4. Only when qk_matmul_output is requested does a task keep its rows'
//      full score rows (rows x Ltot floats), which that output needs anyway.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/attention/attention_lanes.h"
#include "kernels/attention/attention_plan.h"
#include "kernels/attention/float_rows.h"

namespace onnxmini {
namespace attention {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Query rows a task aims for (all heads of a group together): enough to reuse
// each packed key block from L1 many times, small enough for many tasks.
constexpr int64_t kRowsPerTask = 48;  // whole tiles: 8 x 6 / 16 x 3 score rows, 12 x 4 / 24 x 2 P.V rows

// Per-thread scratch, grown once and reused across runs.
struct TaskScratch {
  std::vector<float> q, s, acc, m, l, qk;
  std::vector<int64_t> lo, hi, mask_row;  // per row: key range, mask row offset
  std::vector<uint8_t> any;
};

void pack_keys(const AttentionPlan& p, const AttentionIo& io, const AttentionLanes& lanes, ThreadPool* pool,
               int64_t blocks, std::vector<float>& kt) {
  const int64_t D = p.head_size, block_elems = D * kKeyBlock;
  kt.assign(static_cast<size_t>(p.batch * p.kv_heads * blocks * block_elems), 0.f);
  parallel_for(pool, p.batch * p.kv_heads * blocks, 4, [&](int64_t t0, int64_t t1) {
    thread_local std::vector<float> converted;  // rows of a non-float32 block, as float32
    if (io.qk_type != DType::Float32) converted.resize(kKeyBlock * D);
    const float* rows[kKeyBlock];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t kb = t % blocks, bg = t / blocks, b = bg / p.kv_heads, g = bg % p.kv_heads;
      const int64_t j0 = kb * kKeyBlock, n = std::min(kKeyBlock, p.total_len - j0);
      for (int64_t jj = 0; jj < n; ++jj) {
        bool past;
        const int64_t off = key_row(p, b, g, j0 + jj, past);
        const void* src = past ? io.past_k : io.k;
        if (io.qk_type == DType::Float32) {
          rows[jj] = static_cast<const float*>(src) + off;
        } else {
          read_floats(io.qk_type, src, off, D, converted.data() + jj * D, lanes);
          rows[jj] = converted.data() + jj * D;
        }
      }
      lanes.pack_key_block(rows, n, D, kt.data() + t * block_elems);
    }
  });
}

// float32 values [B, kv_heads, Ltot, Dv] (only when V cannot be read in place).
void gather_values(const AttentionPlan& p, const AttentionIo& io, const AttentionLanes& lanes, ThreadPool* pool,
                   std::vector<float>& vf) {
  const int64_t Dv = p.v_head_size;
  vf.resize(static_cast<size_t>(p.batch * p.kv_heads * p.total_len * Dv));
  parallel_for(pool, p.batch * p.kv_heads, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t j = 0; j < p.total_len; ++j) {
        bool past;
        const int64_t off = value_row(p, t / p.kv_heads, t % p.kv_heads, j, past);
        read_floats(io.v_type, past ? io.past_v : io.v, off, Dv, vf.data() + (t * p.total_len + j) * Dv, lanes);
      }
  });
}

}  // namespace

const char* run_attention_fused(const AttentionPlan& p, const AttentionIo& io, ThreadPool* pool) {
  const AttentionLanes& lanes = attention_lanes_for(attention_isa());
  const int64_t D = p.head_size, Dv = p.v_head_size, T = p.total_len, G = p.group();
  const int64_t blocks = (T + kKeyBlock - 1) / kKeyBlock;

  // Run-sized buffers, kept per calling thread so that warm runs do not allocate
  // (a kernel may run concurrently from several threads, never twice on one).
  // Bound to references here: inside the workers' lambdas the thread_local names
  // would denote the workers' own (empty) instances.
  thread_local std::vector<float> kt_tls, vf_tls, mask_tls;
  std::vector<float>& kt = kt_tls;
  std::vector<float>& vf = vf_tls;
  std::vector<float>& mask_f = mask_tls;
  pack_keys(p, io, lanes, pool, blocks, kt);

  // Values: in place (float32 without a past cache), present_value when it
  // holds them as float32 (a decode step), else converted.
  const float* v_base;
  int64_t v_stride;
  const bool v_in_place = io.v_type == DType::Float32 && p.past_len == 0;
  if (v_in_place) {
    v_base = static_cast<const float*>(io.v);
    v_stride = p.v.seq_stride();
  } else if (io.v_type == DType::Float32 && io.present_v) {
    v_base = static_cast<const float*>(io.present_v);
    v_stride = Dv;
  } else {
    gather_values(p, io, lanes, pool, vf);
    v_base = vf.data();
    v_stride = Dv;
  }
  auto value_ptr = [&](int64_t b, int64_t g, int64_t j) {
    return v_in_place ? v_base + p.v.row(b, g, j) : v_base + ((b * p.kv_heads + g) * T + j) * Dv;
  };

  // The mask as a float32 additive bias (bool: 0 / -inf), same shape.
  const float* mask_bias = mask_as_float_bias(p.mask, mask_f, lanes);

  const int64_t positions = std::max<int64_t>(1, kRowsPerTask / G);
  const int64_t q_blocks = (p.q_len + positions - 1) / positions;
  const float inv_cap = p.softcap > 0 ? 1.f / p.softcap : 0.f;

  parallel_for(pool, p.batch * p.kv_heads * q_blocks, 1, [&](int64_t t0, int64_t t1) {
    thread_local TaskScratch tls;  // one TLS lookup per chunk, not per use
    TaskScratch& sc = tls;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t qb = t % q_blocks, bg = t / q_blocks, b = bg / p.kv_heads, g = bg % p.kv_heads;
      const int64_t i0 = qb * positions, ni = std::min(positions, p.q_len - i0), R = G * ni;
      sc.q.resize(R * D);
      sc.s.resize(R * kKeyBlock);
      sc.acc.assign(R * Dv, 0.f);
      sc.m.assign(R, kNegInf);
      sc.l.assign(R, 0.f);
      sc.lo.resize(R);
      sc.hi.resize(R);
      sc.mask_row.resize(R);
      sc.any.assign(R, 0);
      if (p.want_qk) sc.qk.resize(R * T);
      // Row r is query head g * G + r / ni at position i0 + r % ni.
      int64_t task_lo = T, task_hi = 0;
      for (int64_t r = 0; r < R; ++r) {
        const int64_t h = g * G + r / ni, i = i0 + r % ni;
        float* qr = sc.q.data() + r * D;
        read_floats(io.qk_type, io.q, p.q.row(b, h, i), D, qr, lanes);
        for (int64_t d = 0; d < D; ++d) qr[d] *= p.scale;
        p.key_range(b, i, sc.lo[r], sc.hi[r]);
        sc.mask_row[r] = p.mask ? p.mask_row(b, h, i) : 0;
        if (sc.hi[r] > sc.lo[r]) {
          task_lo = std::min(task_lo, sc.lo[r]);
          task_hi = std::max(task_hi, sc.hi[r]);
        }
      }
      // With qk_matmul_output every score is needed (modes 0 / 1 show masked ones too).
      const int64_t kb0 = p.want_qk ? 0 : task_lo / kKeyBlock;
      const int64_t kb1 = p.want_qk ? blocks : (task_hi + kKeyBlock - 1) / kKeyBlock;
      for (int64_t kb = kb0; kb < kb1; ++kb) {
        const int64_t j0 = kb * kKeyBlock, nk = std::min(kKeyBlock, T - j0);
        lanes.block_scores(sc.q.data(), R, D, kt.data() + ((b * p.kv_heads + g) * blocks + kb) * D * kKeyBlock,
                           sc.s.data());
        for (int64_t r = 0; r < R; ++r) {
          float* s = sc.s.data() + r * kKeyBlock;
          float* qk = p.want_qk ? sc.qk.data() + r * T + j0 : nullptr;
          if (qk && p.qk_mode == kQkRaw) std::copy(s, s + nk, qk);
          if (p.softcap > 0) {
            lanes.scale_row(s, inv_cap, nk);
            lanes.tanh_row(s, s, nk);
            lanes.scale_row(s, p.softcap, nk);
          }
          if (qk && p.qk_mode == kQkSoftcapped) std::copy(s, s + nk, qk);
          // Bias: outside [lo, hi) -inf, inside the mask's value.
          const int64_t a = std::max(sc.lo[r], j0), e = std::min(sc.hi[r], j0 + nk);
          for (int64_t j = j0; j < std::min(a, j0 + nk); ++j) s[j - j0] = kNegInf;
          for (int64_t j = std::max(e, j0); j < j0 + nk; ++j) s[j - j0] = kNegInf;
          if (a < e && mask_bias) {
            // A local flag, not a store into sc.any per key: that uint8_t store may alias s
            // and mrow, which kept this loop scalar (1.7x the whole kernel at 128 keys).
            const float* mrow = mask_bias + sc.mask_row[r] + a;
            float* sr = s + (a - j0);
            for (int64_t j = 0; j < e - a; ++j) sr[j] += mrow[j];
            if (!sc.any[r] && std::any_of(mrow, mrow + (e - a), [](float x) { return x != kNegInf; })) sc.any[r] = 1;
          } else if (a < e) {
            sc.any[r] = 1;
          }
          if (qk && p.qk_mode >= kQkBiased) std::copy(s, s + nk, qk);
          // Online softmax: s becomes this block's unnormalised probabilities (0 where masked).
          lanes.softmax_block(s, nk, &sc.m[r], &sc.l[r], sc.acc.data() + r * Dv, Dv);
        }
        lanes.accumulate_pv(sc.s.data(), R, nk, value_ptr(b, g, j0), v_stride, Dv, sc.acc.data());
      }
      // Finish: Y = acc / l (0 for a fully masked row); the mode-3 probabilities.
      for (int64_t r = 0; r < R; ++r) {
        const int64_t h = g * G + r / ni, i = i0 + r % ni;
        float* acc = sc.acc.data() + r * Dv;
        const bool live = sc.any[r] && sc.l[r] > 0.f;
        lanes.scale_row(acc, live ? 1.f / sc.l[r] : 0.f, Dv);
        if (!live) std::fill(acc, acc + Dv, 0.f);  // also clears NaN from 0 * inf
        write_floats(io.qk_type, io.y, p.y.row(b, h, i), Dv, acc, lanes);
        if (!p.want_qk) continue;
        float* qk = sc.qk.data() + r * T;
        if (p.qk_mode == kQkSoftmax) {
          if (live) {
            for (int64_t j = 0; j < T; ++j) qk[j] -= sc.m[r];
            lanes.exp_row(qk, qk, T);
            lanes.scale_row(qk, 1.f / sc.l[r], T);
          } else {
            std::fill(qk, qk + T, 0.f);
          }
        }
        write_floats(io.qk_type, io.qk, ((b * p.q_heads + h) * p.q_len + i) * T, T, qk, lanes);
      }
    }
  });
  return p.want_qk ? "attention_fused_with_scores" : "attention_fused";
}

}  // namespace attention
}  // namespace onnxmini
