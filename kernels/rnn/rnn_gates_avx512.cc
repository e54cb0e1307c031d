// Avx512 instance of the recurrent gate kernels (rnn_gates_impl.h) over
// kernels/simd's V512 with f32_kernels_impl.h's vector sigmoid and tanh.
#include <immintrin.h>

// GCC 12 reports false -W(maybe-)uninitialized inside its own intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "kernels/rnn/rnn_gates_impl.h"
#include "kernels/simd/f32_kernels_impl.h"
#include "kernels/simd/vec_avx512.h"

namespace onnxmini {
namespace rnn {
namespace {

struct Ops : simd::V512 {
  static reg sigmoid(reg v) { return simd::sigmoid_reg<simd::V512>(v); }
  static reg tanh(reg v) { return simd::tanh_reg<simd::V512>(v); }
};

}  // namespace

const GateKernels& gate_kernels_avx512() {
  static const GateKernels k = make_gate_table<Ops>(cpu::Isa::Avx512);
  return k;
}

}  // namespace rnn
}  // namespace onnxmini
