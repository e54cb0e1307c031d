// The SGEMM tile epilogue (bias + activation, gemm::TileEpi) on one ymm of
// accumulators: the AVX2 counterpart of epilogue_avx512.h, used by the AVX2
// SGEMM kernel and nn/conv_lanes_avx2.cc. AVX2 has no mask registers, so a partial vector
// (channels past M) loads its bias / slope with vmaskmovps. Include only from
// files compiled with AVX2 + FMA flags (*_avx2.cc).
#pragma once
#include <immintrin.h>

#include "kernels/gemm_engine/sgemm_kernel.h"
#include "kernels/simd/f32_kernels_impl.h"  // simd::gelu_erf_reg / gelu_tanh_reg (erf_impl.h)
#include "kernels/simd/vec_avx2.h"

namespace onnxmini {
namespace gemm {

// exp(x) for the Sigmoid epilogue: x = n*ln2 + r, |r| <= ln2/2, degree-6
// polynomial for e^r (Cephes expf coefficients, ~1 ulp), 2^n built in the
// exponent field. Inputs are clamped so n stays in [-126, 127].
inline __m256 exp8_ps(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// Lanes [0, n) set (n in 0..8): the vmaskmovps mask of a partial vector.
inline __m256i lane_mask8(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// 8 floats at p, lanes >= n read as 0 without touching their memory.
inline __m256 load8_first(const float* p, int n) {
  return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, lane_mask8(n));
}

// The activations that need exp or erf (Sigmoid, Swish, Gelu, GeluTanh) on one
// ymm, left to the compiler to call out of line (see epilogue8_ps).
inline __m256 activate8_heavy_ps(__m256 v, const TileEpi& e) {
  switch (e.act) {
    case TileEpi::kSigmoid: {
      const __m256 one = _mm256_set1_ps(1.0f);
      return _mm256_div_ps(one, _mm256_add_ps(one, exp8_ps(_mm256_sub_ps(_mm256_setzero_ps(), v))));
    }
    case TileEpi::kSwish: {  // v * sigmoid(alpha * v) = v / (1 + exp(-alpha * v))
      const __m256 one = _mm256_set1_ps(1.0f);
      const __m256 neg_av = _mm256_mul_ps(_mm256_set1_ps(-e.sa), v);
      return _mm256_div_ps(v, _mm256_add_ps(one, exp8_ps(neg_av)));
    }
    case TileEpi::kGelu: return simd::gelu_erf_reg<simd::V256>(v);
    case TileEpi::kGeluTanh: return simd::gelu_tanh_reg<simd::V256>(v);
    default: return v;
  }
}

// The activation of the epilogue on one ymm; `slope` is PRelu's slope vector
// (ignored by the other activations). Shared by the SGEMM tile and conv_lanes.
inline __attribute__((always_inline)) __m256 activate8_ps(__m256 v, const TileEpi& e, __m256 slope) {
  switch (e.act) {
    case TileEpi::kNone: break;
    case TileEpi::kRelu: v = _mm256_max_ps(v, _mm256_setzero_ps()); break;
    case TileEpi::kClip: v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(e.lo)), _mm256_set1_ps(e.hi)); break;
    case TileEpi::kHardSigmoid:
    case TileEpi::kHardSwish: {  // max(0, min(1, alpha * v + beta)) [* v]; mul then add, as the standalone op
      __m256 h = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(e.ha), v), _mm256_set1_ps(e.hb));
      h = _mm256_max_ps(_mm256_setzero_ps(), _mm256_min_ps(_mm256_set1_ps(1.0f), h));
      v = e.act == TileEpi::kHardSwish ? _mm256_mul_ps(v, h) : h;
      break;
    }
    case TileEpi::kPRelu: {
      const __m256 neg = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ);
      v = _mm256_blendv_ps(v, _mm256_mul_ps(v, slope), neg);
      break;
    }
    default: v = activate8_heavy_ps(v, e); break;
  }
  return v;
}

// Bias (+ residual) + activation on one 8-wide piece of row `i`, columns [j0, j0 + 8) of
// the tile, of which the first `valid` (0..8) are real (bias / slope loads
// stay inside them; per-row vectors ignore it). Always inlined, as the AVX-512
// epilogue_ps: an out-of-line call per accumulator spills the tile's live registers.
inline __attribute__((always_inline)) __m256 epilogue8_ps(__m256 v, const TileEpi& e, int i, int j0, int valid) {
  if (e.bias) v = _mm256_add_ps(v, e.per_row ? _mm256_set1_ps(e.bias[i]) : load8_first(e.bias + j0, valid));
  if (e.bias2) v = _mm256_add_ps(v, load8_first(e.bias2 + j0, valid));
  if (e.residual) v = _mm256_add_ps(v, load8_first(e.residual + i * e.res_ld + j0, valid));
  const __m256 slope = e.act != TileEpi::kPRelu ? _mm256_setzero_ps()
                       : e.per_row             ? _mm256_set1_ps(e.slope[i])
                                               : load8_first(e.slope + j0, valid);
  return activate8_ps(v, e, slope);
}

}  // namespace gemm
}  // namespace onnxmini
