// Moving one position of an axis in and out of a tensor, for Loop and Scan:
// Scan feeds its body one slice of each scan input per iteration, and both ops
// stack the body's per-iteration outputs along an axis of a node output.
//
// A tensor of shape [d0 .. d(a-1), n, d(a+1) ..] is `outer` rows of n blocks of
// `inner` contiguous elements (outer = d0*..*d(a-1), inner = d(a+1)*..). Position
// i of axis a is block i of every row: a strided copy of `outer` blocks, or a
// view with no copy when outer is 1 (axis 0, or leading dims of 1).
#pragma once
#include <cstdint>

#include "kernels/kernel.h"

namespace onnxmini {
namespace control_flow {

// `t` with axis `axis` removed at position `index`: a view when the slice is
// contiguous, otherwise a copy into a scratch tensor of the run's pool.
Tensor slice_along(KernelContext& ctx, const Tensor& t, int64_t axis, int64_t index);

// Writes `piece` (shape of `out` without `axis`) at position `index` of `axis`.
void place_along(Tensor& out, int64_t axis, int64_t index, const Tensor& piece);

// Zeros (empty strings) positions [from, to) of axis 0 of `out`.
void zero_rows(Tensor& out, int64_t from, int64_t to);

// `shape` with `n` inserted before position `axis`.
Shape with_axis(const Shape& shape, int64_t axis, int64_t n);

}  // namespace control_flow
}  // namespace onnxmini
