// Run-time choice of the float32 SIMD table (see f32_kernels.h).
#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace simd {

namespace {
// Portable: no SIMD routines; every caller keeps its own C++ loop.
const F32Kernels kPortable{};  // every entry null: callers keep their loops
}  // namespace

const F32Kernels& f32_kernels_for(cpu::Isa isa) {
  if (isa == cpu::Isa::Avx512 && cpu::hw_has_avx512()) return f32_kernels_avx512();
  if (isa != cpu::Isa::Portable && cpu::hw_has_avx2_fma()) return f32_kernels_avx2();
  return kPortable;
}

const F32Kernels& f32_kernels() {
  static const F32Kernels& k = f32_kernels_for(cpu::active_isa());
  return k;
}

}  // namespace simd
}  // namespace onnxmini
