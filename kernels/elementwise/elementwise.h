// Shared machinery of the element-wise kernels:
//  - dtype dispatch: visit(TypeList<...>{}, dtype, fn) calls fn(Tag<T>{}) with the
//    C++ storage type of `dtype`, so each op is written once as a template;
//  - half precision: float16 / bfloat16 are stored as 16-bit patterns and computed
//    in float (Num<T>::load / Num<T>::store), every other type is computed as is;
//  - loops: the fast ones walk a BroadcastPlan's contiguous runs, split across
//    threads; the reference ones compute every element's input offsets with the
//    broadcasting index math written out (the oracle of the unit tests).
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/shape_util.h"
#include "kernels/elementwise/broadcast.h"
#include "kernels/kernel.h"
#include "kernels/simd/half_rows.h"
#include "core/float16.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace ew {

// ---------------------------------------------------------------- types
// Storage types of the two 16-bit float formats (the Tensor API has no C++ type for them).
struct Float16 { uint16_t bits; };
struct BFloat16 { uint16_t bits; };

template <typename T> struct storage_dtype { static constexpr DType value = dtype_of<T>::value; };
template <> struct storage_dtype<Float16> { static constexpr DType value = DType::Float16; };
template <> struct storage_dtype<BFloat16> { static constexpr DType value = DType::BFloat16; };

// Num<T>::C is the type arithmetic happens in; load/store convert to and from storage.
template <typename T> struct Num {
  using C = T;
  static C load(const T& v) { return v; }
  static T store(const C& v) { return v; }
};
template <> struct Num<Float16> {
  using C = float;
  static float load(Float16 v) { return half_to_float(v.bits); }
  static Float16 store(float v) { return Float16{float_to_half(v)}; }
};
template <> struct Num<BFloat16> {
  using C = float;
  static float load(BFloat16 v) { return bfloat16_to_float(v.bits); }
  static BFloat16 store(float v) { return BFloat16{float_to_bfloat16(v)}; }
};
template <typename T> using compute_t = typename Num<T>::C;

template <typename... Ts> struct TypeList {};
template <typename T> struct Tag { using type = T; };

template <typename... Ls> struct concat;
template <typename... As> struct concat<TypeList<As...>> { using type = TypeList<As...>; };
template <typename... As, typename... Bs, typename... Rest>
struct concat<TypeList<As...>, TypeList<Bs...>, Rest...> {
  using type = typename concat<TypeList<As..., Bs...>, Rest...>::type;
};
template <typename... Ls> using concat_t = typename concat<Ls...>::type;

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = concat_t<SignedIntTypes, UnsignedIntTypes>;
using SignedTypes = concat_t<FloatTypes, SignedIntTypes>;  // types with a sign (Neg, Sign of negatives)
using NumericTypes = concat_t<FloatTypes, IntTypes>;
using BoolTypes = TypeList<bool>;
using AllTypes = concat_t<NumericTypes, BoolTypes, TypeList<std::string>>;

// Calls fn(Tag<T>{}) for the T of `list` whose dtype is `dt`; false when none is.
template <typename... Ts, typename Fn>
bool visit(TypeList<Ts...>, DType dt, Fn&& fn) {
  return ((dt == storage_dtype<Ts>::value ? (fn(Tag<Ts>{}), true) : false) || ...);
}

// "float, double, int32" - for "dtype X is not supported (expected ...)" messages.
template <typename... Ts>
std::string type_names(TypeList<Ts...>) {
  std::string s;
  ((s += (s.empty() ? "" : ", ") + std::string(dtype_name(storage_dtype<Ts>::value))), ...);
  return s;
}

// Float -> integer conversion with a defined result everywhere: NaN gives 0,
// values beyond the target's range clamp to its limits (C++ leaves both undefined).
template <typename TO, typename F>
TO saturate_cast(F v) {
  static_assert(std::is_integral<TO>::value && std::is_floating_point<F>::value, "float -> integer only");
  if (v != v) return TO(0);
  if (v <= static_cast<F>(std::numeric_limits<TO>::lowest())) return std::numeric_limits<TO>::lowest();
  if (v >= static_cast<F>(std::numeric_limits<TO>::max())) return std::numeric_limits<TO>::max();
  return static_cast<TO>(v);
}

template <typename T> const T* cdata(const Tensor& t) { return static_cast<const T*>(t.raw()); }
template <typename T> T* mdata(const Tensor& t) { return static_cast<T*>(t.raw_mut()); }

// Elements per parallel chunk: 32K floats = 128 KB per operand, enough work to
// amortise a thread hand-off, small enough to balance 2-16 threads on 1M elements.
constexpr int64_t kGrain = 32768;

// The cost of one pass over `elements` outputs touching `bytes_per_element` bytes
// each (inputs + output), one operation per element: with the cost rule
// (core/thread_pool.h) an element-wise op splits only when its data is larger than
// the caches; below that the next node pays more for reading the worker's half
// than the split saved (docs/threads.md, "Small nodes run inline").
// `out_bytes` of them written.
inline ParallelCost streaming_cost(int64_t elements, int64_t bytes_per_element, int64_t out_bytes = 4) {
  return ParallelCost{elements, elements * bytes_per_element, elements * out_bytes};
}

// ---------------------------------------------------------------- half blocks
template <typename T> constexpr bool is_half_v = std::is_same<T, Float16>::value || std::is_same<T, BFloat16>::value;
constexpr int64_t kHalfBlock = 512;  // floats per stack block (2 KB): stays in L1 between widen, op, narrow

// Half row pieces: x[0..n) widened block by block into float32, body(block, m)
// updates the block in place, the block is rounded once into y (nearest even).
template <typename TI, typename TO, typename Body>
void half_blocks(const TI* x, TO* y, int64_t n, Body&& body) {
  float v[kHalfBlock];
  for (int64_t i = 0; i < n; i += kHalfBlock) {
    const int64_t m = std::min(kHalfBlock, n - i);
    simd::widen_half_row(storage_dtype<TI>::value, &x[i].bits, v, m);
    body(v, m);
    simd::narrow_half_row(storage_dtype<TO>::value, v, &y[i].bits, m);
  }
}

// ---------------------------------------------------------------- fast path
// Walks the runs of a BroadcastPlan in order, keeping each input's element
// offset up to date with an odometer over the outer (merged) dims instead of
// dividing the run index for every run.
class RunCursor {
 public:
  RunCursor(const BroadcastPlan& plan, int64_t run) : plan_(plan), n_(plan.strides.size()) {
    const size_t outer_dims = plan.dims.size() - 1;
    index_.assign(outer_dims, 0);
    offsets_.assign(n_, 0);
    for (size_t k = outer_dims; k-- > 0;) {
      index_[k] = run % plan.dims[k];
      run /= plan.dims[k];
      for (size_t i = 0; i < n_; ++i) offsets_[i] += index_[k] * plan.strides[i][k];
    }
  }
  const int64_t* offsets() const { return offsets_.data(); }
  void next() {
    for (size_t k = index_.size(); k-- > 0;) {
      for (size_t i = 0; i < n_; ++i) offsets_[i] += plan_.strides[i][k];
      if (++index_[k] < plan_.dims[k]) return;
      for (size_t i = 0; i < n_; ++i) offsets_[i] -= index_[k] * plan_.strides[i][k];
      index_[k] = 0;
    }
  }

 private:
  const BroadcastPlan& plan_;
  size_t n_;
  std::vector<int64_t> index_, offsets_;
};

// Splits the output into chunks of about kGrain elements (one chunk may span
// several runs, and a long run is split between chunks) and calls
//   piece(const int64_t* in_offsets, int64_t count, int64_t out_offset)
// for each contiguous piece: inside it input i advances by plan.inner_stride(i)
// (0 or 1) per element and the output by 1.
template <typename Piece>
void for_each_piece(const BroadcastPlan& plan, ThreadPool* pool, Piece&& piece) {
  const int64_t inner = plan.inner, total = plan.outer * plan.inner;
  if (total == 0) return;
  const size_t n = plan.strides.size();
  // Bytes per element as for float32 operands (the plan does not know the dtypes).
  const ParallelCost cost = streaming_cost(total, 4 * static_cast<int64_t>(n + 1));
  parallel_for(pool, total, kGrain, cost, [&](int64_t begin, int64_t end) {
    RunCursor cursor(plan, begin / inner);
    std::vector<int64_t> off(n);
    int64_t pos = begin, within = begin % inner;
    while (pos < end) {
      const int64_t count = std::min(inner - within, end - pos);
      for (size_t i = 0; i < n; ++i) off[i] = cursor.offsets()[i] + within * plan.inner_stride(i);
      piece(off.data(), count, pos);
      pos += count;
      within = 0;
      cursor.next();
    }
  });
}

// A plan of two merged dims whose runs are short (< kGrain): [N,1] op [N,C],
// [C] op [N,C], [N,1] op [1,C]. for_each_piece would pay a cursor step, a
// lambda call and the four-way branch per run of C elements; here each thread
// takes whole rows and calls rows(r0, r1), with the row strides read once.
inline bool short_rows_2d(const BroadcastPlan& plan) { return plan.dims.size() == 2 && plan.inner < kGrain; }

template <typename Rows>
void for_each_row_block(const BroadcastPlan& plan, ThreadPool* pool, Rows&& rows) {
  const ParallelCost cost = streaming_cost(plan.outer * plan.inner, 4 * static_cast<int64_t>(plan.strides.size() + 1));
  parallel_for(pool, plan.outer, std::max<int64_t>(1, kGrain / plan.inner), cost,
               [&](int64_t r0, int64_t r1) { rows(r0, r1); });
}

// Rows [r0, r1) of y = f(a, b) on a 2-D plan, with the vector/scalar choice of
// each operand a template argument so that the inner loop has no branch.
template <bool VA, bool VB, typename TA, typename TB, typename TO, typename F>
void binary_rows(const BroadcastPlan& plan, const TA* a, const TB* b, TO* y, const F& f, int64_t r0, int64_t r1) {
  const int64_t cols = plan.inner, ra = plan.strides[0][0], rb = plan.strides[1][0];
  for (int64_t r = r0; r < r1; ++r) {
    const TA* pa = a + r * ra;
    const TB* pb = b + r * rb;
    TO* py = y + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      py[c] = Num<TO>::store(f(Num<TA>::load(pa[VA ? c : 0]), Num<TB>::load(pb[VB ? c : 0])));
  }
}

// y = f(a, b) over a plan of two inputs. The four loops (vector-vector,
// vector-scalar, scalar-vector, scalar-scalar) have unit or no stride, so the
// compiler vectorises them.
template <typename TA, typename TB, typename TO, typename F>
void binary_fast(const BroadcastPlan& plan, const TA* a, const TB* b, TO* y, const F& f, ThreadPool* pool) {
  using NA = Num<TA>; using NB = Num<TB>; using NO = Num<TO>;
  const bool va = plan.inner_stride(0) != 0, vb = plan.inner_stride(1) != 0;
  if constexpr (is_half_v<TA> && is_half_v<TB> && is_half_v<TO>) {
    // Half operands: each contiguous run in float32 blocks of kHalfBlock (F16C
    // widening), f on the block, one rounding per output element.
    for_each_piece(plan, pool, [&](const int64_t* off, int64_t n, int64_t o) {
      const TA* pa = a + off[0];
      const TB* pb = b + off[1];
      float wa[kHalfBlock], wb[kHalfBlock];
      const float sa = NA::load(pa[0]), sb = NB::load(pb[0]);
      for (int64_t i = 0; i < n; i += kHalfBlock) {
        const int64_t m = std::min(kHalfBlock, n - i);
        if (va) simd::widen_half_row(storage_dtype<TA>::value, &pa[i].bits, wa, m);
        if (vb) simd::widen_half_row(storage_dtype<TB>::value, &pb[i].bits, wb, m);
        if (va && vb) {
          for (int64_t k = 0; k < m; ++k) wa[k] = f(wa[k], wb[k]);
        } else if (va) {
          for (int64_t k = 0; k < m; ++k) wa[k] = f(wa[k], sb);
        } else if (vb) {
          for (int64_t k = 0; k < m; ++k) wa[k] = f(sa, wb[k]);
        } else {
          const float v = f(sa, sb);
          for (int64_t k = 0; k < m; ++k) wa[k] = v;
        }
        simd::narrow_half_row(storage_dtype<TO>::value, wa, &y[o + i].bits, m);
      }
    });
    return;
  }
  if (short_rows_2d(plan)) {
    for_each_row_block(plan, pool, [&](int64_t r0, int64_t r1) {
      if (va && vb) binary_rows<true, true>(plan, a, b, y, f, r0, r1);
      else if (va) binary_rows<true, false>(plan, a, b, y, f, r0, r1);
      else if (vb) binary_rows<false, true>(plan, a, b, y, f, r0, r1);
      else binary_rows<false, false>(plan, a, b, y, f, r0, r1);
    });
    return;
  }
  for_each_piece(plan, pool, [&](const int64_t* off, int64_t n, int64_t o) {
    const TA* pa = a + off[0];
    const TB* pb = b + off[1];
    TO* py = y + o;
    if (va && vb) {
      for (int64_t i = 0; i < n; ++i) py[i] = NO::store(f(NA::load(pa[i]), NB::load(pb[i])));
    } else if (va) {
      const auto s = NB::load(pb[0]);
      for (int64_t i = 0; i < n; ++i) py[i] = NO::store(f(NA::load(pa[i]), s));
    } else if (vb) {
      const auto s = NA::load(pa[0]);
      for (int64_t i = 0; i < n; ++i) py[i] = NO::store(f(s, NB::load(pb[i])));
    } else {
      const TO v = NO::store(f(NA::load(pa[0]), NB::load(pb[0])));
      for (int64_t i = 0; i < n; ++i) py[i] = v;
    }
  });
}

// y = f(x) over n contiguous elements. Half in and out: blocks of kHalfBlock
// widened with F16C (half_rows.h), f in float32 on the block, rounded once.
template <typename TI, typename TO, typename F>
void unary_fast(const TI* x, TO* y, int64_t n, const F& f, ThreadPool* pool) {
  const ParallelCost cost = streaming_cost(n, static_cast<int64_t>(sizeof(TI) + sizeof(TO)), sizeof(TO));
  if constexpr (is_half_v<TI> && is_half_v<TO>) {
    parallel_for(pool, n, kGrain, cost, [&](int64_t b, int64_t e) {
      half_blocks<TI, TO>(x + b, y + b, e - b, [&](float* v, int64_t m) {
        for (int64_t i = 0; i < m; ++i) v[i] = f(v[i]);
      });
    });
    return;
  }
  parallel_for(pool, n, kGrain, cost, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = Num<TO>::store(f(Num<TI>::load(x[i])));
  });
}

// ---------------------------------------------------------------- reference path
// The element of an input of shape `in` read by output element `flat` of shape
// `out` (numpy broadcasting): unravel `flat` into an index per output axis,
// innermost axis first; align `in` to the right of `out`; an input axis of size
// 1 always reads index 0, other axes read the output's index.
inline int64_t broadcast_offset(const Shape& out, const Shape& in, int64_t flat) {
  int64_t offset = 0;
  int64_t in_stride = 1;  // elements between neighbours along the current input axis
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t out_axis = out.size() - 1 - k;
    const int64_t index = flat % out[out_axis];
    flat /= out[out_axis];
    if (k < in.size()) {
      const int64_t in_dim = in[in.size() - 1 - k];
      if (in_dim != 1) offset += index * in_stride;
      in_stride *= in_dim;
    }
  }
  return offset;
}

template <typename TA, typename TB, typename TO, typename F>
void binary_reference(const Shape& out, const Shape& sa, const Shape& sb, const TA* a, const TB* b, TO* y,
                      const F& f) {
  const int64_t n = shape_numel(out);
  for (int64_t i = 0; i < n; ++i) {
    const TA& ea = a[broadcast_offset(out, sa, i)];
    const TB& eb = b[broadcast_offset(out, sb, i)];
    y[i] = Num<TO>::store(f(Num<TA>::load(ea), Num<TB>::load(eb)));
  }
}

template <typename TI, typename TO, typename F>
void unary_reference(const TI* x, TO* y, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) y[i] = Num<TO>::store(f(Num<TI>::load(x[i])));
}

// ---------------------------------------------------------------- shapes
// Output shape of numpy broadcasting, failing with the node's name.
inline Shape broadcast_or_fail(const KernelContext& ctx, const std::vector<Shape>& shapes) {
  try {
    return broadcast_shapes(shapes);
  } catch (const Error& e) {
    ctx.fail("{}", e.what());
  }
}

// PRelu before opset 7: a 1-D slope of size C (C = A's axis 1, C > 1) is per channel, so it
// becomes C x 1 x .. x 1; any other slope (size 1, or already C x 1 x 1) broadcasts as is.
inline Shape channel_broadcast_shape(const Shape& a, const Shape& b) {
  if (a.size() < 2 || b.size() != 1 || b[0] == 1 || b[0] != a[1]) return b;
  Shape per_channel(a.size() - 1, 1);
  per_channel[0] = b[0];
  return per_channel;
}

// Before opset 7 binary ops broadcast only with attribute broadcast=1: B's dims
// are matched to A's starting at `axis` (default: aligned to the right), and
// the output has A's shape. Returns B's shape padded with trailing 1s so that
// numpy broadcasting then does the same thing.
inline Shape legacy_broadcast_shape(const KernelContext& ctx, const Shape& a, const Shape& b) {
  const Attributes& attrs = ctx.attrs();
  if (attrs.get_int("broadcast", 0) == 0) {
    if (a != b)
      ctx.fail("shapes {} and {} differ and broadcast=0 (opset {} broadcasts only with broadcast=1)",
               shape_to_string(a), shape_to_string(b), ctx.info().opset);
    return b;
  }
  const int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
  const int64_t given = attrs.get_int("axis", ra - rb);
  const auto placed = normalize_split_axis(given, ra);  // B's dims go to [axis, axis + rb)
  if (!placed || *placed + rb > ra)
    ctx.fail("axis {} cannot place B of shape {} inside A of shape {}", given, shape_to_string(b), shape_to_string(a));
  const int64_t axis = *placed;
  Shape padded = b;
  padded.resize(static_cast<size_t>(ra - axis), 1);
  for (int64_t k = 0; k < rb; ++k)
    if (padded[k] != 1 && padded[k] != a[axis + k])
      ctx.fail("B of shape {} does not match A of shape {} at axis {}", shape_to_string(b), shape_to_string(a),
               axis + k);
  return padded;
}

}  // namespace ew
}  // namespace onnxmini
