// The blocked pooling routines (nchwc_pool_impl.h) for AVX-512: one zmm per block of 16
// channels (the build gives *_avx512.cc its flags).
// GCC 12 reports false -Wmaybe-uninitialized inside its own intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels/nn/nchwc_pool_impl.h"

namespace onnxmini {
namespace nn {
namespace {

struct Avx512PoolBlock {
  using Reg = __m512;
  static Reg set1(float v) { return _mm512_set1_ps(v); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm512_max_ps(a, b); }  // b where either is NaN, as `a > b ? a : b`
};

}  // namespace

const NchwcPoolKernels& nchwc_pool_kernels_avx512() {
  static const NchwcPoolKernels k = nchwc_pool_table<Avx512PoolBlock>(cpu::Isa::Avx512);
  return k;
}

}  // namespace nn
}  // namespace onnxmini
