// The fast recurrence (GEMMs + fused gate kernels) of every ISA against the
// reference loops, over cells, directions, sequence lengths, layouts, clip,
// peepholes, input_forget, linear_before_reset and hidden sizes that leave
// SIMD tails, with and without threads.
//
// Tolerance (derived, per case, from the data): let e_t be the largest
// difference of the state (h and, for LSTM, c) after step t.
//  * Pre-activations z = W x + R h + Wb + Rb are float sums of K = input +
//    hidden + 2 terms: the rounding is at most gamma_K * Mz (gamma_K = K u /
//    (1 - K u), u = 2^-24, Mz the largest sum of |terms| over gate rows); the
//    state difference enters through R: rho * e_{t-1} (rho = largest row sum
//    of |R|, plus |P| with peepholes).
//  * The fast sigmoid / tanh (fast_math.h polynomials, reciprocal + one Newton
//    step) are within eps_a = 2^-20 of the exact functions (a few ulp of 1;
//    the reference's std::exp / std::tanh are within 1 ulp), with slopes
//    at most 1/4 (sigmoid) and 1 (tanh).
//  * The gate equations combine at most four such terms, each multiplied by a
//    state value of magnitude <= C (C = max(1, largest |c| or |h|)): every
//    step's error is at most L e_{t-1} + delta with
//      kappa = C s_f + 3, L = 1 + rho * kappa, delta = (gamma_K Mz + eps_a) kappa + 4 u C,
//    s_f the slope bound of f (1/4 for sigmoid; 1 for the other activations tested, which
//    run the scalar rows with the reference's own functions),
//    so after T steps e_T <= delta (L^T - 1) / (L - 1), which bounds Y, Y_h and Y_c.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/rnn/rnn_common.h"
#include "kernels/rnn/rnn_gates.h"

namespace onnxmini {
namespace rnn {
namespace {

struct Config {
  Cell cell;
  Direction direction = Direction::Forward;
  int64_t seq = 5, batch = 3, input = 7, hidden = 8;
  bool lens = false, bias = true, h0 = true, peep = false, input_forget = false, lbr = false;
  bool other_acts = false;  // non-default activations (the scalar gate rows), all of slope <= 1
  float clip = 0;           // 0: none
  int layout = 0;
};

struct Data {
  Attrs attrs;
  std::vector<float> x, w, r, b, h0, c0, p;
  std::vector<int32_t> lens;
  Problem problem(std::vector<float>& y, std::vector<float>& yh, std::vector<float>& yc) {
    Problem pr;
    pr.attrs = &attrs;
    pr.x = x.data();
    pr.w = w.data();
    pr.r = r.data();
    pr.b = b.empty() ? nullptr : b.data();
    pr.h0 = h0.empty() ? nullptr : h0.data();
    pr.c0 = c0.empty() ? nullptr : c0.data();
    pr.p = p.empty() ? nullptr : p.data();
    pr.lens = lens.empty() ? nullptr : lens.data();
    pr.y = y.data();
    pr.yh = yh.data();
    pr.yc = attrs.cell == Cell::Lstm ? yc.data() : nullptr;
    return pr;
  }
};

std::vector<float> randn(std::mt19937& rng, int64_t n, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

Data make_data(const Config& c, uint32_t seed, Problem& shape) {
  std::mt19937 rng(seed);
  Data d;
  d.attrs.cell = c.cell;
  d.attrs.direction = c.direction;
  d.attrs.num_dir = c.direction == Direction::Bidirectional ? 2 : 1;
  d.attrs.hidden = c.hidden;
  d.attrs.has_clip = c.clip > 0;
  d.attrs.clip = c.clip;
  d.attrs.input_forget = c.input_forget;
  d.attrs.linear_before_reset = c.lbr;
  d.attrs.layout = c.layout;
  const int64_t nd = d.attrs.num_dir, G = gates_of(c.cell), H = c.hidden;
  for (int64_t k = 0; k < nd; ++k) {
    std::vector<Activation> acts;
    if (!c.other_acts && c.cell == Cell::Lstm) acts = {{ActKind::Sigmoid}, {ActKind::Tanh}, {ActKind::Tanh}};
    if (!c.other_acts && c.cell == Cell::Gru) acts = {{ActKind::Sigmoid}, {ActKind::Tanh}};
    if (!c.other_acts && c.cell == Cell::Rnn) acts = {{ActKind::Tanh}};
    if (c.other_acts && c.cell == Cell::Lstm)
      acts = {{ActKind::HardSigmoid, 0.2f, 0.5f}, {ActKind::Softsign}, {ActKind::Elu, 1.0f}};
    if (c.other_acts && c.cell == Cell::Gru) acts = {{ActKind::HardSigmoid, 0.2f, 0.5f}, {ActKind::LeakyRelu, 0.1f}};
    if (c.other_acts && c.cell == Cell::Rnn) acts = {{ActKind::Relu}};
    d.attrs.acts.insert(d.attrs.acts.end(), acts.begin(), acts.end());
  }
  d.attrs.default_activations = !c.other_acts;
  // R and P small enough that a step is a contraction of the bound (rho * kappa < 1): with
  // rho ~ 0.2 the recurrent terms still move every gate by ~0.1, far above the bound, so a
  // wrong recurrent index or gate shows; larger R makes the worst-case bound meaningless.
  const float ws = 1.0f / std::sqrt(static_cast<float>(c.input)), rs = 0.25f / static_cast<float>(H);
  d.x = randn(rng, c.seq * c.batch * c.input, 1.0f);
  d.w = randn(rng, nd * G * H * c.input, ws);
  d.r = randn(rng, nd * G * H * H, rs);
  if (c.bias) d.b = randn(rng, nd * 2 * G * H, 0.3f);
  if (c.h0) d.h0 = randn(rng, nd * c.batch * H, 0.5f);
  if (c.h0 && c.cell == Cell::Lstm) d.c0 = randn(rng, nd * c.batch * H, 0.5f);
  if (c.peep) d.p = randn(rng, nd * 3 * H, 0.05f);
  if (c.lens) {
    std::uniform_int_distribution<int32_t> len(0, static_cast<int32_t>(c.seq));
    for (int64_t b = 0; b < c.batch; ++b) d.lens.push_back(b == 0 ? static_cast<int32_t>(c.seq) : len(rng));
  }
  shape.seq = c.seq;
  shape.batch = c.batch;
  shape.input = c.input;
  shape.hidden = H;
  return d;
}

// The bound of the header comment for one direction of the problem.
double error_bound(const Config& c, const Data& d, const std::vector<float>& y, const std::vector<float>& yc) {
  const double u = std::ldexp(1.0, -24), eps_a = std::ldexp(1.0, -20);
  const int64_t G = gates_of(c.cell), H = c.hidden, K = c.input + H + 2, nd = d.attrs.num_dir;
  double rho = 0, mz = 0, cmax = 1;
  double xmax = 0, pmax = 0;
  for (float v : d.p) pmax = std::max(pmax, std::fabs(static_cast<double>(v)));
  for (float v : d.x) xmax = std::max(xmax, std::fabs(static_cast<double>(v)));
  for (float v : d.h0) cmax = std::max(cmax, std::fabs(static_cast<double>(v)));
  for (float v : d.c0) cmax = std::max(cmax, std::fabs(static_cast<double>(v)));
  for (float v : yc) cmax = std::max(cmax, std::fabs(static_cast<double>(v)));
  for (float v : y) cmax = std::max(cmax, std::fabs(static_cast<double>(v)));
  for (int64_t row = 0; row < nd * G * H; ++row) {
    double rsum = 0, wsum = 0;
    for (int64_t k = 0; k < H; ++k) rsum += std::fabs(d.r[row * H + k]);
    for (int64_t k = 0; k < c.input; ++k) wsum += std::fabs(d.w[row * c.input + k]);
    rho = std::max(rho, rsum + pmax);
    double bsum = 0;
    if (!d.b.empty()) {
      const int64_t dir = row / (G * H), j = row % (G * H);
      bsum = std::fabs(d.b[dir * 2 * G * H + j]) + std::fabs(d.b[dir * 2 * G * H + G * H + j]);
    }
    mz = std::max(mz, wsum * xmax + rsum * cmax + bsum + pmax * cmax);
  }
  const double slope_f = c.other_acts ? 1.0 : 0.25;  // f's slope: sigmoid 1/4, the others here <= 1
  const double gamma = K * u / (1 - K * u), kappa = cmax * slope_f + 3, L = 1 + rho * kappa;
  const double delta = (gamma * mz + eps_a) * kappa + 4 * u * cmax;
  return delta * (std::pow(L, static_cast<double>(c.seq)) - 1) / (L - 1);
}

std::vector<const GateKernels*> tables() {
  std::vector<const GateKernels*> v{&gate_kernels_for(cpu::Isa::Portable)};
  if (cpu::hw_has_avx2_fma()) v.push_back(&gate_kernels_for(cpu::Isa::Avx2));
  if (cpu::hw_has_avx512()) v.push_back(&gate_kernels_for(cpu::Isa::Avx512));
  return v;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
  return m;
}

void check(const Config& c, uint32_t seed, ThreadPool* pool = nullptr) {
  Problem shape;
  Data d = make_data(c, seed, shape);
  const int64_t nd = d.attrs.num_dir, n_y = c.seq * nd * c.batch * c.hidden, n_state = nd * c.batch * c.hidden;
  std::vector<float> ry(n_y, -7.0f), ryh(n_state), ryc(n_state);
  Problem ref = d.problem(ry, ryh, ryc);
  ref.seq = shape.seq, ref.batch = shape.batch, ref.input = shape.input, ref.hidden = shape.hidden;
  rnn_reference(ref);
  const double bound = error_bound(c, d, ry, ryc);
  ASSERT_LT(bound, 1e-2) << "the bound is too loose to test anything";
  const gemm::GemmEngine& engine = gemm::engine(GemmBackend::Builtin);
  const int64_t G = gates_of(c.cell);
  const Tensor w = Tensor::wrap(DType::Float32, {nd, G * c.hidden, c.input}, d.w.data()),
               r = Tensor::wrap(DType::Float32, {nd, G * c.hidden, c.hidden}, d.r.data());
  const auto packed = pack_weights(engine, d.attrs, w, r);
  ASSERT_TRUE(packed);
  for (const GateKernels* k : tables())
    for (const PackedWeights* pw : {static_cast<const PackedWeights*>(nullptr), packed.get()}) {
      std::vector<float> y(n_y, -7.0f), yh(n_state, -7.0f), yc(n_state, -7.0f);
      Problem fast = d.problem(y, yh, yc);
      fast.seq = shape.seq, fast.batch = shape.batch, fast.input = shape.input, fast.hidden = shape.hidden;
      std::vector<float> ws(fast_workspace_floats(fast), std::nanf(""));
      rnn_fast(fast, *k, engine, pool, ws.data(), pw);
      const std::string what =
          std::string(cell_name(c.cell)) + " isa " + cpu::isa_name(k->isa) + (pw ? " prepacked" : "");
      EXPECT_LE(max_diff(y, ry), bound) << what << " Y";
      EXPECT_LE(max_diff(yh, ryh), bound) << what << " Y_h";
      if (c.cell == Cell::Lstm) {
        EXPECT_LE(max_diff(yc, ryc), bound) << what << " Y_c";
      }
    }
}

TEST(RnnFast, MatchesReferenceEveryCellDirectionAndIsa) {
  uint32_t seed = 1;
  for (Cell cell : {Cell::Lstm, Cell::Gru, Cell::Rnn})
    for (Direction dir : {Direction::Forward, Direction::Reverse, Direction::Bidirectional})
      for (bool lens : {false, true}) {
        Config c{cell};
        c.direction = dir;
        c.lens = lens;
        check(c, seed++);
      }
}

TEST(RnnFast, HiddenSizesWithSimdTailsAndLayout1) {
  uint32_t seed = 100;
  for (Cell cell : {Cell::Lstm, Cell::Gru, Cell::Rnn})
    for (int64_t hidden : {1, 5, 16, 23, 40})
      for (int layout : {0, 1}) {
        Config c{cell};
        c.hidden = hidden;
        c.layout = layout;
        c.direction = Direction::Bidirectional;
        c.lens = true;
        c.batch = 4;
        check(c, seed++);
      }
}

TEST(RnnFast, OtherActivationsUseTheScalarRows) {
  uint32_t seed = 500;
  for (Cell cell : {Cell::Lstm, Cell::Gru, Cell::Rnn})
    for (bool lbr : {false, true}) {
      Config c{cell};
      c.other_acts = true;
      c.seq = 4;
      c.lbr = lbr;
      c.peep = cell == Cell::Lstm;
      c.clip = lbr ? 0.8f : 0.0f;
      c.direction = Direction::Bidirectional;
      c.lens = true;
      check(c, seed++);
    }
}

TEST(RnnFast, LstmOptions) {
  uint32_t seed = 200;
  for (bool peep : {false, true})
    for (bool forget : {false, true})
      for (float clip : {0.0f, 0.6f}) {
        Config c{Cell::Lstm};
        c.peep = peep;
        c.input_forget = forget;
        c.clip = clip;
        c.direction = Direction::Bidirectional;
        c.lens = true;
        check(c, seed++);
      }
}

TEST(RnnFast, GruLinearBeforeResetAndClip) {
  uint32_t seed = 300;
  for (bool lbr : {false, true})
    for (float clip : {0.0f, 0.5f})
      for (bool bias : {false, true}) {
        Config c{Cell::Gru};
        c.lbr = lbr;
        c.clip = clip;
        c.bias = bias;
        c.h0 = !bias;
        c.lens = true;
        c.direction = Direction::Bidirectional;
        check(c, seed++);
      }
}

// Batch slices per thread (uneven with 3 threads), directions side by side, and a
// single task whose GEMMs get the pool.
TEST(RnnFast, ThreadedDirectionsAndBatch) {
  uint32_t seed = 400;
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    for (Cell cell : {Cell::Lstm, Cell::Gru, Cell::Rnn})
      for (Direction dir : {Direction::Forward, Direction::Bidirectional})
        for (int64_t batch : {1, 13, 33}) {
          Config c{cell};
          c.direction = dir;
          c.batch = batch;
          c.hidden = 64;
          c.lens = true;
          check(c, seed++, &pool);
        }
  }
}

// One batch task on several threads: each step split by hidden unit (recur_sliced: slices of
// 16-unit multiples, uneven and empty ones with 3 threads), LSTM with peepholes, input_forget
// and clip, RNN, other activations, sequence lengths, reverse. The cost rule is off so that
// small problems split too. Against the reference, and bit for bit against one thread (each
// column of the step's product is summed in the same order whatever the slice).
TEST(RnnFast, OneTaskSplitByUnitMatchesOneThread) {
  uint32_t seed = 700;
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    pool.set_cost_rule(false);
    for (Cell cell : {Cell::Lstm, Cell::Rnn})
      for (int64_t hidden : {5, 40, 64, 100})
        for (int64_t batch : {1, 3}) {
          Config c{cell};
          c.direction = hidden == 40 ? Direction::Reverse : Direction::Forward;
          c.seq = 3;  // the error bound grows as L^seq: at 5 steps it passes 1e-2 for H = 100
          c.batch = batch;
          c.hidden = hidden;
          c.lens = batch > 1;
          c.peep = cell == Cell::Lstm && hidden != 64;
          c.input_forget = cell == Cell::Lstm && hidden == 100;
          c.clip = hidden == 64 ? 0.7f : 0.0f;
          c.other_acts = hidden == 5;
          const uint32_t s = seed++;
          SCOPED_TRACE(std::string(cell_name(cell)) + " H " + std::to_string(hidden) + " batch " + std::to_string(batch));
          check(c, s, &pool);
          Problem shape;
          Data d = make_data(c, s, shape);
          const int64_t G = gates_of(cell), n_y = c.seq * batch * hidden, n_state = batch * hidden;
          const gemm::GemmEngine& engine = gemm::engine(GemmBackend::Builtin);
          const auto packed =
              pack_weights(engine, d.attrs, Tensor::wrap(DType::Float32, {1, G * hidden, c.input}, d.w.data()),
                           Tensor::wrap(DType::Float32, {1, G * hidden, hidden}, d.r.data()));
          ASSERT_TRUE(packed);
          std::vector<float> y[2], yh[2], yc[2];
          for (int run = 0; run < 2; ++run) {
            y[run].assign(n_y, -7.0f), yh[run].assign(n_state, -7.0f), yc[run].assign(n_state, -7.0f);
            Problem fast = d.problem(y[run], yh[run], yc[run]);
            fast.seq = shape.seq, fast.batch = shape.batch, fast.input = shape.input, fast.hidden = shape.hidden;
            std::vector<float> ws(fast_workspace_floats(fast), std::nanf(""));
            rnn_fast(fast, gate_kernels(), engine, run == 0 ? nullptr : &pool, ws.data(), packed.get());
          }
          const std::string what = std::string(cell_name(cell)) + " H " + std::to_string(hidden) + " batch " +
                                   std::to_string(batch) + " threads " + std::to_string(threads);
          EXPECT_EQ(y[0], y[1]) << what << " Y";
          EXPECT_EQ(yh[0], yh[1]) << what << " Y_h";
          EXPECT_EQ(yc[0], yc[1]) << what << " Y_c";
        }
  }
}

}  // namespace
}  // namespace rnn
}  // namespace onnxmini
