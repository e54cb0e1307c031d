// AVX2 + FMA instance of the float32 SIMD kernels (f32_kernels_impl.h): 8
// lanes; masks are vectors of all-ones lanes (vmaskmov loads/stores for row
// tails, vblendv for selects), 32-bit gathers for ArgMin/ArgMax.
#include <immintrin.h>

#include "kernels/simd/f32_kernels_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace onnxmini {
namespace simd {
const F32Kernels& f32_kernels_avx2() {
  static const F32Kernels k = make_table<V256>(cpu::Isa::Avx2);
  return k;
}

}  // namespace simd
}  // namespace onnxmini
