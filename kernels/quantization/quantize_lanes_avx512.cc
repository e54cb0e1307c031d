// AVX-512 float32 -> uint8 / int8 quantization (quantize_lanes.h). Layout: 16
// floats per zmm: divide by the scale, clamp to [lo - zp, hi - zp] (max first,
// so NaN becomes lo - zp as in the scalar rule), cvtps2dq (round half to even),
// add zp, narrow with vpmov[s|us]db (exact after the clamp). The tail uses a
// masked load / store, so there is no scalar loop.
#include "core/immintrin_quiet.h"  // first: GCC 12's false warnings inside avx512fintrin.h

#include <limits>

#include "kernels/quantization/quant_common.h"
#include "kernels/quantization/quantize_lanes.h"

namespace onnxmini {
namespace quant {
namespace {

template <class Q>
void to_int_avx512(const float* x, Q* y, int64_t n, float scale, int32_t zp) {
  const __m512 vscale = _mm512_set1_ps(scale);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::lowest()) - static_cast<float>(zp));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()) - static_cast<float>(zp));
  const __m512i vzp = _mm512_set1_epi32(zp);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), vscale);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), vzp);
    if constexpr (std::is_same<Q, uint8_t>::value) _mm512_mask_cvtusepi32_storeu_epi8(y + i, m, q);
    else _mm512_mask_cvtsepi32_storeu_epi8(y + i, m, q);
  }
}

// Range: 4 zmm accumulators of min / max (min_ps(x, acc) keeps acc when x is NaN;
// the masked tail loads acc itself into the inactive lanes).
void min_max_avx512(const float* x, int64_t n, float* lo, float* hi) {
  __m512 l[4], h[4];
  for (int k = 0; k < 4; ++k) l[k] = _mm512_set1_ps(*lo), h[k] = _mm512_set1_ps(*hi);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64)
    for (int k = 0; k < 4; ++k) {
      const __m512 v = _mm512_loadu_ps(x + i + 16 * k);
      l[k] = _mm512_min_ps(v, l[k]);
      h[k] = _mm512_max_ps(v, h[k]);
    }
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    l[0] = _mm512_min_ps(_mm512_mask_loadu_ps(l[0], m, x + i), l[0]);
    h[0] = _mm512_max_ps(_mm512_mask_loadu_ps(h[0], m, x + i), h[0]);
  }
  *lo = _mm512_reduce_min_ps(_mm512_min_ps(_mm512_min_ps(l[0], l[1]), _mm512_min_ps(l[2], l[3])));
  *hi = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(h[0], h[1]), _mm512_max_ps(h[2], h[3])));
}

}  // namespace

const QuantizeLanes kQuantizeLanesAvx512 = {to_int_avx512<uint8_t>, to_int_avx512<int8_t>, min_max_avx512,
                                            cpu::Isa::Avx512};

}  // namespace quant
}  // namespace onnxmini
