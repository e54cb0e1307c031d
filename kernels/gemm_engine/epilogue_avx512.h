// The SGEMM tile epilogue on one zmm of accumulators, shared by the AVX-512
// kernels (sgemm_kernel_avx512.cc, nn/conv_lanes_avx512.cc). Include only from
// files compiled with AVX-512 flags (*_avx512.cc).
#pragma once
#include <immintrin.h>

#include "kernels/gemm_engine/sgemm_kernel.h"
#include "kernels/simd/f32_kernels_impl.h"  // simd::gelu_erf_reg / gelu_tanh_reg (erf_impl.h)
#include "kernels/simd/vec_avx512.h"

namespace onnxmini {
namespace gemm {

// exp(x) for the Sigmoid epilogue: x = n*ln2 + r, |r| <= ln2/2, degree-6
// polynomial for e^r (Cephes expf coefficients, ~1 ulp), then scale by 2^n.
inline __m512 exp_ps(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  __m512 r2 = _mm512_mul_ps(r, r);
  p = _mm512_fmadd_ps(p, r2, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

// The activations that need exp or erf (Sigmoid, Swish, Gelu, GeluTanh) on one
// zmm. Left to the compiler to call out of line: inlined into every accumulator
// of a tile they would multiply its code size.
inline __m512 activate_heavy_ps(__m512 v, const TileEpi& e) {
  switch (e.act) {
    case TileEpi::kSigmoid: {
      __m512 one = _mm512_set1_ps(1.0f);
      return _mm512_div_ps(one, _mm512_add_ps(one, exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), v))));
    }
    case TileEpi::kSwish: {  // v * sigmoid(alpha * v) = v / (1 + exp(-alpha * v))
      __m512 one = _mm512_set1_ps(1.0f);
      const __m512 neg_av = _mm512_mul_ps(_mm512_set1_ps(-e.sa), v);
      return _mm512_div_ps(v, _mm512_add_ps(one, exp_ps(neg_av)));
    }
    case TileEpi::kGelu: return simd::gelu_erf_reg<simd::V512>(v);
    case TileEpi::kGeluTanh: return simd::gelu_tanh_reg<simd::V512>(v);
    default: return v;
  }
}

// Bias (+ residual) + activation on one 16-wide piece of row `i`, columns
// [j0, j0 + 16) of the tile; `mask`: the real columns (loads stay inside them).
// Always inlined: the tiles call it once per accumulator, and as an out-of-line
// call (GCC's choice while the exp / erf activations were part of it) every call
// spilled the tile's live accumulators (all zmm are caller-saved): a 12 -> 96
// 1x1 Conv with a bias ran 136 us against 79 us without one (AMD EPYC, AVX-512).
inline __attribute__((always_inline)) __m512 epilogue_ps(__m512 v, const TileEpi& e, int i, int j0, __mmask16 mask) {
  if (e.bias) {
    v = _mm512_add_ps(v, e.per_row ? _mm512_set1_ps(e.bias[i]) : _mm512_maskz_loadu_ps(mask, e.bias + j0));
  }
  if (e.bias2) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, e.bias2 + j0));
  if (e.residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, e.residual + i * e.res_ld + j0));
  switch (e.act) {
    case TileEpi::kNone: break;
    case TileEpi::kRelu: v = _mm512_max_ps(v, _mm512_setzero_ps()); break;
    case TileEpi::kClip:
      v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(e.lo)), _mm512_set1_ps(e.hi));
      break;
    case TileEpi::kHardSigmoid:
    case TileEpi::kHardSwish: {  // max(0, min(1, alpha * v + beta)) [* v]; mul then add, as the standalone op
      __m512 h = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(e.ha), v), _mm512_set1_ps(e.hb));
      h = _mm512_max_ps(_mm512_setzero_ps(), _mm512_min_ps(_mm512_set1_ps(1.0f), h));
      v = e.act == TileEpi::kHardSwish ? _mm512_mul_ps(v, h) : h;
      break;
    }
    case TileEpi::kPRelu: {
      __m512 s = e.per_row ? _mm512_set1_ps(e.slope[i]) : _mm512_maskz_loadu_ps(mask, e.slope + j0);
      __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
      v = _mm512_mask_mul_ps(v, neg, v, s);
      break;
    }
    default: v = activate_heavy_ps(v, e); break;
  }
  return v;
}

}  // namespace gemm
}  // namespace onnxmini
