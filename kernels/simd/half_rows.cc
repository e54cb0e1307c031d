// Portable level of half_rows.h and the run-time choice of level.
#include "kernels/simd/half_rows.h"

#include "core/float16.h"

namespace onnxmini {
namespace simd {
namespace {

void f16_to_f32_portable(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = half_to_float(x[i]);
}
void f32_to_f16_portable(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = float_to_half(x[i]);
}
void bf16_to_f32_portable(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = bfloat16_to_float(x[i]);
}
void f32_to_bf16_portable(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = float_to_bfloat16(x[i]);
}

}  // namespace

const HalfRows& half_rows_portable() {
  static const HalfRows k{cpu::Isa::Portable, f16_to_f32_portable, f32_to_f16_portable, bf16_to_f32_portable,
                          f32_to_bf16_portable};
  return k;
}

const HalfRows& half_rows_for(cpu::Isa isa) {
  if (isa == cpu::Isa::Avx512 && cpu::hw_has_avx512()) return half_rows_avx512();
  if (isa != cpu::Isa::Portable && cpu::hw_has_avx2_fma()) return half_rows_avx2();
  return half_rows_portable();
}

const HalfRows& half_rows() {
  static const HalfRows& k = half_rows_for(cpu::active_isa());
  return k;
}

}  // namespace simd
}  // namespace onnxmini
