// Add, Sub, Mul, Div, Pow, Mod with numpy broadcasting.
// Data layout: dense row-major inputs; BinaryKernel walks the BroadcastPlan's
// contiguous runs (vector-vector, vector-scalar, scalar-vector loops that the
// compiler vectorises; whole rows at a time for 2-D plans with short runs)
// split across threads, or the reference index loop. float32 Add/Sub/Mul/Div
// use the AVX-512 / AVX2 row kernels of kernels/simd/ (kSimdOp) when the CPU has them.
// float16/bfloat16 are computed in float and rounded back per element.
#include <cmath>
#include <type_traits>

#include "kernels/elementwise/binary_kernel.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace ew {
namespace {

struct AddOp : BinaryOpDefaults {
  using Types = NumericTypes;
  static constexpr int kSimdOp = simd::kAdd;
  explicit AddOp(const KernelInfo&) {}
  template <class C> C operator()(C a, C b) const { return static_cast<C>(a + b); }
};
struct SubOp : BinaryOpDefaults {
  using Types = NumericTypes;
  static constexpr int kSimdOp = simd::kSub;
  explicit SubOp(const KernelInfo&) {}
  template <class C> C operator()(C a, C b) const { return static_cast<C>(a - b); }
};
struct MulOp : BinaryOpDefaults {
  using Types = NumericTypes;
  static constexpr int kSimdOp = simd::kMul;
  explicit MulOp(const KernelInfo&) {}
  template <class C> C operator()(C a, C b) const { return static_cast<C>(a * b); }
};

// Integer division truncates toward zero (C semantics, as onnxruntime does).
// INT_MIN / -1 overflows and traps on x86, so -1 is done as a wrapping negation.
template <class C> C int_div(C a, C b) {
  if constexpr (std::is_signed<C>::value) {
    if (b == C(-1)) return static_cast<C>(C(0) - static_cast<std::make_unsigned_t<C>>(a));
  }
  return static_cast<C>(a / b);
}

struct DivOp : BinaryOpDefaults {
  using Types = NumericTypes;
  static constexpr int kSimdOp = simd::kDiv;
  static constexpr bool kIntegerDivisor = true;
  explicit DivOp(const KernelInfo&) {}
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_integral<C>::value) return int_div(a, b);
    else return a / b;
  }
};

// Pow: base T, exponent T1 of any numeric type (opset 12+; earlier opsets only
// used equal float types, which this covers). The result has the base's type.
struct PowOp : BinaryOpDefaults {
  using Types = concat_t<FloatTypes, TypeList<int32_t, int64_t>>;
  static constexpr bool kMixedTypes = true;
  using TypesB = NumericTypes;
  static constexpr const char* kNameA = "X";
  static constexpr const char* kNameB = "Y";
  explicit PowOp(const KernelInfo&) {}

  // A float base squared (exponent 2, the common Pow(x, 2) of norms and spectra) is
  // a * a: one correctly rounded multiply, where powf cost about 10 ns per element
  // (silero's STFT magnitude, 2 x 2064 elements: 54 us per run) and rounds twice when
  // the result is subnormal. onnxruntime squares as well. The branch is on a
  // loop-invariant exponent in the scalar-exponent loops.
  template <class CA, class CB> CA operator()(CA a, CB b) const {
    if constexpr (std::is_floating_point<CA>::value) {
      using P = std::conditional_t<std::is_same<CB, double>::value, double, CA>;
      if (b == CB(2)) return static_cast<CA>(static_cast<P>(a) * static_cast<P>(a));
      return static_cast<CA>(std::pow(static_cast<P>(a), static_cast<P>(b)));
    } else if constexpr (std::is_integral<CB>::value) {
      return int_pow(a, b);
    } else {  // integer base, float exponent: compute in double, convert back with defined overflow
      return saturate_cast<CA>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    }
  }
  // Exponentiation by squaring in unsigned arithmetic (overflow wraps instead of
  // being undefined). A negative exponent gives 1/a^n truncated: 0 unless |a| == 1.
  template <class CA, class CB> static CA int_pow(CA a, CB n) {
    using U = std::make_unsigned_t<CA>;
    if constexpr (std::is_signed<CB>::value) {
      if (n < 0) {
        if (a == 1) return 1;
        if (a == -1) return (n % 2 == 0) ? 1 : -1;
        return 0;
      }
    }
    U result = 1, base = static_cast<U>(a);
    for (auto e = static_cast<std::make_unsigned_t<CB>>(n); e != 0; e >>= 1) {
      if (e & 1) result = static_cast<U>(result * base);
      base = static_cast<U>(base * base);
    }
    return static_cast<CA>(result);
  }
};

// Mod: fmod=1 is C's fmod (the result has the dividend's sign); fmod=0 is
// Python's % (the result has the divisor's sign, a zero result takes the
// divisor's sign too, as numpy.mod). Before opset 28 ONNX requires fmod=1 for
// floating point inputs; Mod-28 defines fmod=0 for them (A - floor(A / B) * B).
struct ModOp : BinaryOpDefaults {
  using Types = NumericTypes;
  static constexpr bool kIntegerDivisor = true;
  explicit ModOp(const KernelInfo& info) : fmod(info.attrs.get_int("fmod", 0) != 0), opset(info.opset) {}
  void check(const KernelContext& ctx, DType dt) const {
    const bool is_float = dt == DType::Float32 || dt == DType::Float64 || dt == DType::Float16 || dt == DType::BFloat16;
    if (is_float && !fmod && opset < 28)
      ctx.fail("fmod=0 is not allowed for {} inputs before opset 28 (set fmod=1)", dtype_name(dt));
  }
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_floating_point<C>::value) {
      C r = std::fmod(a, b);
      if (!fmod) {  // floor semantics: move a remainder of the wrong sign by one divisor
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        else if (r == 0) r = std::copysign(C(0), b);
      }
      return r;
    } else {
      if constexpr (std::is_signed<C>::value) {
        if (b == C(-1)) return 0;  // INT_MIN % -1 traps on x86
      }
      C r = static_cast<C>(a % b);
      if constexpr (std::is_signed<C>::value) {
        if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
      }
      return r;
    }
  }
  bool fmod;
  int opset;
};

}  // namespace

// Opsets 1 and 6 broadcast only with broadcast=1 (BinaryKernel handles the
// legacy axis rule); 7 introduced numpy broadcasting; 13 and 14 only widened the
// type lists. Pow 12 allowed a different exponent type; Mod appeared in 10.
ONNXMINI_REGISTER_KERNEL("binary_arith", "", "Add", 1, INT_MAX, make_binary<AddOp>);
ONNXMINI_REGISTER_KERNEL("binary_arith", "", "Sub", 1, INT_MAX, make_binary<SubOp>);
ONNXMINI_REGISTER_KERNEL("binary_arith", "", "Mul", 1, INT_MAX, make_binary<MulOp>);
ONNXMINI_REGISTER_KERNEL("binary_arith", "", "Div", 1, INT_MAX, make_binary<DivOp>);
ONNXMINI_REGISTER_KERNEL("binary_arith", "", "Pow", 1, INT_MAX, make_binary<PowOp>);
ONNXMINI_REGISTER_KERNEL("binary_arith", "", "Mod", 10, INT_MAX, make_binary<ModOp>);

}  // namespace ew
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(elementwise_binary_arith);
