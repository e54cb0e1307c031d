// AVX-512 traits of NchwcConv's row kernels (nchwc_conv_impl.h): one zmm per block of 16
// channels. Dense rows hold 2 output blocks x 12 pixels (24 accumulators, 2 weight
// registers, 1 broadcast: 27 of 32 zmm); the last three blocks of an odd OCb run 3 x 8
// (24 accumulators, 3 weights, 1 broadcast: 28 zmm), a lone block (OCb = 1) 1 x 16.
// Depthwise strips hold 16 pixels of one block.
// GCC 12 reports false -Wmaybe-uninitialized inside its own intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels/nn/nchwc_conv_impl.h"

namespace onnxmini {
namespace nn {
namespace {

struct Avx512Block {
  using Reg = __m512;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg set1(float v) { return _mm512_set1_ps(v); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm512_max_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm512_min_ps(a, b); }
  static Reg prelu(Reg v, Reg slope) {
    return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), v, slope);
  }
};

// Reorders: the 16 channels of one pixel are one gather (index c * hw) into one blocked
// vector, and one scatter back; the padding channels are masked off (zero on the way in).
void to_blocked_avx512(const float* x, int64_t planes, int64_t hw, float* y) {
  const __mmask16 m = static_cast<__mmask16>((1u << planes) - 1u);
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32(static_cast<int>(hw)));
  for (int64_t p = 0; p < hw; ++p)
    _mm512_storeu_ps(y + p * 16, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, x + p, 4));
}

void from_blocked_avx512(const float* x, int64_t planes, int64_t hw, float* y) {
  const __mmask16 m = static_cast<__mmask16>((1u << planes) - 1u);
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32(static_cast<int>(hw)));
  for (int64_t p = 0; p < hw; ++p) _mm512_mask_i32scatter_ps(y + p, m, idx, _mm512_loadu_ps(x + p * 16), 4);
}

}  // namespace

const NchwcKernels& nchwc_kernels_avx512() {
  static const NchwcKernels k{cpu::Isa::Avx512, nchwc_dense_row<Avx512Block, 2, 12, 16, 8>,
                              nchwc_depthwise_row<Avx512Block, 16>, 2, to_blocked_avx512, from_blocked_avx512, true};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
