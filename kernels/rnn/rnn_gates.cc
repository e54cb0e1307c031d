// The portable gate table (scalar ScalarOps over fast_math.h, which the
// compiler may vectorise with SSE2) and the per-ISA dispatch of rnn_gates.h.
#include "kernels/rnn/rnn_gates.h"

#include "kernels/elementwise/fast_math.h"
#define ONNXMINI_RNN_GATE_ATTR ONNXMINI_NO_TRAPPING_MATH
#include "kernels/rnn/rnn_gates_impl.h"

namespace onnxmini {
namespace rnn {
namespace {

// One lane: the O interface of rnn_gates_impl.h on plain floats.
struct ScalarOps {
  using reg = float;
  using mask = bool;
  static constexpr int W = 1;
  ONNXMINI_FAST_MATH_INLINE static reg set1(float v) { return v; }
  ONNXMINI_FAST_MATH_INLINE static mask tail(int64_t) { return true; }
  ONNXMINI_FAST_MATH_INLINE static reg load_fill(const float* p, mask, reg) { return *p; }
  ONNXMINI_FAST_MATH_INLINE static void store_mask(float* p, mask, reg v) { *p = v; }
  ONNXMINI_FAST_MATH_INLINE static reg add(reg a, reg b) { return a + b; }
  ONNXMINI_FAST_MATH_INLINE static reg sub(reg a, reg b) { return a - b; }
  ONNXMINI_FAST_MATH_INLINE static reg mul(reg a, reg b) { return a * b; }
  ONNXMINI_FAST_MATH_INLINE static reg fmadd(reg a, reg b, reg c) { return a * b + c; }
  ONNXMINI_FAST_MATH_INLINE static reg min(reg a, reg b) { return a < b ? a : b; }
  ONNXMINI_FAST_MATH_INLINE static reg max(reg a, reg b) { return a > b ? a : b; }
  ONNXMINI_FAST_MATH_INLINE static reg sigmoid(reg v) { return ew::fast_sigmoidf(v); }
  ONNXMINI_FAST_MATH_INLINE static reg tanh(reg v) { return ew::fast_tanhf(v); }
};

}  // namespace

const GateKernels& gate_kernels_for(cpu::Isa isa) {
  if (isa == cpu::Isa::Avx512 && cpu::hw_has_avx512()) return gate_kernels_avx512();
  if (isa != cpu::Isa::Portable && cpu::hw_has_avx2_fma()) return gate_kernels_avx2();
  static const GateKernels portable = make_gate_table<ScalarOps>(cpu::Isa::Portable);
  return portable;
}

const GateKernels& gate_kernels() {
  static const GateKernels& k = gate_kernels_for(cpu::active_isa());
  return k;
}

}  // namespace rnn
}  // namespace onnxmini
