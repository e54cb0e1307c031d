// The AVX-512 FMA loop of measure_roofs(): 12 zmm accumulators (16 floats each),
// 12 independent FMA chains cover a 4-cycle latency on two FMA ports.
#include "core/immintrin_quiet.h"  // first: GCC 12's false warnings inside avx512fintrin.h

#include "profiler/roofline_fma.h"

namespace onnxmini {
namespace profile {

double fma_loop_avx512(int64_t iters, float* sink) {
  constexpr int kAccumulators = 12;
  __m512 acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_set1_ps(0.5f + 0.01f * j);
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);  // converges to 1: no overflow
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_fmadd_ps(acc[j], m, c);
  __m512 s = acc[0];
  for (int j = 1; j < kAccumulators; ++j) s = _mm512_add_ps(s, acc[j]);
  *sink = _mm512_reduce_add_ps(s);
  return 2.0 * 16 * kAccumulators * static_cast<double>(iters);
}

}  // namespace profile
}  // namespace onnxmini
