// The ten Reduce* operations as small traits, so one engine (reduce.cc) runs
// them all. Each op is a template on the element type T and the accumulator
// type A and says:
//   init()            the value of the empty reduction's accumulator
//   map(x, shift)     what one element contributes (x, x*x, |x|, exp(x - shift))
//   combine(a, b)     how two partial results merge (must be associative)
//   finalize(a, n)    the output from the accumulator and the count n
// Accumulators: float stays float (the engine sums pairwise, see reduce.cc),
// double stays double, integers accumulate in int64 (or double where the op
// takes logs/exps/square roots: kIntAsDouble).
// kSimdRow: the simd::RowKind whose accumulation equals this op's for float32
// (its map folded with its combine), or -1; finalize is applied after.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace reduce_ops {

template <typename T>
constexpr bool is_float_v = std::is_floating_point<T>::value;

// The output element from a finalized accumulator. An integer output from a double accumulator
// (LogSum / LogSumExp / L2 of integers) may be -inf (log 0), +inf or NaN (log of a negative
// sum), whose conversion to an integer is undefined behaviour (found by fuzz_model under UBSan):
// infinities and out-of-range values saturate to the type's limits, NaN becomes 0.
template <typename T, typename A>
T to_output(A v) {
  if constexpr (std::is_integral<T>::value && std::is_floating_point<A>::value) {
    if (v != v) return T(0);
    if (v <= static_cast<A>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<A>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  }
  return static_cast<T>(v);
}

template <typename T, typename A>
struct Sum {
  static constexpr bool kIntAsDouble = false;
  static constexpr int kSimdRow = simd::kRowSum;
  static A init() { return A(0); }
  static A map(A x, A) { return x; }
  static A combine(A a, A b) { return a + b; }
  static A finalize(A a, int64_t) { return a; }
};

template <typename T, typename A>
struct SumSquare : Sum<T, A> {
  static constexpr int kSimdRow = simd::kRowSumSquare;
  static A map(A x, A) { return x * x; }
};

template <typename T, typename A>
struct L1 : Sum<T, A> {
  static constexpr int kSimdRow = simd::kRowAbs;
  static A map(A x, A) { return x < 0 ? -x : x; }
};

template <typename T, typename A>
struct L2 : Sum<T, A> {
  static constexpr bool kIntAsDouble = true;
  static constexpr int kSimdRow = simd::kRowSumSquare;
  static A map(A x, A) { return x * x; }
  static A finalize(A a, int64_t) { return static_cast<A>(std::sqrt(static_cast<double>(a))); }
};

// Mean of an empty set: 0, as onnxruntime returns (the spec leaves it undefined).
template <typename T, typename A>
struct Mean : Sum<T, A> {
  static A finalize(A a, int64_t n) { return n == 0 ? A(0) : a / static_cast<A>(n); }
};

template <typename T, typename A>
struct LogSum : Sum<T, A> {
  static constexpr bool kIntAsDouble = true;
  static A finalize(A a, int64_t) { return static_cast<A>(std::log(a)); }
};

template <typename T, typename A>
struct Prod {
  static constexpr bool kIntAsDouble = false;
  static constexpr int kSimdRow = -1;
  static A init() { return A(1); }
  static A map(A x, A) { return x; }
  static A combine(A a, A b) { return a * b; }
  static A finalize(A a, int64_t) { return a; }
};

// Max/Min propagate NaN (numpy semantics): once NaN, always NaN.
template <typename T, typename A>
struct Max {
  static constexpr bool kIntAsDouble = false;
  static constexpr int kSimdRow = simd::kRowMax;
  static A init() {
    if constexpr (is_float_v<T>) return -std::numeric_limits<A>::infinity();
    else return static_cast<A>(std::numeric_limits<T>::lowest());
  }
  static A map(A x, A) { return x; }
  static A combine(A a, A b) { return (a > b || a != a) ? a : b; }
  static A finalize(A a, int64_t) { return a; }
};

template <typename T, typename A>
struct Min {
  static constexpr bool kIntAsDouble = false;
  static constexpr int kSimdRow = simd::kRowMin;
  static A init() {
    if constexpr (is_float_v<T>) return std::numeric_limits<A>::infinity();
    else return static_cast<A>(std::numeric_limits<T>::max());
  }
  static A map(A x, A) { return x; }
  static A combine(A a, A b) { return (a < b || a != a) ? a : b; }
  static A finalize(A a, int64_t) { return a; }
};

// Second pass of ReduceLogSumExp: sum of exp(x - max); the engine runs Max
// first and passes each output's max as `shift`, so exp never overflows.
// finalize gives log(sum); the kernel adds the max back.
template <typename T, typename A>
struct SumExp : Sum<T, A> {
  static constexpr bool kIntAsDouble = true;
  static constexpr int kSimdRow = -1;
  static A map(A x, A shift) { return static_cast<A>(std::exp(x - shift)); }
  static A finalize(A a, int64_t) { return static_cast<A>(std::log(a)); }
};

// Accumulator type for op Op on elements of type T.
template <template <typename, typename> class Op, typename T>
using acc_t = std::conditional_t<is_float_v<T>, T, std::conditional_t<Op<T, int64_t>::kIntAsDouble, double, int64_t>>;

}  // namespace reduce_ops
}  // namespace onnxmini
