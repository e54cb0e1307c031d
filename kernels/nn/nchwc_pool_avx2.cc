// The blocked pooling routines (nchwc_pool_impl.h) for AVX2: two ymm per block of 16
// channels (the build gives *_avx2.cc its flags).
#include <immintrin.h>

#include "kernels/nn/nchwc_pool_impl.h"

namespace onnxmini {
namespace nn {
namespace {

struct Avx2PoolBlock {
  struct Reg {
    __m256 lo, hi;
  };
  static Reg set1(float v) { return {_mm256_set1_ps(v), _mm256_set1_ps(v)}; }
  static Reg load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static void store(float* p, Reg v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
  }
  static Reg add(Reg a, Reg b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  static Reg mul(Reg a, Reg b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
  static Reg max(Reg a, Reg b) { return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)}; }
};

}  // namespace

const NchwcPoolKernels& nchwc_pool_kernels_avx2() {
  static const NchwcPoolKernels k = nchwc_pool_table<Avx2PoolBlock>(cpu::Isa::Avx2);
  return k;
}

}  // namespace nn
}  // namespace onnxmini
