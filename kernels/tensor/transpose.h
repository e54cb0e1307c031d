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

// Which path a transpose takes (static strings, for KernelStats): variant
// "transpose_copy" (only size-1 axes move), "transpose_simd_16x16" /
// "transpose_simd_8x8" (4-byte elements, register tiles), "transpose_tiled_32x32"
// (scalar tiles), "transpose_axis_offsets" (general strided copy) or
// "transpose_reference"; isa "avx512" / "avx2" / "portable".
struct TransposePath {
  const char* variant = "transpose_reference";
  const char* isa = "portable";
};

// out = transpose(in, perm); `out` is allocated with transposed_shape().
// Fast path unless `reference` is set. Returns the path it took.
TransposePath transpose(const KernelContext& ctx, const Tensor& in, const std::vector<int64_t>& perm, Tensor& out,
                        bool reference);
// The path transpose() takes for elements of `elem_bytes` bytes and this shape (--explain).
TransposePath transpose_path(size_t elem_bytes, const Shape& in_shape, const std::vector<int64_t>& perm,
                             bool reference);

}  // namespace tensor_ops
}  // namespace onnxmini
