// Shared helpers of the sequence kernels (sequence_util.h).
#include "kernels/sequence/sequence_util.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace onnxmini {
namespace sequence {

const std::vector<Value>& input_items(const KernelContext& ctx, size_t i) {
  const Value& v = ctx.input_value(i);
  if (!v.is_sequence()) ctx.fail("input {} is {}, expected a sequence", i, v.type_string());
  return v.sequence_items();
}

int64_t position(const KernelContext& ctx, size_t i, size_t size, bool allow_end) {
  const Tensor& p = ctx.input(i);
  if ((p.dtype() != DType::Int64 && p.dtype() != DType::Int32) || p.numel() != 1)
    ctx.fail("position must be one int32 or int64, got {} {}", dtype_name(p.dtype()), shape_to_string(p.shape()));
  const int64_t pos = p.dtype() == DType::Int64 ? p.data<int64_t>()[0] : p.data<int32_t>()[0];
  const int64_t n = static_cast<int64_t>(size);
  const int64_t hi = allow_end ? n : n - 1;
  if (pos < -n || pos > hi)
    ctx.fail("position {} is out of range [{}, {}] for a sequence of {} tensors", pos, -n, hi, n);
  return pos < 0 ? pos + n : pos;
}

void check_dtype(const KernelContext& ctx, const std::vector<Value>& items, const Tensor& t, const char* what) {
  if (items.empty()) return;
  const DType have = items.front().tensor().dtype();
  if (t.dtype() != have)
    ctx.fail("{} is {} but the sequence holds {}: a sequence has one element type", what, dtype_name(t.dtype()),
             dtype_name(have));
}

void copy_rows(DType dt, const void* src, void* dst, int64_t rows, int64_t len, int64_t src_stride,
               int64_t dst_stride) {
  if (dt == DType::String) {
    const auto* s = static_cast<const std::string*>(src);
    auto* d = static_cast<std::string*>(dst);
    for (int64_t r = 0; r < rows; ++r) std::copy_n(s + r * src_stride, len, d + r * dst_stride);
    return;
  }
  const size_t w = dtype_size(dt);
  const auto* s = static_cast<const char*>(src);
  auto* d = static_cast<char*>(dst);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(d + r * dst_stride * w, s + r * src_stride * w, static_cast<size_t>(len) * w);
}

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

}  // namespace sequence
}  // namespace onnxmini
