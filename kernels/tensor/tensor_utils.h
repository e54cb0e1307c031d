// Helpers shared by the layout / indexing kernels (kernels/tensor/*) and the
// reductions (kernels/reduce/*), on top of core/shape_util.h:
//  - axis normalisation with errors that name the node,
//  - dispatch on the element *width* for ops that only move data (Transpose,
//    Concat, Slice, Gather, ...): a float32 and an int32 tensor are moved by the
//    same uint32_t code; strings are moved as std::string objects,
//  - the "axis offset" copy engine used by Slice, Pad, Tile and Expand.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "core/thread_pool.h"
#include "kernels/kernel.h"

namespace onnxmini {
namespace tensor_ops {

// Axis in [-rank, rank) -> [0, rank); fails naming the node and the value.
// Integer values of an int32 / int64 tensor or, for the opset 1 ops whose schema types
// such inputs as the data's float type (Split's split, Tile's tiles and axis), of a
// float / double tensor holding whole numbers; fails naming `what` otherwise.
inline std::vector<int64_t> integer_values(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() == DType::Int64 || t.dtype() == DType::Int32) return t.to_int64_vector();
  if (t.dtype() != DType::Float32 && t.dtype() != DType::Float64)
    ctx.fail("{} must be an integer or float tensor, got {}", what, dtype_name(t.dtype()));
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.dtype() == DType::Float32 ? t.data<float>()[i] : t.data<double>()[i];
    if (v != static_cast<double>(static_cast<int64_t>(v))) ctx.fail("{} holds {}, which is not a whole number", what, v);
    out[i] = static_cast<int64_t>(v);
  }
  return out;
}

inline int64_t normalize_axis(const KernelContext& ctx, int64_t axis, int64_t rank, const char* what = "axis") {
  if (const auto a = onnxmini::normalize_axis(axis, rank)) return *a;
  ctx.fail("{} {} is out of range [{}, {})", what, axis, -rank, rank);
}

// A 16-byte element (complex128) for width dispatch.
struct Bytes16 {
  uint64_t lo, hi;
};

// Calls fn(T{}) with an element type of the same width as `dt`: uint8_t,
// uint16_t, uint32_t, uint64_t, Bytes16, or std::string for strings. Data
// movement kernels are written once per width instead of once per dtype.
template <typename Fn>
void dispatch_by_width(const KernelContext& ctx, DType dt, Fn&& fn) {
  if (dt == DType::String) return fn(std::string());
  switch (dtype_size(dt)) {
    case 1: return fn(uint8_t());
    case 2: return fn(uint16_t());
    case 4: return fn(uint32_t());
    case 8: return fn(uint64_t());
    case 16: return fn(Bytes16());
    default: ctx.unsupported("dtype {} is not supported", dtype_name(dt));
  }
}

// Typed pointers for width-dispatched code (no dtype check: the width matches by construction).
template <typename T>
const T* elems(const Tensor& t) {
  return static_cast<const T*>(t.raw());
}
template <typename T>
T* elems_mut(Tensor& t) {
  return static_cast<T*>(t.raw_mut());
}

// ---- Axis-offset copy engine -------------------------------------------------
//
// Many ops compute out[i0, i1, ..., in] = in[off0[i0] + off1[i1] + ... + offn[in]]
// where offd[] is a per-output-axis table of element offsets into the input
// (index along some input axis times that axis' stride), or kFill when that
// output position is padding. Slice (start + i*step), Tile (i mod dim), Expand
// (0 along broadcast axes), Pad (reflect/edge/wrap/constant) and Transpose
// (i * stride of the permuted axis) are all instances.
//
// Data layout: the output is written in order, one row (innermost axis) at a
// time. The innermost table is compressed once into segments of constant step
// (a run with step 1 is a block copy, step 0 a broadcast, -1 a reversed copy,
// kFill a padding run), so the inner loop is a plain strided copy. Rows are
// split across threads; each chunk starts its odometer from its first row.
constexpr int64_t kFill = -1;

struct AxisOffsets {
  Shape out_shape;
  std::vector<std::vector<int64_t>> offsets;  // per output axis, out_shape[d] entries
};

struct RowSegment {
  int64_t out_begin, length, in_begin, in_step;  // in_begin == kFill: padding
};

inline std::vector<RowSegment> compress_row(const std::vector<int64_t>& off) {
  std::vector<RowSegment> segs;
  const int64_t n = static_cast<int64_t>(off.size());
  int64_t i = 0;
  while (i < n) {
    RowSegment s{i, 1, off[i], 0};
    if (off[i] == kFill) {
      while (i + s.length < n && off[i + s.length] == kFill) ++s.length;
    } else if (i + 1 < n && off[i + 1] != kFill) {
      s.in_step = off[i + 1] - off[i];
      while (i + s.length < n && off[i + s.length] != kFill && off[i + s.length] - off[i + s.length - 1] == s.in_step)
        ++s.length;
    }
    segs.push_back(s);
    i += s.length;
  }
  return segs;
}

template <typename T>
void copy_by_axis_offsets(const AxisOffsets& plan, const T* in, T* out, const T& fill, ThreadPool* pool) {
  const int64_t rank = static_cast<int64_t>(plan.out_shape.size());
  const int64_t numel = shape_numel(plan.out_shape);
  if (numel == 0) return;
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  const int64_t inner = plan.out_shape.back();
  const int64_t rows = numel / inner;
  const std::vector<RowSegment> segs = compress_row(plan.offsets.back());
  const int64_t grain = std::max<int64_t>(1, 16384 / inner);
  parallel_for(pool, rows, grain, [&](int64_t r0, int64_t r1) {
    // Odometer over the outer axes, started at row r0.
    std::vector<int64_t> idx(rank - 1, 0);
    for (int64_t d = rank - 2, r = r0; d >= 0; --d) {
      idx[d] = r % plan.out_shape[d];
      r /= plan.out_shape[d];
    }
    for (int64_t r = r0; r < r1; ++r) {
      int64_t base = 0;
      bool pad_row = false;
      for (int64_t d = 0; d < rank - 1; ++d) {
        const int64_t o = plan.offsets[d][idx[d]];
        if (o == kFill) pad_row = true;
        base += o;
      }
      T* dst = out + r * inner;
      if (pad_row) {
        std::fill(dst, dst + inner, fill);
      } else {
        for (const RowSegment& s : segs) {
          T* d = dst + s.out_begin;
          if (s.in_begin == kFill) {
            std::fill(d, d + s.length, fill);
          } else if (s.in_step == 1) {
            std::copy(in + base + s.in_begin, in + base + s.in_begin + s.length, d);
          } else {
            const T* src = in + base + s.in_begin;
            for (int64_t j = 0; j < s.length; ++j) d[j] = src[j * s.in_step];
          }
        }
      }
      for (int64_t d = rank - 2; d >= 0; --d) {  // next row
        if (++idx[d] < plan.out_shape[d]) break;
        idx[d] = 0;
      }
    }
  });
}

}  // namespace tensor_ops
}  // namespace onnxmini
