// Scalar twins of erf_impl.h (same formulas and coefficients) for the portable
// paths: the portable SGEMM epilogue, gemm::apply_epilogue without a SIMD table,
// and tests. std::exp stands in for the vector exp, so results can differ from
// the SIMD ones in the last bit or two, both within the bound of
// tests/kernels/simd/test_erf.cc.
#pragma once
#include <cmath>

namespace onnxmini {
namespace simd {

// erfc(a), a >= 0 (NaN stays NaN; a clamped to 12, past which erfc rounds to 0).
inline float erfc_big_scalar(float a) {
  a = a > 12.0f ? 12.0f : a;
  const float t = 1.0f / (1.0f + 0.5f * a);
  float p = -1.322038917e-01f;
  p = p * t + 9.185590751e-01f;
  p = p * t - 2.660384397e+00f;
  p = p * t + 4.065858531e+00f;
  p = p * t - 3.407748510e+00f;
  p = p * t + 1.589637131e+00f;
  p = p * t - 6.848514480e-01f;
  p = p * t + 2.197643883e-01f;
  p = p * t + 3.553123364e-01f;
  p = p * t + 1.001627487e+00f;
  p = p * t - 1.265570678e+00f;
  const float arg = p - a * a;
  return arg < -80.0f ? 0.0f : t * std::exp(arg);  // erf_impl.h's kExpFloor
}

// erf(z) / z for |z| < 1, a polynomial in z2 = z^2.
inline float erf_small_ratio_scalar(float z2) {
  float s = 7.898139302e-05f;
  s = s * z2 - 8.024335257e-04f;
  s = s * z2 + 5.190051626e-03f;
  s = s * z2 - 2.685480751e-02f;
  s = s * z2 + 1.128361225e-01f;
  s = s * z2 - 3.761262894e-01f;
  return s * z2 + 1.128379226e+00f;
}

inline float erf_scalar(float z) {
  const float a = std::fabs(z);
  if (a < 1.0f) return z * erf_small_ratio_scalar(z * z);
  if (a != a) return z;
  const float r = 1.0f - erfc_big_scalar(a);
  return z < 0.0f ? -r : r;
}

// 0.5 x (1 + erf(x / sqrt 2)) through erfc(|z|) for every z, as erf_impl.h's gelu_erf_reg:
// the negative tail is 0.5 x erfc(|z|).
inline float gelu_erf_scalar(float x) {
  const float z = x * 0.7071067811865476f;
  const float ec = erfc_big_scalar(std::fabs(z));
  return 0.5f * x * (z < 0.0f ? ec : 2.0f - ec);
}

// x * sigmoid(2u) = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
inline float gelu_tanh_scalar(float x) {
  const float u2 = 1.5957691216057308f * (x + 0.044715f * x * x * x);
  const float e = -std::fabs(u2) < -80.0f ? 0.0f : std::exp(-std::fabs(u2));  // <= 1; kExpFloor
  const float s = 1.0f / (1.0f + e);
  return x * (u2 >= 0.0f ? s : e * s);
}

}  // namespace simd
}  // namespace onnxmini
