// Running einsum plans on data, and the plain reference einsum.
#pragma once
#include <functional>
#include <vector>

#include "kernels/einsum/einsum_plan.h"
#include "onnxmini/tensor.h"

namespace onnxmini {
class ThreadPool;
namespace gemm {
class GemmEngine;
}

namespace einsum_impl {

using ScratchAllocator = std::function<Tensor(DType, const Shape&)>;

// Runs `plan` on `operands` (dense tensors of plan.input_shapes, one dtype) into
// `output` (allocated by the caller with plan.output_shape and that dtype).
// float32 / float64 use the GEMM engine; int32 / int64 run every step as loops.
void execute_plan(const Plan& plan, const std::vector<const Tensor*>& operands, Tensor& output,
                  const ScratchAllocator& scratch, ThreadPool* pool, const gemm::GemmEngine& engine);

// The definition, loop by loop: for every combination of letter values,
// output[out letters] += product of operands[their letters]. Floating types
// accumulate in double. The oracle for tests and the kernel's reference mode.
void reference_einsum(const EinsumSpec& spec, const std::vector<const Tensor*>& operands, Tensor& output);

bool einsum_dtype_supported(DType t);

}  // namespace einsum_impl
}  // namespace onnxmini
