// float16 / bfloat16 through the float32 kernels: the ops listed in
// half_adapter.cc (Conv, MatMul, Gemm, pools, reductions, normalizations,
// Softmax, ...) run a half tensor by widening it to float32 (F16C where the CPU
// has it, kernels/simd/half_rows.h), running the op's float32 kernel and
// rounding each float32 output once to the half type (nearest even). Constant
// half inputs (weights) are widened once when the session is created, so the
// float32 kernel prepacks them as it does float32 weights.
//
// KernelRegistry::add passes every registration through adapt_for_half; a
// registration of an op outside the list comes back unchanged.
#pragma once
#include <string>

#include "kernels/registry.h"

namespace onnxmini {
namespace half {

// True when (domain, op) runs its half inputs through the float32 kernel.
bool computed_in_float32(const std::string& domain, const std::string& op_type);

// `factory` wrapped so half inputs go through the float32 kernel it makes, for
// the ops of computed_in_float32; `factory` itself otherwise.
KernelFactory adapt_for_half(const std::string& domain, const std::string& op_type, KernelFactory factory);

}  // namespace half
}  // namespace onnxmini
