// Checked int64 arithmetic on sizes that come from a model or an input (dims,
// pads, group, repeats, trip counts): overflow is reported as an onnxmini::Error
// naming the node and the values, instead of wrapping (undefined behaviour) and
// ending somewhere unrelated, or in the allocator.
//
// Two forms:
//   - try_mul / try_add / try_numel: nullopt on overflow, for callers that
//     build their own message (ctx.fail, info.fail);
//   - checked_mul / checked_add / checked_numel / checked_byte_size: throw.
//     `where` names the culprit ("Conv 'c1': weight channels x group"); it is
//     either a string or a callable returning one, called only on failure, so
//     a kernel's prepare step builds no string on the good path:
//       checked_mul(w.dim(1), group, [&] { return ctx.info().label() + ": weight channels x group"; });
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "onnxmini/error.h"
#include "onnxmini/tensor.h"

namespace onnxmini {

inline std::optional<int64_t> try_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> try_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Element count of `shape`: nullopt when a dim is negative or the product overflows.
inline std::optional<int64_t> try_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

namespace checked_detail {

template <typename Where>
std::string where_text(const Where& where) {
  if constexpr (std::is_invocable_v<const Where&>) return std::string(where());
  else return std::string(where);
}

[[noreturn]] inline void overflow(std::string where, const char* op, int64_t a, int64_t b, ErrorCode code) {
  throw Error(code, where + ": " + std::to_string(a) + " " + op + " " + std::to_string(b) + " overflows int64");
}

}  // namespace checked_detail

template <typename Where>
int64_t checked_mul(int64_t a, int64_t b, const Where& where, ErrorCode code = ErrorCode::RuntimeError) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) checked_detail::overflow(checked_detail::where_text(where), "*", a, b, code);
  return r;
}

template <typename Where>
int64_t checked_add(int64_t a, int64_t b, const Where& where, ErrorCode code = ErrorCode::RuntimeError) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) checked_detail::overflow(checked_detail::where_text(where), "+", a, b, code);
  return r;
}

// Element count of `shape`; a negative dim or an overflowing product is an error naming the shape.
template <typename Where>
int64_t checked_numel(const Shape& shape, const Where& where, ErrorCode code = ErrorCode::RuntimeError) {
  if (auto n = try_numel(shape)) return *n;
  for (int64_t d : shape)
    if (d < 0)
      throw Error(code, checked_detail::where_text(where) + ": shape " + shape_to_string(shape) +
                            " has a negative dimension " + std::to_string(d));
  throw Error(code, checked_detail::where_text(where) + ": shape " + shape_to_string(shape) +
                        " has more elements than int64 can count");
}

// Bytes of a tensor of `shape` with `element_size`-byte elements (checked element count x size).
template <typename Where>
int64_t checked_byte_size(const Shape& shape, size_t element_size, const Where& where,
                          ErrorCode code = ErrorCode::RuntimeError) {
  const int64_t n = checked_numel(shape, where, code);
  int64_t bytes;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(element_size), &bytes))
    throw Error(code, checked_detail::where_text(where) + ": shape " + shape_to_string(shape) + " of " +
                          std::to_string(element_size) + "-byte elements needs more bytes than int64 can count");
  return bytes;
}

}  // namespace onnxmini
