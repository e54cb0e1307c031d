// The AVX2 FMA loop of measure_roofs(): 12 ymm accumulators (8 floats each),
// 12 independent FMA chains cover a 4-5-cycle latency on two FMA ports.
#include <immintrin.h>

#include "profiler/roofline_fma.h"

namespace onnxmini {
namespace profile {

double fma_loop_avx2(int64_t iters, float* sink) {
  constexpr int kAccumulators = 12;
  __m256 acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm256_set1_ps(0.5f + 0.01f * j);
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);  // converges to 1: no overflow
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm256_fmadd_ps(acc[j], m, c);
  __m256 s = acc[0];
  for (int j = 1; j < kAccumulators; ++j) s = _mm256_add_ps(s, acc[j]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  float total = 0;
  for (float v : lanes) total += v;
  *sink = total;
  return 2.0 * 8 * kAccumulators * static_cast<double>(iters);
}

}  // namespace profile
}  // namespace onnxmini
