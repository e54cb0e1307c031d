// Helpers shared by the sequence kernels: reading a sequence input, turning a
// position tensor into an index, and the one-dtype rule of ONNX sequences.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"

namespace onnxmini {
namespace sequence {

// Input i as a sequence's items; fails naming the node when it is not a sequence.
const std::vector<Value>& input_items(const KernelContext& ctx, size_t i);

// The scalar int32/int64 position in input i, normalized against a sequence of
// `size` items: valid in [-size, size - 1], or [-size, size] when `allow_end`
// (SequenceInsert may append). Fails naming the node when out of range.
int64_t position(const KernelContext& ctx, size_t i, size_t size, bool allow_end);

// Fails naming the node when `t`'s dtype differs from the items' (a sequence holds one dtype).
void check_dtype(const KernelContext& ctx, const std::vector<Value>& items, const Tensor& t, const char* what);

// Copies `rows` rows of `len` elements: row r from src + r*src_stride to dst + r*dst_stride
// (strings as objects, everything else as bytes).
void copy_rows(DType dt, const void* src, void* dst, int64_t rows, int64_t len, int64_t src_stride,
               int64_t dst_stride);

// Product of shape[from, to).
int64_t product(const Shape& s, size_t from, size_t to);

}  // namespace sequence
}  // namespace onnxmini
