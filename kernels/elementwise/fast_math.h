// Branch-free float approximations of exp and tanh for the fast unary kernels.
// libm's expf/tanhf are calls the compiler cannot vectorise; these are plain
// arithmetic, integer bit tricks and selects, so a loop over them becomes SIMD
// code (SSE2 in the portable build). Accuracy: a few ulp, checked against
// <cmath> in double by tests/kernels/elementwise/test_elementwise_values.cc.
// The reference kernels keep calling <cmath>.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>

// GCC keeps the selects below as branches (no SIMD) unless FP compares are
// allowed not to trap: the loops that call these functions are compiled with
// ONNXMINI_NO_TRAPPING_MATH, and the functions are force-inlined into them.
#if defined(__GNUC__) && !defined(__clang__)
#define ONNXMINI_NO_TRAPPING_MATH __attribute__((optimize("no-trapping-math")))
#define ONNXMINI_FAST_MATH_INLINE inline __attribute__((always_inline))
#else
#define ONNXMINI_NO_TRAPPING_MATH
#define ONNXMINI_FAST_MATH_INLINE inline
#endif

namespace onnxmini {
namespace ew {

// exp(x): write x = n * ln2 + r with n an integer and |r| <= ln2 / 2, so
// exp(x) = 2^n * exp(r); exp(r) is a degree-6 polynomial (the classic Cephes
// expf coefficients) and 2^n is built in the exponent bits, as 2^(n/2) * 2^(n - n/2)
// so that results near FLT_MAX and down in the subnormals come out right.
ONNXMINI_FAST_MATH_INLINE float fast_expf(float x) {
  const float hi = 88.72283935546875f, lo = -103.972084045410f;  // beyond: inf and 0
  // Clamped so that NaN becomes lo too (every comparison with NaN is false): the
  // integer conversion below must never see NaN (undefined behaviour); the NaN is
  // restored at the end.
  float c = x > hi ? hi : x;
  c = c >= lo ? c : lo;
  // n = round(c / ln2): adding 1.5 * 2^23 pushes the fraction bits out (round to nearest).
  const float shifter = 12582912.0f;
  const float n = (c * 1.44269504088896341f + shifter) - shifter;
  // r = c - n * ln2, with ln2 split in two parts so the product is exact enough.
  float r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  const int32_t ni = static_cast<int32_t>(n);  // in [-150, 128]
  const int32_t n1 = ni >> 1, n2 = ni - n1;    // both in [-75, 64]: normal powers of two
  const int32_t bits1 = (n1 + 127) << 23, bits2 = (n2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &bits1, sizeof s1);
  std::memcpy(&s2, &bits2, sizeof s2);
  float y = er * s1 * s2;
  y = x > hi ? std::numeric_limits<float>::infinity() : y;
  y = x < lo ? 0.0f : y;
  return x != x ? x : y;  // NaN in, NaN out
}

// tanh(x): an odd polynomial near 0 (where 1 - 2 / (e^2x + 1) would cancel),
// 1 - 2 / (e^(2|x|) + 1) elsewhere (Cephes tanhf's split at 0.625).
ONNXMINI_FAST_MATH_INLINE float fast_tanhf(float x) {
  const float ax = x < 0.0f ? -x : x;
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float e = fast_expf(2.0f * (ax > 10.0f ? 10.0f : ax));  // tanh(10) rounds to 1 in float
  float big = 1.0f - 2.0f / (e + 1.0f);
  big = x < 0.0f ? -big : big;
  const float y = ax < 0.625f ? small : big;
  return x != x ? x : y;
}

// Sigmoid from e = exp(-|x|) <= 1 (never overflows): 1 / (1 + e) for x >= 0,
// e / (1 + e) for x < 0, which keeps full relative precision far into the negatives.
ONNXMINI_FAST_MATH_INLINE float fast_sigmoidf(float x) {
  const float e = fast_expf(x < 0.0f ? x : -x);
  const float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;  // NaN: e is NaN, so both are NaN
}

}  // namespace ew
}  // namespace onnxmini
