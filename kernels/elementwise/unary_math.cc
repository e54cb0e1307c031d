// Unary math: Abs, Neg, Sign, Sqrt, Exp, Log, Reciprocal, Floor, Ceil, Round,
// Erf, trigonometric and hyperbolic functions, Tanh, Sigmoid, IsNaN, IsInf,
// Not, BitwiseNot. Each op is a functor run by UnaryKernel over a dense input
// (one flat loop, chunks of kGrain elements per thread). float16/bfloat16 are
// computed in float; float and double call the <cmath> function of their type,
// except the float32 fast path of Exp, Tanh and Sigmoid (fast_math.h), Erf (SIMD
// erf, kernels/simd/erf_impl.h) and Sqrt (SIMD square root, exact).
#include <cmath>
#include <type_traits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/elementwise/fast_math.h"
#include "kernels/elementwise/unary_kernel.h"
#include "kernels/registry.h"
#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace ew {
namespace {

// A float-only op whose value is one expression of x.
#define ONNXMINI_FLOAT_UNARY(NAME, EXPR)                   \
  struct NAME##Op : UnaryOpDefaults {                      \
    using Types = FloatTypes;                              \
    explicit NAME##Op(const KernelInfo&) {}                \
    template <class C> C operator()(C x) const { return EXPR; } \
  };

ONNXMINI_FLOAT_UNARY(Log, std::log(x))
ONNXMINI_FLOAT_UNARY(Reciprocal, C(1) / x)
ONNXMINI_FLOAT_UNARY(Floor, std::floor(x))
ONNXMINI_FLOAT_UNARY(Ceil, std::ceil(x))
ONNXMINI_FLOAT_UNARY(Round, std::nearbyint(x))  // default FP mode: ties to even, as ONNX requires
ONNXMINI_FLOAT_UNARY(Sin, std::sin(x))
ONNXMINI_FLOAT_UNARY(Cos, std::cos(x))
ONNXMINI_FLOAT_UNARY(Tan, std::tan(x))
ONNXMINI_FLOAT_UNARY(Asin, std::asin(x))
ONNXMINI_FLOAT_UNARY(Acos, std::acos(x))
ONNXMINI_FLOAT_UNARY(Atan, std::atan(x))
ONNXMINI_FLOAT_UNARY(Sinh, std::sinh(x))
ONNXMINI_FLOAT_UNARY(Cosh, std::cosh(x))
ONNXMINI_FLOAT_UNARY(Asinh, std::asinh(x))
ONNXMINI_FLOAT_UNARY(Acosh, std::acosh(x))
ONNXMINI_FLOAT_UNARY(Atanh, std::atanh(x))
#undef ONNXMINI_FLOAT_UNARY

// Sqrt, float32 fast path: std::sqrt may set errno, so the compiler keeps it a
// scalar call per element (optimize("no-math-errno") on a function does not
// change that in GCC 12). The square root itself is exact (IEEE), so the SIMD
// vsqrtps of the AVX-512/AVX2 table, or SSE2 sqrtps (x86-64 baseline) on the
// portable level, gives the same bits.
struct SqrtOp : UnaryOpDefaults {
  using Types = FloatTypes;
  static constexpr bool kFastFloat = true;
  explicit SqrtOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return std::sqrt(x); }
  static void fast_run(const float* x, float* y, int64_t n) {
    if (const simd::UnaryFn fn = simd::f32_kernels().sqrt) return fn(x, y, n);
    int64_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm_sqrt_ps(_mm_loadu_ps(x + i)));
#endif
    for (; i < n; ++i) y[i] = std::sqrt(x[i]);
  }
};

// Erf, float32 fast path: the SIMD erf of kernels/simd/erf_impl.h on AVX2 / AVX-512
// (within 4 ulp of std::erf, tests/kernels/simd/test_erf.cc); the portable level keeps
// std::erf. float16 / bfloat16 reach it through float32 blocks (UnaryKernel).
struct ErfOp : UnaryOpDefaults {
  using Types = FloatTypes;
  static constexpr bool kFastFloat = true;
  explicit ErfOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return std::erf(x); }
  static void fast_run(const float* x, float* y, int64_t n) {
    if (const simd::UnaryFn fn = simd::f32_kernels().erf) return fn(x, y, n);
    for (int64_t i = 0; i < n; ++i) y[i] = std::erf(x[i]);
  }
};

// Exp, Tanh and Sigmoid are the hot ones in real models: their float32 fast
// path uses the vectorisable approximations of fast_math.h.
struct ExpOp : UnaryOpDefaults {
  using Types = FloatTypes;
  static constexpr bool kFastFloat = true;
  explicit ExpOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return std::exp(x); }
  ONNXMINI_NO_TRAPPING_MATH static void fast_run(const float* x, float* y, int64_t n) {
    if (const simd::UnaryFn fn = simd::f32_kernels().exp) return fn(x, y, n);
    for (int64_t i = 0; i < n; ++i) y[i] = fast_expf(x[i]);
  }
};
struct TanhOp : UnaryOpDefaults {
  using Types = FloatTypes;
  static constexpr bool kFastFloat = true;
  explicit TanhOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return std::tanh(x); }
  ONNXMINI_NO_TRAPPING_MATH static void fast_run(const float* x, float* y, int64_t n) {
    if (const simd::UnaryFn fn = simd::f32_kernels().tanh) return fn(x, y, n);
    for (int64_t i = 0; i < n; ++i) y[i] = fast_tanhf(x[i]);
  }
};
// Sigmoid without overflow: exp is only taken of a non-positive number.
struct SigmoidOp : UnaryOpDefaults {
  using Types = FloatTypes;
  static constexpr bool kFastFloat = true;
  explicit SigmoidOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const {
    return x >= C(0) ? C(1) / (C(1) + std::exp(-x)) : std::exp(x) / (C(1) + std::exp(x));
  }
  ONNXMINI_NO_TRAPPING_MATH static void fast_run(const float* x, float* y, int64_t n) {
    if (const simd::UnaryFn fn = simd::f32_kernels().sigmoid) return fn(x, y, n);
    for (int64_t i = 0; i < n; ++i) y[i] = fast_sigmoidf(x[i]);
  }
};

struct AbsOp : UnaryOpDefaults {
  using Types = NumericTypes;
  explicit AbsOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const {
    if constexpr (std::is_floating_point<C>::value) return std::fabs(x);  // also clears the sign of -0
    else if constexpr (std::is_unsigned<C>::value) return x;
    else return static_cast<C>(x < 0 ? -x : x);
  }
};

struct NegOp : UnaryOpDefaults {
  using Types = SignedTypes;
  explicit NegOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return static_cast<C>(-x); }
};

// Sign: -1, 0 or 1; NaN stays NaN.
struct SignOp : UnaryOpDefaults {
  using Types = NumericTypes;
  explicit SignOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const {
    if (x > C(0)) return C(1);
    if constexpr (std::is_signed<C>::value) {
      if (x < C(0)) return C(-1);
    }
    return std::is_floating_point<C>::value ? x : C(0);  // x is 0 or NaN here
  }
};

struct IsNaNOp : UnaryOpDefaults {
  using Types = FloatTypes;
  template <class T> using Out = bool;
  explicit IsNaNOp(const KernelInfo&) {}
  template <class C> bool operator()(C x) const { return x != x; }
};

struct IsInfOp : UnaryOpDefaults {
  using Types = FloatTypes;
  template <class T> using Out = bool;
  explicit IsInfOp(const KernelInfo& info)
      : negative(info.attrs.get_int("detect_negative", 1) != 0),
        positive(info.attrs.get_int("detect_positive", 1) != 0) {}
  template <class C> bool operator()(C x) const {
    return (positive && x == std::numeric_limits<C>::infinity()) ||
           (negative && x == -std::numeric_limits<C>::infinity());
  }
  bool negative, positive;
};

struct NotOp : UnaryOpDefaults {
  using Types = BoolTypes;
  explicit NotOp(const KernelInfo&) {}
  bool operator()(bool x) const { return !x; }
};

struct BitwiseNotOp : UnaryOpDefaults {
  using Types = IntTypes;
  explicit BitwiseNotOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return static_cast<C>(~x); }
};

}  // namespace

// Versions 1 and 6 differ only in the legacy consumed_inputs attribute, later
// ones in their type lists; one kernel serves them all.
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Abs", 1, INT_MAX, make_unary<AbsOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Neg", 1, INT_MAX, make_unary<NegOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Sign", 9, INT_MAX, make_unary<SignOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Sqrt", 1, INT_MAX, make_unary<SqrtOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Exp", 1, INT_MAX, make_unary<ExpOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Log", 1, INT_MAX, make_unary<LogOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Reciprocal", 1, INT_MAX, make_unary<ReciprocalOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Floor", 1, INT_MAX, make_unary<FloorOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Ceil", 1, INT_MAX, make_unary<CeilOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Round", 11, INT_MAX, make_unary<RoundOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Erf", 9, INT_MAX, make_unary<ErfOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Sin", 7, INT_MAX, make_unary<SinOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Cos", 7, INT_MAX, make_unary<CosOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Tan", 7, INT_MAX, make_unary<TanOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Asin", 7, INT_MAX, make_unary<AsinOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Acos", 7, INT_MAX, make_unary<AcosOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Atan", 7, INT_MAX, make_unary<AtanOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Sinh", 9, INT_MAX, make_unary<SinhOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Cosh", 9, INT_MAX, make_unary<CoshOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Asinh", 9, INT_MAX, make_unary<AsinhOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Acosh", 9, INT_MAX, make_unary<AcoshOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Atanh", 9, INT_MAX, make_unary<AtanhOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Tanh", 1, INT_MAX, make_unary<TanhOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Sigmoid", 1, INT_MAX, make_unary<SigmoidOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "IsNaN", 9, INT_MAX, make_unary<IsNaNOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "IsInf", 10, INT_MAX, make_unary<IsInfOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "Not", 1, INT_MAX, make_unary<NotOp>);
ONNXMINI_REGISTER_KERNEL("unary_math", "", "BitwiseNot", 18, INT_MAX, make_unary<BitwiseNotOp>);

}  // namespace ew
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(elementwise_unary_math);
