// Small shape helpers that kernels (and anything else) share: axis
// normalisation, row-major strides, flat index <-> coordinates, partial
// products of a shape. Header-only: reference kernels call unravel_index once
// per element.
//
// The axis functions report a bad axis by returning nullopt rather than by
// throwing, so that each caller fails with its own message naming the node
// (kernels/tensor/tensor_utils.h has the KernelContext form).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "onnxmini/tensor.h"

namespace onnxmini {

// An axis in [-rank, rank) as an index in [0, rank); nullopt when out of range.
inline std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

// An axis that splits a shape into [0, axis) and [axis, rank) (Flatten, Softmax
// before opset 13), so `rank` itself is valid: [-rank, rank] -> [0, rank].
inline std::optional<int64_t> normalize_split_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis > rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

// Row-major element strides of `shape` (the last axis has stride 1).
inline std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// The product of shape[begin, end) (1 when empty); `end` is clamped to the rank.
inline int64_t shape_product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end && d < shape.size(); ++d) p *= shape[d];
  return p;
}

// The coordinates of row-major element `flat` of `shape`, written to
// coord[0 .. rank). A zero-size axis gets coordinate 0 (no element exists).
inline void unravel_index(int64_t flat, const Shape& shape, int64_t* coord) {
  for (size_t d = shape.size(); d-- > 0;) {
    coord[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
}

// The row-major flat index of coordinates coord[0 .. rank) in `shape`.
inline int64_t ravel_index(const int64_t* coord, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + coord[d];
  return flat;
}

}  // namespace onnxmini
