// The gate kernels of rnn_gates.h, written once over a vector interface O:
// kernels/simd's V256 / V512 (vec_avx2.h, vec_avx512.h) plus sigmoid / tanh
// (f32_kernels_impl.h's sigmoid_reg / tanh_reg), or the scalar ScalarOps of
// rnn_gates.cc (W = 1, fast_math.h's functions). Needed from O: reg, mask, W,
// set1, load, store, tail(n), load_fill, store_mask, add, sub, mul, fmadd,
// min, max, sigmoid, tanh.
//
// Layout: every row is H contiguous floats per gate; the loop walks the units
// W at a time and finishes with one masked tail, loading each gate's
// pre-activation parts, so a step touches each input and state float once.
// Include only from an ISA file (or rnn_gates.cc): anonymous namespace.
#pragma once
#include <cstdint>
#include <utility>

#include "kernels/elementwise/fast_math.h"
#include "kernels/rnn/rnn_gates.h"

// Attributes of the row functions: the portable file sets ONNXMINI_NO_TRAPPING_MATH (so its
// scalar selects vectorise, fast_math.h); the ISA files leave it empty, since GCC does not
// inline functions across differing optimisation attributes (the intrinsics wrappers).
#ifndef ONNXMINI_RNN_GATE_ATTR
#define ONNXMINI_RNN_GATE_ATTR
#endif

namespace onnxmini {
namespace rnn {
namespace {

// Calls body(j, mask) for j = 0, W, 2W, ... with the tail mask on the last block.
template <class O, class Body>
inline void for_units(int64_t H, Body body) {
  const int64_t full = H - H % O::W;
  int64_t j = 0;
  for (; j < full; j += O::W) body(j, O::tail(O::W));
  if (j < H) body(j, O::tail(H - j));
}

template <class O>
inline typename O::reg clamp(typename O::reg v, typename O::reg lo, typename O::reg hi) {
  return O::min(hi, O::max(lo, v));
}

template <class O>
ONNXMINI_RNN_GATE_ATTR void lstm_row(const LstmRow& a) {
  using R = typename O::reg;
  const int64_t H = a.H;
  const R hi = O::set1(a.clip), lo = O::set1(-a.clip), one = O::set1(1.0f), zero = O::set1(0.0f);
  for_units<O>(H, [&](int64_t j, typename O::mask m) {
    auto pre = [&](int g) {
      return O::add(O::load_fill(a.xp + g * H + j, m, zero), O::load_fill(a.rg + g * H + j, m, zero));
    };
    const R c_prev = O::load_fill(a.c + j, m, zero);
    R zi = pre(0), zo = pre(1), zf = pre(2), zc = pre(3);
    if (a.peep) {
      zi = O::fmadd(O::load_fill(a.peep + j, m, zero), c_prev, zi);
      zf = O::fmadd(O::load_fill(a.peep + 2 * H + j, m, zero), c_prev, zf);
    }
    const R i = O::sigmoid(clamp<O>(zi, lo, hi));
    const R f = a.input_forget ? O::sub(one, i) : O::sigmoid(clamp<O>(zf, lo, hi));
    const R g = O::tanh(clamp<O>(zc, lo, hi));
    const R c = O::fmadd(f, c_prev, O::mul(i, g));
    if (a.peep) zo = O::fmadd(O::load_fill(a.peep + H + j, m, zero), c, zo);
    const R h = O::mul(O::sigmoid(clamp<O>(zo, lo, hi)), O::tanh(c));
    O::store_mask(a.c + j, m, c);
    O::store_mask(a.h + j, m, h);
    if (a.y) O::store_mask(a.y + j, m, h);
  });
}

// h_t = (1 - z) cand + z h_{t-1} = cand + z (h_{t-1} - cand)
template <class O>
inline typename O::reg gru_blend(typename O::reg z, typename O::reg cand, typename O::reg h_prev) {
  return O::fmadd(z, O::sub(h_prev, cand), cand);
}

// The update and reset gates of units j.. (mask m): z = f(xp_z + rg_z), r = f(xp_r + rg_r), clipped.
template <class O>
ONNXMINI_RNN_GATE_ATTR inline std::pair<typename O::reg, typename O::reg> gru_update_and_reset(
    const GruRow& a, int64_t j, typename O::mask m, typename O::reg lo, typename O::reg hi) {
  const typename O::reg zero = O::set1(0.0f);
  auto gate = [&](int64_t off) {
    return O::sigmoid(clamp<O>(O::add(O::load_fill(a.xp + off + j, m, zero), O::load_fill(a.rg + off + j, m, zero)), lo, hi));
  };
  return {gate(0), gate(a.H)};
}

template <class O>
ONNXMINI_RNN_GATE_ATTR void gru_linear_row(const GruRow& a) {
  using R = typename O::reg;
  const int64_t H = a.H;
  const R hi = O::set1(a.clip), lo = O::set1(-a.clip), zero = O::set1(0.0f);
  for_units<O>(H, [&](int64_t j, typename O::mask m) {
    auto ld = [&](const float* p) { return O::load_fill(p + j, m, zero); };
    const auto [z, r] = gru_update_and_reset<O>(a, j, m, lo, hi);
    R lin = ld(a.rg + 2 * H);
    if (a.rbh) lin = O::add(lin, ld(a.rbh));
    const R cand = O::tanh(clamp<O>(O::fmadd(r, lin, ld(a.xp + 2 * H)), lo, hi));
    const R h = gru_blend<O>(z, cand, ld(a.h));
    O::store_mask(a.h + j, m, h);
    if (a.y) O::store_mask(a.y + j, m, h);
  });
}

template <class O>
ONNXMINI_RNN_GATE_ATTR void gru_reset_gate_row(const GruRow& a) {
  using R = typename O::reg;
  const int64_t H = a.H;
  const R hi = O::set1(a.clip), lo = O::set1(-a.clip), zero = O::set1(0.0f);
  for_units<O>(H, [&](int64_t j, typename O::mask m) {
    const auto [z, r] = gru_update_and_reset<O>(a, j, m, lo, hi);
    O::store_mask(a.rg + j, m, z);
    O::store_mask(a.rh + j, m, O::mul(r, O::load_fill(a.h + j, m, zero)));
  });
}

template <class O>
ONNXMINI_RNN_GATE_ATTR void gru_update_row(const GruRow& a) {
  using R = typename O::reg;
  const int64_t H = a.H;
  const R hi = O::set1(a.clip), lo = O::set1(-a.clip), zero = O::set1(0.0f);
  for_units<O>(H, [&](int64_t j, typename O::mask m) {
    auto ld = [&](const float* p) { return O::load_fill(p + j, m, zero); };
    const R cand = O::tanh(clamp<O>(O::add(ld(a.xp + 2 * H), ld(a.rg + 2 * H)), lo, hi));
    const R h = gru_blend<O>(ld(a.rg), cand, ld(a.h));
    O::store_mask(a.h + j, m, h);
    if (a.y) O::store_mask(a.y + j, m, h);
  });
}

template <class O>
ONNXMINI_RNN_GATE_ATTR void rnn_row(const RnnRow& a) {
  using R = typename O::reg;
  const R hi = O::set1(a.clip), lo = O::set1(-a.clip), zero = O::set1(0.0f);
  for_units<O>(a.H, [&](int64_t j, typename O::mask m) {
    const R h = O::tanh(clamp<O>(O::add(O::load_fill(a.xp + j, m, zero), O::load_fill(a.rg + j, m, zero)), lo, hi));
    O::store_mask(a.h + j, m, h);
    if (a.y) O::store_mask(a.y + j, m, h);
  });
}

template <class O>
GateKernels make_gate_table(cpu::Isa isa) {
  GateKernels k{};
  k.isa = isa;
  k.lstm = lstm_row<O>;
  k.gru_linear = gru_linear_row<O>;
  k.gru_reset_gate = gru_reset_gate_row<O>;
  k.gru_update = gru_update_row<O>;
  k.rnn = rnn_row<O>;
  return k;
}

}  // namespace
}  // namespace rnn
}  // namespace onnxmini
