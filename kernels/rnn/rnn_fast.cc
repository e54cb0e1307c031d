// The fast recurrence. Per direction:
//   1. xp = X W^T + folded biases for all seq*batch rows at once: one GEMM
//      [seq*batch, input] x [input, G*H] (bias fused in the GEMM epilogue);
//   2. per step, rg = h_{t-1} R^T for a batch slice ([rows, H] x [H, G*H]),
//      then one fused pass of the gate kernels (rnn_gates.h) per active row,
//      which updates h / c in place and writes the Y row. GRU without
//      linear_before_reset needs (r (.) h_{t-1}) R_h^T, so it runs the z/r part
//      first, a second GEMM for the h gate, then the update.
// The gate pass is the ISA table's SIMD kernels for the default activations
// (f = Sigmoid, g = h = Tanh); other activations use scalar rows here with
// the reference's formulas.
// Rows past their sequence length are skipped: their state stays at the last
// valid step (Y_h / Y_c), their Y rows stay zero.
//
// Threads: the projections are GEMMs threaded by the engine. Batch rows never
// interact, so the recurrence is split into tasks = directions x batch slices
// (about one per thread, slices of >= 4 rows), each running all its steps with
// no synchronisation. A single task (batch-1 streaming) splits each step by
// hidden unit instead (recur_sliced, LSTM and RNN with prepacked R): thread i
// multiplies h_{t-1} by its units' rows of R and runs their gate pass, so its
// share of R stays in its own L2 from step to step and nothing runs serially
// between the product and the next step. GRU (two dependent products per step)
// and per-call R hand the pool to the step's GEMM.
#include <algorithm>
#include <cstring>
#include <limits>

#include "core/checked_math.h"
#include "core/thread_pool.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/rnn/rnn_common.h"
#include "kernels/rnn/rnn_gates.h"

namespace onnxmini {
namespace rnn {

namespace {

// One direction's workspace, carved from the caller's buffer.
struct DirWork {
  float* bias;  // [GH] the biases folded into xp
  float* xp;    // [seq * batch, GH]
  float* rg;    // [batch, GH]
  float* h;     // [batch, H]
  float* c;     // [batch, H]
  float* rh;    // [batch, H] GRU: r (.) h_{t-1}
  // recur_sliced only:
  float* hn;    // [batch, H] h_t while h_{t-1} is still read
  float* xs;    // [batch, GH] each slice's xp rows, [G, U] per row
  float* peep;  // [3H] each slice's peepholes, [3, U] at 3 * u0
};

int64_t per_direction_floats(const Problem& p) {
  const int64_t GH = p.gates() * p.hidden;
  return GH + p.seq * p.batch * GH + 2 * p.batch * GH + 4 * p.batch * p.hidden + 3 * p.hidden;
}

DirWork carve(const Problem& p, float* ws) {
  const int64_t GH = p.gates() * p.hidden, H = p.hidden;
  DirWork w;
  w.bias = ws;
  w.xp = w.bias + GH;
  w.rg = w.xp + p.seq * p.batch * GH;
  w.h = w.rg + p.batch * GH;
  w.c = w.h + p.batch * H;
  w.rh = w.c + p.batch * H;
  w.hn = w.rh + p.batch * H;
  w.xs = w.hn + p.batch * H;
  w.peep = w.xs + p.batch * GH;
  return w;
}

// C[M, N] (row stride ldc) = A[M, K] (row stride lda) x B^T, B stored [N, K] (row stride ldb),
// or prepacked in `packed`.
void gemm_abt(const gemm::GemmEngine& engine, ThreadPool* pool, int64_t M, int64_t N, int64_t K, const float* a,
              int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, const float* bias,
              const gemm::PackedB* packed) {
  gemm::SgemmArgs g;
  g.trans_b = true;
  g.M = M;
  g.N = N;
  g.K = K;
  g.A = a;
  g.lda = lda;
  g.B = b;
  g.ldb = ldb;
  g.C = c;
  g.ldc = ldc;
  g.epilogue.bias = bias;
  if (packed)
    engine.sgemm_packed(g, *packed, pool);
  else
    engine.sgemm(g, pool);
}

// ---- gate math with any activations (act: this direction's f, g[, h]); scalar, std:: math,
// the reference's formulas on the fast path's GEMM results. Same row layout as rnn_gates.h.
float clamp_to(float x, float clip) { return std::min(clip, std::max(-clip, x)); }

void lstm_row_generic(const LstmRow& a, const Activation* act) {
  const int64_t H = a.H;
  for (int64_t j = 0; j < H; ++j) {
    auto pre = [&](int g) { return a.xp[g * H + j] + a.rg[g * H + j]; };
    const float c_prev = a.c[j];
    const float zi = pre(0) + (a.peep ? a.peep[j] * c_prev : 0.0f);
    const float zf = pre(2) + (a.peep ? a.peep[2 * H + j] * c_prev : 0.0f);
    const float i = act[0](clamp_to(zi, a.clip));
    const float f = a.input_forget ? 1.0f - i : act[0](clamp_to(zf, a.clip));
    const float c = f * c_prev + i * act[1](clamp_to(pre(3), a.clip));
    const float zo = pre(1) + (a.peep ? a.peep[H + j] * c : 0.0f);
    const float h = act[0](clamp_to(zo, a.clip)) * act[2](c);
    a.c[j] = c;
    a.h[j] = h;
    if (a.y) a.y[j] = h;
  }
}

void gru_linear_row_generic(const GruRow& a, const Activation* act) {
  const int64_t H = a.H;
  for (int64_t j = 0; j < H; ++j) {
    const float z = act[0](clamp_to(a.xp[j] + a.rg[j], a.clip));
    const float r = act[0](clamp_to(a.xp[H + j] + a.rg[H + j], a.clip));
    const float lin = a.rg[2 * H + j] + (a.rbh ? a.rbh[j] : 0.0f);
    const float cand = act[1](clamp_to(a.xp[2 * H + j] + r * lin, a.clip));
    const float h = (1.0f - z) * cand + z * a.h[j];
    a.h[j] = h;
    if (a.y) a.y[j] = h;
  }
}

void gru_reset_gate_row_generic(const GruRow& a, const Activation* act) {
  const int64_t H = a.H;
  for (int64_t j = 0; j < H; ++j) {
    const float z = act[0](clamp_to(a.xp[j] + a.rg[j], a.clip));
    const float r = act[0](clamp_to(a.xp[H + j] + a.rg[H + j], a.clip));
    a.rg[j] = z;
    a.rh[j] = r * a.h[j];
  }
}

void gru_update_row_generic(const GruRow& a, const Activation* act) {
  const int64_t H = a.H;
  for (int64_t j = 0; j < H; ++j) {
    const float cand = act[1](clamp_to(a.xp[2 * H + j] + a.rg[2 * H + j], a.clip));
    const float h = (1.0f - a.rg[j]) * cand + a.rg[j] * a.h[j];
    a.h[j] = h;
    if (a.y) a.y[j] = h;
  }
}

void rnn_row_generic(const RnnRow& a, const Activation* act) {
  for (int64_t j = 0; j < a.H; ++j) {
    const float h = act[0](clamp_to(a.xp[j] + a.rg[j], a.clip));
    a.h[j] = h;
    if (a.y) a.y[j] = h;
  }
}

// The gate functions of one direction: the ISA table for the default activations, else the
// generic rows above.
struct RowGates {
  const GateKernels& k;
  const Activation* act;  // null: default activations
  void lstm(const LstmRow& r) const { act ? lstm_row_generic(r, act) : k.lstm(r); }
  void gru_linear(const GruRow& r) const { act ? gru_linear_row_generic(r, act) : k.gru_linear(r); }
  void gru_reset_gate(const GruRow& r) const { act ? gru_reset_gate_row_generic(r, act) : k.gru_reset_gate(r); }
  void gru_update(const GruRow& r) const { act ? gru_update_row_generic(r, act) : k.gru_update(r); }
  void rnn(const RnnRow& r) const { act ? rnn_row_generic(r, act) : k.rnn(r); }
};

const gemm::PackedB* packed_of(const PackedWeights* packed,
                               std::vector<std::shared_ptr<gemm::PackedB>> PackedWeights::*which, int d) {
  if (!packed) return nullptr;
  const auto& v = packed->*which;
  return static_cast<size_t>(d) < v.size() ? v[d].get() : nullptr;
}

// Direction d, before its recurrence: the folded biases, the input projection of every
// (time, batch) row (one GEMM, threaded by the engine), the initial state.
void project(const Problem& p, int d, const gemm::GemmEngine& engine, ThreadPool* pool, const DirWork& w,
             const PackedWeights* packed) {
  const Attrs& a = *p.attrs;
  const int64_t H = p.hidden, GH = p.gates() * H, I = p.input, B = p.batch;
  const float* wb = p.b ? p.b + d * 2 * GH : nullptr;
  const float* rb = p.b ? wb + GH : nullptr;
  // Fold Wb + Rb into the projection, except GRU's Rb_h under linear_before_reset (it is scaled by r).
  const bool rb_h_later = a.cell == Cell::Gru && a.linear_before_reset;
  for (int64_t j = 0; j < GH; ++j) w.bias[j] = p.b ? wb[j] + (rb_h_later && j >= 2 * H ? 0.0f : rb[j]) : 0.0f;
  gemm_abt(engine, pool, p.seq * B, GH, I, p.x, I, p.w + d * GH * I, I, w.xp, GH, w.bias,
           packed_of(packed, &PackedWeights::w, d));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t so = p.state_offset(d, b);
    for (int64_t j = 0; j < H; ++j) {
      w.h[b * H + j] = p.h0 ? p.h0[so + j] : 0.0f;
      w.c[b * H + j] = p.c0 ? p.c0[so + j] : 0.0f;
    }
  }
  // Inactive rows' rh feeds the GRU h-gate GEMM (results unused): keep it finite.
  std::fill(w.rh, w.rh + B * H, 0.0f);
}

// The final state of batch rows [b0, b1) of direction d into Y_h / Y_c.
void write_state(const Problem& p, int d, int64_t b0, int64_t b1, const DirWork& w) {
  const int64_t H = p.hidden;
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t so = p.state_offset(d, b);
    if (p.len(b) == 0) {  // no last step: zero, as in the reference
      std::fill(w.h + b * H, w.h + (b + 1) * H, 0.0f);
      std::fill(w.c + b * H, w.c + (b + 1) * H, 0.0f);
    }
    if (p.yh) std::memcpy(p.yh + so, w.h + b * H, H * sizeof(float));
    if (p.yc) std::memcpy(p.yc + so, w.c + b * H, H * sizeof(float));
  }
}

// The whole recurrence of direction d for batch rows [b0, b1): rows never interact, so a
// slice runs start to end on one thread with no synchronisation per step. `pool` goes to
// the GEMMs only (null when slices run in parallel).
void recur(const Problem& p, int d, int64_t b0, int64_t b1, const GateKernels& table, const gemm::GemmEngine& engine,
           ThreadPool* pool, const DirWork& w, const PackedWeights* packed) {
  const Attrs& a = *p.attrs;
  const RowGates k{table, a.default_activations ? nullptr : &a.acts[d * activations_of(a.cell)]};
  const int64_t H = p.hidden, GH = p.gates() * H, M = b1 - b0;
  const float* rd = p.r + d * GH * H;
  const float* rb = p.b ? p.b + d * 2 * GH + GH : nullptr;
  const bool gru = a.cell == Cell::Gru, gru_split = gru && !a.linear_before_reset;
  const float clip = a.has_clip ? a.clip : std::numeric_limits<float>::infinity();
  const float* rbh = gru && a.linear_before_reset && rb ? rb + 2 * H : nullptr;
  const float* peep = p.p ? p.p + d * 3 * H : nullptr;
  const gemm::PackedB* packed_r = packed_of(packed, &PackedWeights::r, d);
  const gemm::PackedB* packed_rh = packed_of(packed, &PackedWeights::rh, d);
  float *h = w.h + b0 * H, *c = w.c + b0 * H, *rg = w.rg + b0 * GH, *rh = w.rh + b0 * H;
  int64_t steps = 0;
  for (int64_t b = b0; b < b1; ++b) steps = std::max(steps, p.len(b));

  // body(i, xp, y) for every slice row i still inside its sequence at step s.
  auto rows = [&](int64_t s, auto&& body) {
    for (int64_t i = 0; i < M; ++i) {
      const int64_t b = b0 + i;
      if (s >= p.len(b)) continue;
      const int64_t t = p.time_of(s, d, b);
      body(i, w.xp + p.x_row(t, b) * GH, p.y ? p.y + p.y_offset(t, d, b) : nullptr);
    }
  };

  for (int64_t s = 0; s < steps; ++s) {
    gemm_abt(engine, pool, M, gru_split ? 2 * H : GH, H, h, H, rd, H, rg, GH, nullptr, packed_r);
    if (a.cell == Cell::Lstm) {
      rows(s, [&](int64_t i, const float* xp, float* y) {
        k.lstm({xp, rg + i * GH, peep, c + i * H, h + i * H, y, H, clip, a.input_forget});
      });
    } else if (a.cell == Cell::Rnn) {
      rows(s, [&](int64_t i, const float* xp, float* y) { k.rnn({xp, rg + i * GH, h + i * H, y, H, clip}); });
    } else if (!gru_split) {
      rows(s, [&](int64_t i, const float* xp, float* y) {
        k.gru_linear({xp, rg + i * GH, rbh, h + i * H, y, nullptr, H, clip});
      });
    } else {
      rows(s, [&](int64_t i, const float* xp, float*) {
        k.gru_reset_gate({xp, rg + i * GH, nullptr, h + i * H, nullptr, rh + i * H, H, clip});
      });
      // Inactive rows' rh is stale; their rg results are never read.
      gemm_abt(engine, pool, M, H, H, rh, H, rd + 2 * H * H, H, rg + 2 * H, GH, nullptr, packed_rh);
      rows(s, [&](int64_t i, const float* xp, float* y) {
        k.gru_update({xp, rg + i * GH, nullptr, h + i * H, y, nullptr, H, clip});
      });
    }
  }
  write_state(p, d, b0, b1, w);
}

// Unit bounds of `count` slices of H: multiples of 16 units (whole AVX-512 vectors in the gate
// pass), the last slice takes the rest (possibly empty for a small H).
std::vector<int64_t> unit_bounds(int64_t H, int count) {
  const int64_t per = (H + count - 1) / count, step = (per + 15) / 16 * 16;
  std::vector<int64_t> u{0};
  for (int i = 1; i < count; ++i) u.push_back(std::min(H, i * step));
  u.push_back(H);
  return u;
}

// Splitting steps by unit pays where the GEMM engine would thread the step's product
// (gemm::sgemm_threads_pay: R of 512 KB or more, or above 1 MFLOP). Below, silero_vad's H = 128
// LSTM (256 KB, one step per run) gained 2% in wall time for twice the CPU time.
bool split_pays(const Problem& p) { return gemm::sgemm_threads_pay(p.batch, p.gates() * p.hidden, p.hidden); }

// Direction d, every batch row, one parallel region per step over the unit slices of `us`
// (LSTM or RNN): slice i computes rg = h_{t-1} R_i^T ([batch, G * U], G gate blocks of its U
// units), gathers its units' xp, runs the gate pass of its units and writes h_t into the other
// h buffer (every slice reads h_{t-1} whole until the region ends). c and Y are written by
// unit, so slices never touch the same floats. Sums are those of recur's GEMM column by
// column: results do not depend on the thread count.
void recur_sliced(const Problem& p, int d, const GateKernels& table, const gemm::GemmEngine& engine, ThreadPool* pool,
                  const DirWork& w, const UnitSlices& us) {
  const Attrs& a = *p.attrs;
  const RowGates k{table, a.default_activations ? nullptr : &a.acts[d * activations_of(a.cell)]};
  const int64_t H = p.hidden, G = p.gates(), GH = G * H, M = p.batch;
  const float clip = a.has_clip ? a.clip : std::numeric_limits<float>::infinity();
  const float* peep = p.p ? p.p + d * 3 * H : nullptr;
  for (int i = 0; peep && i < us.count; ++i) {
    const int64_t u0 = us.u0[i], U = us.u0[i + 1] - u0;
    for (int q = 0; q < 3; ++q) std::memcpy(w.peep + 3 * u0 + q * U, peep + q * H + u0, U * sizeof(float));
  }
  int64_t steps = 0;
  for (int64_t b = 0; b < M; ++b) steps = std::max(steps, p.len(b));
  float *hin = w.h, *hout = w.hn;
  for (int64_t s = 0; s < steps; ++s) {
    // Uncosted: the caller chose this path by the cost rule; a costed call would also weigh a
    // sleeping worker's wake-up and keep every step inline, the worker never woken.
    pool->parallel_for(us.count, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t u0 = us.u0[i], U = us.u0[i + 1] - u0, GU = G * U;
        if (U == 0) continue;
        float *rg = w.rg + M * G * u0, *xs = w.xs + M * G * u0;
        gemm_abt(engine, nullptr, M, GU, H, hin, H, nullptr, H, rg, GU, nullptr, us.r[d * us.count + i].get());
        for (int64_t b = 0; b < M; ++b) {
          float* h = hout + b * H + u0;
          if (s >= p.len(b)) {  // past its sequence: the state stays
            std::memcpy(h, hin + b * H + u0, U * sizeof(float));
            continue;
          }
          const int64_t t = p.time_of(s, d, b);
          const float* xp = w.xp + p.x_row(t, b) * GH + u0;
          float* x = xs + b * GU;
          for (int64_t g = 0; g < G; ++g) std::memcpy(x + g * U, xp + g * H, U * sizeof(float));
          float* y = p.y ? p.y + p.y_offset(t, d, b) + u0 : nullptr;
          if (a.cell == Cell::Lstm)
            k.lstm({x, rg + b * GU, peep ? w.peep + 3 * u0 : nullptr, w.c + b * H + u0, h, y, U, clip, a.input_forget});
          else
            k.rnn({x, rg + b * GU, h, y, U, clip});
        }
      }
    });
    std::swap(hin, hout);
  }
  if (hin != w.h) std::memcpy(w.h, hin, M * H * sizeof(float));
  write_state(p, d, 0, M, w);
}

}  // namespace

std::shared_ptr<const PackedWeights> pack_weights(const gemm::GemmEngine& engine, const Attrs& a, const Tensor& w,
                                                  const Tensor& r) {
  const int64_t G = gates_of(a.cell);
  if (w.dtype() != DType::Float32 || r.dtype() != DType::Float32 || w.rank() != 3 || r.rank() != 3) return nullptr;
  const int64_t H = r.dim(2), I = w.dim(2);
  if (!try_mul(2 * G, H)) return nullptr;  // an empty R with an absurd hidden size: prepare() reports it
  const int64_t GH = G * H;
  if (w.dim(0) != a.num_dir || r.dim(0) != a.num_dir || w.dim(1) != GH || r.dim(1) != GH ||
      (a.hidden > 0 && a.hidden != H))
    return nullptr;
  auto out = std::make_shared<PackedWeights>();
  const bool gru_split = a.cell == Cell::Gru && !a.linear_before_reset;
  for (int d = 0; d < a.num_dir; ++d) {
    const float* wd = w.data<float>() + d * GH * I;
    const float* rd = r.data<float>() + d * GH * H;
    out->w.push_back(engine.pack_b(true, I, GH, wd, I));
    out->r.push_back(engine.pack_b(true, H, gru_split ? 2 * H : GH, rd, H));
    if (gru_split) out->rh.push_back(engine.pack_b(true, H, H, rd + 2 * H * H, H));
  }
  return out;
}

const UnitSlices& PackedWeights::unit_slices(const gemm::GemmEngine& engine, const Attrs& a, const float* r_data,
                                             int64_t H, int count) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : slices_)
    if (s->count == count) return *s;
  auto s = std::make_unique<UnitSlices>();
  s->count = count;
  s->u0 = unit_bounds(H, count);
  const int64_t G = gates_of(a.cell);
  std::vector<float> rows;
  for (int d = 0; d < a.num_dir; ++d)
    for (int i = 0; i < count; ++i) {
      const int64_t u0 = s->u0[i], U = s->u0[i + 1] - u0;
      rows.resize(static_cast<size_t>(G * U * H));
      for (int64_t g = 0; g < G; ++g)
        std::memcpy(rows.data() + g * U * H, r_data + ((d * G + g) * H + u0) * H, U * H * sizeof(float));
      s->r.push_back(U > 0 ? engine.pack_b(true, H, G * U, rows.data(), H) : nullptr);
    }
  slices_.push_back(std::move(s));
  return *slices_.back();
}

int64_t fast_workspace_floats(const Problem& p) { return p.num_dir() * per_direction_floats(p); }

void rnn_fast(const Problem& p, const GateKernels& k, const gemm::GemmEngine& engine, ThreadPool* pool,
              float* workspace, const PackedWeights* packed) {
  if (p.y && (p.lens || p.seq == 0)) std::fill(p.y, p.y + p.seq * p.num_dir() * p.batch * p.hidden, 0.0f);
  const int64_t per_dir = per_direction_floats(p), nd = p.num_dir();
  for (int d = 0; d < nd; ++d) project(p, d, engine, pool, carve(p, workspace + d * per_dir), packed);
  // Tasks: directions x batch slices, about one per thread; a slice keeps >= kMinRows rows
  // so that its recurrent GEMM stays efficient.
  constexpr int64_t kMinRows = 4;
  const int64_t threads = pool ? pool->num_threads() : 1;
  const int64_t slices = std::max<int64_t>(1, std::min((threads + nd - 1) / nd, p.batch / kMinRows));
  const int64_t rows_per = (p.batch + slices - 1) / slices, tasks = nd * slices;
  ThreadPool* inner = tasks == 1 ? pool : nullptr;  // a single task lets the GEMMs use the threads
  if (tasks == 1 && threads > 1 && packed && p.attrs->cell != Cell::Gru && (!pool->cost_rule() || split_pays(p))) {
    const int count = static_cast<int>(std::min<int64_t>(threads, (p.hidden + 15) / 16));
    const UnitSlices& us = packed->unit_slices(engine, *p.attrs, p.r, p.hidden, count);
    for (int d = 0; d < nd; ++d) recur_sliced(p, d, k, engine, pool, carve(p, workspace + d * per_dir), us);
    return;
  }
  parallel_for(pool, tasks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int d = static_cast<int>(t / slices);
      const int64_t b0 = (t % slices) * rows_per, b1 = std::min(p.batch, b0 + rows_per);
      if (b0 < b1) recur(p, d, b0, b1, k, engine, inner, carve(p, workspace + d * per_dir), packed);
    }
  });
}

}  // namespace rnn
}  // namespace onnxmini
