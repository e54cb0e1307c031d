// AVX-512 instance of the float32 SIMD kernels (f32_kernels_impl.h): 16 lanes,
// __mmask16 masks for row tails, 32-bit gathers for ArgMin/ArgMax.
#include <immintrin.h>

// GCC 12 reports false -W(maybe-)uninitialized inside its own intrinsic headers
// (the masked max in the horizontal reduction).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "kernels/simd/f32_kernels_impl.h"
#include "kernels/simd/vec_avx512.h"

namespace onnxmini {
namespace simd {
const F32Kernels& f32_kernels_avx512() {
  static const F32Kernels k = make_table<V512>(cpu::Isa::Avx512);
  return k;
}

}  // namespace simd
}  // namespace onnxmini
