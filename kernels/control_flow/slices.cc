// Strided block copies for Loop and Scan (slices.h). Plain data moves as bytes
// (one memcpy per block); strings are copied as objects.
#include "kernels/control_flow/slices.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace onnxmini {
namespace control_flow {
namespace {

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

// Copies `blocks` blocks of `len` elements: block b from src + b*src_stride to dst + b*dst_stride.
void copy_blocks(DType dt, const void* src, void* dst, int64_t blocks, int64_t len, int64_t src_stride,
                 int64_t dst_stride) {
  if (dt == DType::String) {
    const auto* s = static_cast<const std::string*>(src);
    auto* d = static_cast<std::string*>(dst);
    for (int64_t b = 0; b < blocks; ++b) std::copy_n(s + b * src_stride, len, d + b * dst_stride);
    return;
  }
  const size_t w = dtype_size(dt);
  const auto* s = static_cast<const char*>(src);
  auto* d = static_cast<char*>(dst);
  for (int64_t b = 0; b < blocks; ++b)
    std::memcpy(d + b * dst_stride * w, s + b * src_stride * w, static_cast<size_t>(len) * w);
}

}  // namespace

Shape with_axis(const Shape& shape, int64_t axis, int64_t n) {
  Shape out = shape;
  out.insert(out.begin() + axis, n);
  return out;
}

Tensor slice_along(KernelContext& ctx, const Tensor& t, int64_t axis, int64_t index) {
  const Shape& s = t.shape();
  Shape piece_shape = s;
  piece_shape.erase(piece_shape.begin() + axis);
  const int64_t outer = product(s, 0, static_cast<size_t>(axis));
  const int64_t n = s[axis];
  const int64_t inner = product(s, static_cast<size_t>(axis) + 1, s.size());
  if (outer == 1 || inner == 0)
    return Tensor(t.dtype(), piece_shape, t.buffer(),
                  t.offset() + static_cast<size_t>(index * inner) * dtype_size(t.dtype()));
  Tensor piece = ctx.scratch(t.dtype(), piece_shape);
  const char* base = static_cast<const char*>(t.raw()) + static_cast<size_t>(index * inner) * dtype_size(t.dtype());
  copy_blocks(t.dtype(), base, piece.raw_mut(), outer, inner, n * inner, inner);
  return piece;
}

void place_along(Tensor& out, int64_t axis, int64_t index, const Tensor& piece) {
  const Shape& s = out.shape();
  const int64_t outer = product(s, 0, static_cast<size_t>(axis));
  const int64_t n = s[axis];
  const int64_t inner = product(s, static_cast<size_t>(axis) + 1, s.size());
  char* base = static_cast<char*>(out.raw_mut()) + static_cast<size_t>(index * inner) * dtype_size(out.dtype());
  copy_blocks(out.dtype(), piece.raw(), base, outer, inner, inner, n * inner);
}

void zero_rows(Tensor& out, int64_t from, int64_t to) {
  if (to <= from) return;
  const int64_t row = out.shape().empty() ? 1 : product(out.shape(), 1, out.shape().size());
  if (out.dtype() == DType::String) {
    auto* d = static_cast<std::string*>(out.raw_mut());
    std::fill(d + from * row, d + to * row, std::string());
    return;
  }
  const size_t w = dtype_size(out.dtype());
  std::memset(static_cast<char*>(out.raw_mut()) + static_cast<size_t>(from * row) * w, 0,
              static_cast<size_t>((to - from) * row) * w);
}

}  // namespace control_flow
}  // namespace onnxmini
