// The short-sequence Attention path: for up to kShortMaxKeys keys the score
// matrix of one (batch, query head, block of query rows) is small enough to
// keep whole, so the work is two GEMM calls and one softmax pass per row,
// with no key packing and no online-softmax rescaling (attention_fused.cc
// pays both, which dominates below a few hundred keys).
//
// Data layout and blocking:
//   - a task is (batch b, query head h, block of `rows` query positions);
//     tasks run in parallel, each GEMM runs on the task's thread;
//   - S [rows x n] (float32, row stride n, per-thread scratch) =
//     scale * Q[b, h, i0:i0+rows, :] K[b, g, c0:c1, :]^T with the engine
//     reading Q and K in place (3-D or 4-D layouts are just row strides;
//     trans_b reads K's rows as columns) and [c0, c1) the union of the rows'
//     allowed key ranges (causal / window / nonpad / mask length), n = c1 - c0;
//   - softcap and the mask over the whole block (block-wide SIMD passes),
//     then per row -inf outside its range; then kernels/simd's softmax_rows
//     writes P into a second per-thread buffer (short rows W at a time with
//     shared reductions; a per-row online-softmax step cost 2.5x as much at
//     32 keys); portable: softmax_block per row in place, whose unnormalised
//     exp leaves a 1 / sum to apply to Y;
//   - Y[b, h, i0:i0+rows, :] = P V[b, g, c0:c1, :] written in place by the
//     engine (ldc = Y's position stride).
//   `rows` keeps S around 256 KiB (L2; at least 16 rows) and is halved while
//   there are fewer than 4 tasks per thread. Large blocks matter: the engine
//   packs K^T and V per call, so 32-row blocks at 256 keys repacked them 8
//   times per head (0.96x the unfused graph on AVX2; 1.10x with whole heads).
#include "kernels/attention/attention_short.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "core/logging.h"
#include "core/thread_pool.h"
#include "kernels/attention/attention_lanes.h"
#include "kernels/attention/float_rows.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace attention {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int64_t kScoreFloats = 65536;  // S per task: 256 KiB
constexpr int64_t kMinRows = 8;

std::atomic<int> g_path_override{-1};  // -1: not read from the environment yet

// Per-thread scratch, grown once and reused across runs.
struct ShortScratch {
  std::vector<float> s, p, inv;  // scores, probabilities, per-row 1 / sum (0: fully masked)
  std::vector<int64_t> lo, hi;
};

// n floats of `buf` starting on a 64-byte boundary (grown, never shrunk). With
// a 16-byte aligned start, rows of 40 keys put every AVX2 load of the softmax
// off a 32-byte boundary (measured 15% slower than the unfused Softmax's
// 64-byte aligned arena buffers).
float* aligned_floats(std::vector<float>& buf, int64_t n) {
  if (static_cast<int64_t>(buf.size()) < n + 16) buf.resize(n + 16);
  const uintptr_t a = (reinterpret_cast<uintptr_t>(buf.data()) + 63) & ~uintptr_t{63};
  return reinterpret_cast<float*>(a);
}

int64_t rows_per_task(const AttentionPlan& p, int64_t threads) {
  int64_t rows = std::max<int64_t>(kScoreFloats / std::max<int64_t>(1, p.total_len), 16);
  rows = std::min(rows, p.q_len);
  const int64_t heads = p.batch * p.q_heads;
  while (rows > kMinRows && heads * ((p.q_len + rows - 1) / rows) < 4 * threads) rows = (rows + 1) / 2;
  return std::max<int64_t>(1, rows);
}

}  // namespace

void set_attention_path_for_tests(AttentionPath path) { g_path_override.store(static_cast<int>(path)); }
AttentionPath attention_path_override() {
  int v = g_path_override.load(std::memory_order_relaxed);
  if (v < 0) {
    AttentionPath parsed = AttentionPath::Auto;
    if (const char* e = std::getenv("ONNXMINI_ATTENTION_PATH"); e && *e) {
      const std::string s = e;
      if (s == "flash") parsed = AttentionPath::Flash;
      else if (s == "short") parsed = AttentionPath::Short;
      else
        ONNXMINI_LOG(default_logger(), Warning, "ONNXMINI_ATTENTION_PATH={} is not one of flash, short; using the rule", s);
    }
    v = static_cast<int>(parsed);
    g_path_override.store(v, std::memory_order_relaxed);
  }
  return static_cast<AttentionPath>(v);
}

bool attention_short_supported(const AttentionPlan& p, const AttentionIo& io) {
  return io.qk_type == DType::Float32 && io.v_type == DType::Float32 && p.past_len == 0 && !p.want_qk;
}

bool attention_short_chosen(const AttentionPlan& p, const AttentionIo& io) {
  if (!attention_short_supported(p, io)) return false;
  switch (attention_path_override()) {
    case AttentionPath::Flash: return false;
    case AttentionPath::Short: return true;
    default: return p.total_len <= kShortMaxKeys;
  }
}

const char* run_attention_short(const AttentionPlan& p, const AttentionIo& io, const gemm::GemmEngine& engine,
                                ThreadPool* pool) {
  const AttentionLanes& lanes = attention_lanes_for(attention_isa());
  const int64_t D = p.head_size, Dv = p.v_head_size, G = p.group();
  const float* q = static_cast<const float*>(io.q);
  const float* k = static_cast<const float*>(io.k);
  const float* v = static_cast<const float*>(io.v);
  float* y = static_cast<float*>(io.y);

  // The mask as float32 rows (bool: 0 / -inf), converted once per run when
  // not float32; kept per calling thread so that warm runs do not allocate.
  thread_local std::vector<float> mask_tls;
  std::vector<float>& mask_f = mask_tls;  // the caller's instance, not the workers'
  const float* mask_bias = mask_as_float_bias(p.mask, mask_f, lanes);

  const int64_t threads = pool ? pool->num_threads() : 1;
  const int64_t rows = rows_per_task(p, threads);
  const int64_t row_blocks = (p.q_len + rows - 1) / rows;
  const float inv_cap = p.softcap > 0 ? 1.f / p.softcap : 0.f;
  // The vectorised row softmax of kernels/simd at the attention ISA (null at portable).
  const simd::F32Kernels& f32 = simd::f32_kernels_for(lanes.isa);
  const simd::SoftmaxRowsFn softmax_rows =
      f32.softmax_rows && p.total_len <= f32.softmax_max_len ? f32.softmax_rows : nullptr;
  const simd::BinaryRowsFn add_rows = f32.binary[simd::kAdd];

  parallel_for(pool, p.batch * p.q_heads * row_blocks, 1, [&](int64_t t0, int64_t t1) {
    thread_local ShortScratch tls;  // one TLS lookup per chunk
    ShortScratch& sc = tls;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t rb = t % row_blocks, bh = t / row_blocks, b = bh / p.q_heads, h = bh % p.q_heads, g = h / G;
      const int64_t i0 = rb * rows, ni = std::min(rows, p.q_len - i0);
      if (static_cast<int64_t>(sc.lo.size()) < ni) sc.lo.resize(ni), sc.hi.resize(ni), sc.inv.resize(ni);
      // The columns any row of the block may attend.
      int64_t c0 = p.total_len, c1 = 0;
      for (int64_t r = 0; r < ni; ++r) {
        p.key_range(b, i0 + r, sc.lo[r], sc.hi[r]);
        if (sc.hi[r] > sc.lo[r]) c0 = std::min(c0, sc.lo[r]), c1 = std::max(c1, sc.hi[r]);
      }
      float* y0 = y + p.y.row(b, h, i0);
      const int64_t y_stride = p.y.seq_stride();
      if (c1 <= c0) {  // every row fully masked
        for (int64_t r = 0; r < ni; ++r) std::fill(y0 + r * y_stride, y0 + r * y_stride + Dv, 0.f);
        continue;
      }
      const int64_t n = c1 - c0;
      float* s = aligned_floats(sc.s, ni * n);

      gemm::SgemmArgs qk;
      qk.trans_b = true;
      qk.M = ni, qk.N = n, qk.K = D;
      qk.alpha = p.scale;
      qk.A = q + p.q.row(b, h, i0), qk.lda = p.q.seq_stride();
      qk.B = k + p.k.row(b, g, c0), qk.ldb = p.k.seq_stride();
      qk.C = s, qk.ldc = n;
      engine.sgemm(qk, nullptr);

      // Block-wide passes over the dense S (no per-row call overhead):
      // softcap, then the mask rows (broadcast rows repeat: stride mask_i = 0)
      // over [c0, c1), which lies inside the mask since key_range caps hi at its length.
      if (p.softcap > 0) {
        lanes.scale_row(s, inv_cap, ni * n);
        lanes.tanh_row(s, s, ni * n);
        lanes.scale_row(s, p.softcap, ni * n);
      }
      const float* mask0 = mask_bias ? mask_bias + p.mask_row(b, h, i0) + c0 : nullptr;
      if (mask0 && add_rows) {
        add_rows(simd::BinaryRows{s, n, true, mask0, p.mask_i, true, s, n}, 0, ni);
      } else if (mask0) {
        for (int64_t r = 0; r < ni; ++r)
          for (int64_t j = 0; j < n; ++j) s[r * n + j] += mask0[r * p.mask_i + j];
      }
      for (int64_t r = 0; r < ni; ++r) {
        float* sr = s + r * n;
        // Outside the row's [lo, hi): -inf. A row is live when some allowed key
        // has a mask value above -inf (the flash kernel's rule).
        const int64_t lo = std::max(sc.lo[r], c0) - c0, hi = std::max(lo, std::min(sc.hi[r], c1) - c0);
        std::fill(sr, sr + lo, kNegInf);
        std::fill(sr + hi, sr + n, kNegInf);
        bool live = hi > lo;
        if (live && mask0) {
          const float* mrow = mask0 + r * p.mask_i;
          live = std::any_of(mrow + lo, mrow + hi, [](float x) { return x != kNegInf; });
        }
        sc.inv[r] = live ? 1.f : 0.f;  // 0 marks a fully masked row
        if (live && !softmax_rows) {
          // No SIMD row softmax (portable): unnormalised exp, Y scaled by 1 / sum below.
          float m = kNegInf, l = 0.f;
          lanes.softmax_block(sr, n, &m, &l, nullptr, 0);
          sc.inv[r] = l > 0.f ? 1.f / l : 0.f;
        }
      }
      // The SIMD softmax normalises whole blocks of rows at once (W short rows
      // share their reductions); fully masked rows come out NaN and are cleared.
      // Out of place: in place, a row's masked tail store and the next row's
      // first load share a cache line and the load stalls on store forwarding
      // (2.4x the softmax time at 40 keys).
      float* prob = s;
      if (softmax_rows) {
        prob = aligned_floats(sc.p, ni * n);
        softmax_rows(s, ni, n, prob);
      }
      for (int64_t r = 0; r < ni; ++r)
        if (sc.inv[r] == 0.f) std::fill(prob + r * n, prob + (r + 1) * n, 0.f);  // P = 0: Y's row comes out 0

      gemm::SgemmArgs pv;
      pv.M = ni, pv.N = Dv, pv.K = n;
      pv.A = prob, pv.lda = n;
      pv.B = v + p.v.row(b, g, c0), pv.ldb = p.v.seq_stride();
      pv.C = y0, pv.ldc = y_stride;
      engine.sgemm(pv, nullptr);
      for (int64_t r = 0; r < ni; ++r) {
        float* yr = y0 + r * y_stride;
        if (sc.inv[r] == 0.f) std::fill(yr, yr + Dv, 0.f);  // fully masked (also clears 0 * inf)
        else if (!softmax_rows) lanes.scale_row(yr, sc.inv[r], Dv);
      }
    }
  });
  return "attention_short";
}

}  // namespace attention
}  // namespace onnxmini
