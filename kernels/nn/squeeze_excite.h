// SqueezeExcite (domain ai.onnxmini; made only by the optimizer's squeeze_excite rule,
// runtime/graph_fusion_se.cc): a squeeze-and-excitation block as one kernel,
//   gate[n, c] = act2(W2 . act1(W1 . mean_hw(X[n]) + B1) + B2)[c]
//   Y[n, c, ..] = X[n, c, ..] * gate[n, c]          (residual = 0)
//   Y[n, c, ..] = X[n, c, ..] * (1 + gate[n, c])    (residual = 1: Add(X, Mul(X, gate)))
// float32, X is N x C x D1 .. Dk (NCHW), W1 is Cm x C (x 1 ..), W2 is C x Cm (x 1 ..).
// The two 1x1 Convs' fused activations (Relu, Clip, Sigmoid, HardSigmoid, HardSwish,
// Swish, PRelu) are applied by gemm::apply_epilogue, as the Conv's GEMV path does.
//
// The arithmetic is exposed here (not only through the node) so that the tests can
// run it with every SIMD table (tests/common/simd_isas.h), not only the active one.
#pragma once
#include <cstdint>
#include <string>

#include "kernels/gemm_engine/fused_activation.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
class ThreadPool;
struct KernelInfo;

namespace nn {

struct SqueezeExciteArgs {
  const float* x;          // N x C x HW
  float* y;                // N x C x HW
  int64_t N, C, HW, Cm;    // Cm: the squeezed channel count (W1's rows)
  const float* w1;         // Cm x C
  const float* b1;         // Cm, or null
  const float* w2;         // C x Cm
  const float* b2;         // C, or null
  gemm::Epilogue act1, act2;  // activation part only (their bias pointers are ignored)
  bool residual = false;
  float* means;            // scratch: N * C floats
  float* hidden;           // scratch: N * Cm floats
  float* gate;             // scratch: N * C floats
};

// Runs the block. `k`: the SIMD table whose reduce_rows / dot_rows / binary entries
// are used, or null (and for the portable table's null entries): plain loops.
// `pool` may be null (one thread).
void squeeze_excite_f32(const SqueezeExciteArgs& a, const simd::F32Kernels* k, ThreadPool* pool);
// The middle of the block alone: gate (N x C) from means (N x C), through hidden. Also the
// blocked NchwcSqueezeExcite's (kernels/nn/nchwc_pool.cc), which computes means and scales
// the blocked X itself. x / y / HW are not read.
void squeeze_excite_gate(const SqueezeExciteArgs& a, const simd::F32Kernels* k);
// One of the op's two fused activations, read from attribute `name` and `name`_params
// (SqueezeExcite and NchwcSqueezeExcite); an unknown one or wrong parameter count fails the node.
gemm::FusedActivation squeeze_excite_activation(const KernelInfo& info, const std::string& name);

}  // namespace nn
}  // namespace onnxmini
