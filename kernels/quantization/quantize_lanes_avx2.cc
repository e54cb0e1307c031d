// AVX2 float32 -> uint8 / int8 quantization (quantize_lanes.h). Layout: 32
// floats per step (4 ymm): divide by the scale, clamp to [lo - zp, hi - zp]
// (max first, so NaN becomes lo - zp as in the scalar rule), cvtps2dq (round
// half to even in the default MXCSR mode), add zp, then pack 32 -> 16 -> 8 bit
// with saturation (the clamp made it exact) and undo the lane interleave of
// the 256-bit packs with one permute. The tail goes through the scalar rule.
#include <immintrin.h>

#include <limits>

#include "kernels/quantization/quant_common.h"
#include "kernels/quantization/quantize_lanes.h"

namespace onnxmini {
namespace quant {
namespace {

template <class Q>
void to_int_avx2(const float* x, Q* y, int64_t n, float scale, int32_t zp) {
  const __m256 vscale = _mm256_set1_ps(scale);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::lowest()) - static_cast<float>(zp));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()) - static_cast<float>(zp));
  const __m256i vzp = _mm256_set1_epi32(zp);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  auto convert = [&](const float* p) {
    __m256 v = _mm256_div_ps(_mm256_loadu_ps(p), vscale);
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    return _mm256_add_epi32(_mm256_cvtps_epi32(v), vzp);
  };
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a = convert(x + i), b = convert(x + i + 8), c = convert(x + i + 16), d = convert(x + i + 24);
    const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);  // int16, values in range
    __m256i q;
    if constexpr (std::is_same<Q, uint8_t>::value) q = _mm256_packus_epi16(ab, cd);
    else q = _mm256_packs_epi16(ab, cd);
    q = _mm256_permutevar8x32_epi32(q, order);  // the packs interleave 128-bit lanes: restore element order
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), q);
  }
  for (; i < n; ++i) y[i] = quantize_value<Q>(x[i], scale, zp);
}

// Range: 4 ymm accumulators of min / max (min_ps(x, acc) keeps acc when x is NaN).
void min_max_avx2(const float* x, int64_t n, float* lo, float* hi) {
  __m256 l[4], h[4];
  for (int k = 0; k < 4; ++k) l[k] = _mm256_set1_ps(*lo), h[k] = _mm256_set1_ps(*hi);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) {
      const __m256 v = _mm256_loadu_ps(x + i + 8 * k);
      l[k] = _mm256_min_ps(v, l[k]);
      h[k] = _mm256_max_ps(v, h[k]);
    }
  alignas(32) float lb[8], hb[8];
  _mm256_store_ps(lb, _mm256_min_ps(_mm256_min_ps(l[0], l[1]), _mm256_min_ps(l[2], l[3])));
  _mm256_store_ps(hb, _mm256_max_ps(_mm256_max_ps(h[0], h[1]), _mm256_max_ps(h[2], h[3])));
  float a = *lo, b = *hi;
  for (int k = 0; k < 8; ++k) a = lb[k] < a ? lb[k] : a, b = hb[k] > b ? hb[k] : b;
  for (; i < n; ++i) a = x[i] < a ? x[i] : a, b = x[i] > b ? x[i] : b;
  *lo = a;
  *hi = b;
}

}  // namespace

const QuantizeLanes kQuantizeLanesAvx2 = {to_int_avx2<uint8_t>, to_int_avx2<int8_t>, min_max_avx2, cpu::Isa::Avx2};

}  // namespace quant
}  // namespace onnxmini
