// erf and Gelu on one SIMD register, over the vector interface V of
// f32_kernels_impl.h (V512, V256): used by the f32 tables (Erf / Gelu rows)
// and by the GEMM epilogues (kernels/gemm_engine/epilogue_avx{2,512}.h), so the
// standalone Gelu op and a Gemm with Gelu fused give the same bits.
// erf_scalar.h is the portable scalar twin (same formulas and coefficients).
//
// erf(z), a = |z|:
//   a < 1:  z * S(z^2), S a degree-6 polynomial: our least-squares fit of
//           erf(z) / z on [0, 1] (relative error of the fit 1.4e-9, far below
//           float's 6e-8 half ulp), so the result keeps full relative precision
//           down to the subnormals.
//   a >= 1: sign(z) * (1 - erfc(a)), erfc(a) = t exp(-a^2 + P(t)), t = 1 / (1 + a/2):
//           P the degree-10 fit of kernels/elementwise/activations.cc's Gelu fast path.
// Gelu(x) = 0.5 x (1 + erf(x / sqrt 2)); 1 + erf(z) is erfc(|z|) for z < 0 and
// 2 - erfc(|z|) above, for every z (no small-|z| branch: see gelu_erf_reg), so the
// negative tail keeps its relative precision instead of cancelling in 1 + erf.
// Gelu tanh: 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3),
// the same identity without the cancellation of 1 + tanh for negative x.
// Subnormals: an exp argument below -80 gives 0 (kExpFloor): erfc and the negative tails
// of both Gelus are then 0 instead of values below ~1e-34, and no product lands in the
// subnormals, where each one takes a microcode assist (~100x slower; transformer MLPs feed
// Gelu many inputs below -13).
// Data layout of the rows (erf_n, gelu_erf_n, gelu_tanh_n): dense x and y, W floats per
// step, one masked tail (map_n); no blocking, each element is independent.
// Included by f32_kernels_impl.h (it uses exp and map_n from there): ISA
// files include that header and their vec header, never this one directly.
#pragma once
#include <algorithm>

namespace onnxmini {
namespace simd {
namespace {

constexpr float kExpFloor = -80.0f;

// exp(arg), 0 below kExpFloor, for arg <= ~0 (erfc's and the Gelus' exponents): one clamp
// from below (max takes arg second, so NaN flows) instead of exp's two clamps and flush;
// e^-80 ~ 1.8e-35 is normal, so no subnormal is formed inside.
template <class V>
inline typename V::reg exp_floored(typename V::reg arg) {
  const typename V::reg floor = V::set1(kExpFloor);
  return V::blend(V::lt(arg, floor), V::set1(0.0f), exp_clamped<V>(V::max(floor, arg)));
}

// erfc(a) for a >= 0 (erf uses it for a >= 1, Gelu for all a). a is clamped to 12 (erfc(12) ~ 1e-64 rounds to 0, as does
// everything past it), which keeps rcp's Newton step away from inf; min takes a as
// its second operand, returned when a is NaN, so NaN flows through.
template <class V>
inline typename V::reg erfc_big(typename V::reg a_in) {
  using R = typename V::reg;
  const R a = V::min(V::set1(12.0f), a_in);
  const R t = V::rcp(V::fmadd(a, V::set1(0.5f), V::set1(1.0f)));
  R p = V::set1(-1.322038917e-01f);
  p = V::fmadd(p, t, V::set1(9.185590751e-01f));
  p = V::fmadd(p, t, V::set1(-2.660384397e+00f));
  p = V::fmadd(p, t, V::set1(4.065858531e+00f));
  p = V::fmadd(p, t, V::set1(-3.407748510e+00f));
  p = V::fmadd(p, t, V::set1(1.589637131e+00f));
  p = V::fmadd(p, t, V::set1(-6.848514480e-01f));
  p = V::fmadd(p, t, V::set1(2.197643883e-01f));
  p = V::fmadd(p, t, V::set1(3.553123364e-01f));
  p = V::fmadd(p, t, V::set1(1.001627487e+00f));
  p = V::fmadd(p, t, V::set1(-1.265570678e+00f));
  return V::mul(t, exp_floored<V>(V::fmadd(V::sub(V::set1(0.0f), a), a, p)));  // p - a^2, one rounding
}

// erf(z) / z for |z| < 1, as a polynomial in z^2.
template <class V>
inline typename V::reg erf_small_ratio(typename V::reg z2) {
  typename V::reg s = V::set1(7.898139302e-05f);
  s = V::fmadd(s, z2, V::set1(-8.024335257e-04f));
  s = V::fmadd(s, z2, V::set1(5.190051626e-03f));
  s = V::fmadd(s, z2, V::set1(-2.685480751e-02f));
  s = V::fmadd(s, z2, V::set1(1.128361225e-01f));
  s = V::fmadd(s, z2, V::set1(-3.761262894e-01f));
  return V::fmadd(s, z2, V::set1(1.128379226e+00f));
}

template <class V>
inline typename V::reg erf_reg(typename V::reg z) {
  using R = typename V::reg;
  const R a = V::abs(z);
  const R small = V::mul(z, erf_small_ratio<V>(V::mul(z, z)));
  const R big_abs = V::sub(V::set1(1.0f), erfc_big<V>(a));
  const R big = V::blend(V::lt(z, V::set1(0.0f)), V::sub(V::set1(0.0f), big_abs), big_abs);
  return V::blend(V::lt(a, V::set1(1.0f)), small, big);  // NaN: a < 1 is false, big is NaN
}

// 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x (z < 0 ? erfc(|z|) : 2 - erfc(|z|)), z = x / sqrt 2, with
// erfc_big for every |z| (its fit P covers [0, 10]): no small-|z| polynomial, since 1 + erf
// needs only absolute accuracy there (its value is >= 0.157 on |z| < 1), which erfc's few
// ulp give; a quarter fewer operations than erf_reg's two branches.
template <class V>
inline typename V::reg gelu_erf_reg(typename V::reg x) {
  using R = typename V::reg;
  const R z = V::mul(x, V::set1(0.7071067811865476f));
  const R ec = erfc_big<V>(V::abs(z));
  const R one_plus = V::blend(V::lt(z, V::set1(0.0f)), ec, V::sub(V::set1(2.0f), ec));
  return V::mul(V::mul(V::set1(0.5f), x), one_plus);
}

// x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <class V>
inline typename V::reg gelu_tanh_reg(typename V::reg x) {
  using R = typename V::reg;
  const R x3 = V::mul(V::mul(x, x), x);
  const R w = V::mul(V::set1(1.5957691216057308f), V::fmadd(x3, V::set1(0.044715f), x));  // 2 sqrt(2/pi)
  // sigmoid(w) from e = exp(-|w|) <= 1: 1 / (1 + e) for w >= 0, e / (1 + e) below (NaN: e is NaN).
  const R e = exp_floored<V>(V::sub(V::set1(0.0f), V::abs(w)));
  const R s = V::rcp(V::add(V::set1(1.0f), e));
  return V::mul(x, V::blend(V::ge(w, V::set1(0.0f)), s, V::mul(e, s)));
}

template <class V>
void erf_n(const float* x, float* y, int64_t n) {
  map_n<V>(x, y, n, [](typename V::reg v) { return erf_reg<V>(v); });
}
template <class V>
void gelu_erf_n(const float* x, float* y, int64_t n) {
  map_n<V>(x, y, n, [](typename V::reg v) { return gelu_erf_reg<V>(v); });
}
template <class V>
void gelu_tanh_n(const float* x, float* y, int64_t n) {
  map_n<V>(x, y, n, [](typename V::reg v) { return gelu_tanh_reg<V>(v); });
}

// f(x + bias) over n floats, bias column of x[0] = col0 (f32_kernels.h's BiasUnaryFn).
// Layout: x and y dense; bias_len == 1 is one broadcast register; otherwise x is
// walked in row segments (from col0 to the row's end, then whole rows), each W
// floats per step with the bias loaded at the same column and one masked tail, so
// a row of H floats costs H / W steps plus one tail (H = 768, 3072: no tail).
template <class V, class F>
inline void map_bias_n(const float* x, const float* bias, int64_t bias_len, int64_t col0, float* y, int64_t n, F f) {
  using R = typename V::reg;
  if (bias_len == 1) {
    const R b = V::set1(bias[0]);
    map_n<V>(x, y, n, [&](R v) { return f(V::add(v, b)); });
    return;
  }
  int64_t i = 0, c = col0 % bias_len;
  while (i < n) {
    const int64_t m = std::min(bias_len - c, n - i);
    const float* xs = x + i;
    const float* bs = bias + c;
    float* ys = y + i;
    const int64_t full = m - m % V::W;
    int64_t j = 0;
    for (; j < full; j += V::W) V::store(ys + j, f(V::add(V::load(xs + j), V::load(bs + j))));
    if (j < m) {
      const auto tail = V::tail(m - j);
      const R zero = V::set1(0.0f);
      V::store_mask(ys + j, tail, f(V::add(V::load_fill(xs + j, tail, zero), V::load_fill(bs + j, tail, zero))));
    }
    i += m;
    c = 0;
  }
}

template <class V>
void gelu_erf_bias_n(const float* x, const float* bias, int64_t bias_len, int64_t col0, float* y, int64_t n) {
  map_bias_n<V>(x, bias, bias_len, col0, y, n, [](typename V::reg v) { return gelu_erf_reg<V>(v); });
}
template <class V>
void gelu_tanh_bias_n(const float* x, const float* bias, int64_t bias_len, int64_t col0, float* y, int64_t n) {
  map_bias_n<V>(x, bias, bias_len, col0, y, n, [](typename V::reg v) { return gelu_tanh_reg<V>(v); });
}

}  // namespace
}  // namespace simd
}  // namespace onnxmini
