// Avx2 instance of the recurrent gate kernels (rnn_gates_impl.h) over
// kernels/simd's V256 with f32_kernels_impl.h's vector sigmoid and tanh.
#include <immintrin.h>

#include "kernels/rnn/rnn_gates_impl.h"
#include "kernels/simd/f32_kernels_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace onnxmini {
namespace rnn {
namespace {

struct Ops : simd::V256 {
  static reg sigmoid(reg v) { return simd::sigmoid_reg<simd::V256>(v); }
  static reg tanh(reg v) { return simd::tanh_reg<simd::V256>(v); }
};

}  // namespace

const GateKernels& gate_kernels_avx2() {
  static const GateKernels k = make_gate_table<Ops>(cpu::Isa::Avx2);
  return k;
}

}  // namespace rnn
}  // namespace onnxmini
