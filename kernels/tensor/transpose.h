// Transpose as a reusable routine (the Transpose kernel and the reductions'
// non-contiguous-axes path both use it). Dtype-agnostic: elements are moved
// by width (strings as objects).
#pragma once
#include <vector>

#include "kernels/kernel.h"

namespace onnxmini {
namespace tensor_ops {

// Output shape for `perm` (validated by the caller).
Shape transposed_shape(const Shape& in, const std::vector<int64_t>& perm);

// out = transpose(in, perm); `out` is allocated with transposed_shape().
// Fast path unless `reference` is set.
void transpose(const KernelContext& ctx, const Tensor& in, const std::vector<int64_t>& perm, Tensor& out,
               bool reference);

}  // namespace tensor_ops
}  // namespace onnxmini
