// The fused gate math of one recurrence step for one batch row, default
// activations (f = Sigmoid, g = h = Tanh), one table per ISA like
// kernels/simd/: rnn_gates_avx512.cc and rnn_gates_avx2.cc instantiate
// rnn_gates_impl.h; rnn_gates.cc holds the portable (scalar) table and the
// dispatch. Sigmoid and tanh are fast_math.h's approximations (vectorised in
// f32_kernels_impl.h), a few ulp from the exact functions.
//
// Data layout: per row, `xp` is the input projection X_t W^T plus every bias
// that can be folded before the step (G*H floats, ONNX gate order), `rg` the
// recurrent GEMM result h_{t-1} R^T (G*H floats). Each function makes one pass
// over the H units, W lanes at a time with a masked tail: add, clip, activate,
// update the state in place, write the output row.
#pragma once
#include <cstdint>

#include "core/cpu_features.h"

namespace onnxmini {
namespace rnn {

// clip: the bound on every activation input (+inf when the node has none).
struct LstmRow {
  const float* xp;    // [4H] i o f c
  const float* rg;    // [4H]
  const float* peep;  // [3H] P_i P_o P_f, or null
  float* c;           // [H] c_{t-1} in, c_t out
  float* h;           // [H] h_t out
  float* y;           // [H] copy of h_t, or null
  int64_t H;
  float clip;
  bool input_forget;  // f = 1 - i
};

struct GruRow {
  const float* xp;   // [3H] z r h; the h part holds Wb_h (+ Rb_h when linear_before_reset = 0)
  float* rg;         // [3H] h_{t-1} R^T; reset_gate() overwrites the z part with z
  const float* rbh;  // [H] Rb_h (linear_before_reset = 1), or null
  float* h;          // [H] h_{t-1} in, h_t out
  float* y;          // [H] or null
  float* rh;         // [H] reset_gate() writes r (.) h_{t-1} here
  int64_t H;
  float clip;
};

struct RnnRow {
  const float* xp;  // [H]
  const float* rg;  // [H]
  float* h;         // [H] out
  float* y;         // [H] or null
  int64_t H;
  float clip;
};

struct GateKernels {
  cpu::Isa isa;
  void (*lstm)(const LstmRow&);
  // GRU with linear_before_reset = 1: everything in one pass (rg's h part is h_{t-1} R_h^T).
  void (*gru_linear)(const GruRow&);
  // GRU with linear_before_reset = 0, around a second GEMM: reset_gate computes z
  // (into rg's z part) and r (.) h_{t-1}; the caller then sets rg's h part to
  // (r (.) h_{t-1}) R_h^T; update finishes h_t.
  void (*gru_reset_gate)(const GruRow&);
  void (*gru_update)(const GruRow&);
  void (*rnn)(const RnnRow&);
};

// The table for `isa` (never above what the hardware has); tests run every level.
const GateKernels& gate_kernels_for(cpu::Isa isa);
// The table for cpu::active_isa().
const GateKernels& gate_kernels();

const GateKernels& gate_kernels_avx512();
const GateKernels& gate_kernels_avx2();

}  // namespace rnn
}  // namespace onnxmini
