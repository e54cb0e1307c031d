// Rows of float16 / bfloat16 widened to float32 and float32 rounded back (round
// to nearest even), chosen at run time: F16C vcvtph2ps / vcvtps2ph on the AVX2
// and AVX-512 levels, integer shifts for bfloat16 (8 / 16 lanes), the bit
// manipulation of core/float16.h on the portable level. Rows are contiguous;
// every kernel that computes a half tensor in float32 goes through here, so the
// one rounding per output element is the same everywhere.
#pragma once
#include <cstdint>

#include "core/cpu_features.h"
#include "onnxmini/dtype.h"

namespace onnxmini {
namespace simd {

struct HalfRows {
  cpu::Isa isa;
  void (*f16_to_f32)(const uint16_t* x, float* y, int64_t n);
  void (*f32_to_f16)(const float* x, uint16_t* y, int64_t n);
  void (*bf16_to_f32)(const uint16_t* x, float* y, int64_t n);
  void (*f32_to_bf16)(const float* x, uint16_t* y, int64_t n);
};

const HalfRows& half_rows_portable();
const HalfRows& half_rows_avx2();
const HalfRows& half_rows_avx512();
// The table for cpu::active_isa() (ONNXMINI_ISA caps it), and for a given level.
const HalfRows& half_rows();
const HalfRows& half_rows_for(cpu::Isa isa);

inline bool is_half_dtype(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// y[0..n) = x as float32; `t` is Float16 or BFloat16.
inline void widen_half_row(DType t, const uint16_t* x, float* y, int64_t n) {
  const HalfRows& r = half_rows();
  (t == DType::Float16 ? r.f16_to_f32 : r.bf16_to_f32)(x, y, n);
}
// y[0..n) = x rounded to `t` (Float16 or BFloat16), nearest even.
inline void narrow_half_row(DType t, const float* x, uint16_t* y, int64_t n) {
  const HalfRows& r = half_rows();
  (t == DType::Float16 ? r.f32_to_f16 : r.f32_to_bf16)(x, y, n);
}

}  // namespace simd
}  // namespace onnxmini
