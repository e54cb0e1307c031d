// float32 -> uint8 / int8 quantization of one contiguous run with one (scale,
// zero point): the hot loop of QuantizeLinear (per-tensor, and per-axis rows
// when the axis is not the last one) and DynamicQuantizeLinear. One table per
// ISA (portable, AVX2, AVX-512), chosen at run time by core/cpu_features;
// every table gives the same bits as quant::quantize_value (divide by the
// scale, round half to even, add the zero point, saturate; NaN -> minimum).
#pragma once
#include <cstdint>

#include "core/cpu_features.h"

namespace onnxmini {
namespace quant {

struct QuantizeLanes {
  void (*to_u8)(const float* x, uint8_t* y, int64_t n, float scale, int32_t zp);
  void (*to_s8)(const float* x, int8_t* y, int64_t n, float scale, int32_t zp);
  // *lo = min(*lo, x...), *hi = max(*hi, x...), NaN skipped (DynamicQuantizeLinear's range).
  void (*min_max)(const float* x, int64_t n, float* lo, float* hi);
  cpu::Isa isa;
};

// The table of `isa` (callers check that the CPU has it); the active ISA's.
const QuantizeLanes& quantize_lanes_for(cpu::Isa isa);
inline const QuantizeLanes& quantize_lanes() { return quantize_lanes_for(cpu::active_isa()); }

// Defined in quantize_lanes_avx2.cc / quantize_lanes_avx512.cc.
extern const QuantizeLanes kQuantizeLanesAvx2;
extern const QuantizeLanes kQuantizeLanesAvx512;

}  // namespace quant
}  // namespace onnxmini
