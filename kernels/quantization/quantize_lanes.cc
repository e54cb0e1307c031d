// The portable quantize table and the run-time choice (quantize_lanes.h).
#include "kernels/quantization/quantize_lanes.h"

#include "kernels/quantization/quant_common.h"

namespace onnxmini {
namespace quant {
namespace {

template <class Q>
void to_int_portable(const float* x, Q* y, int64_t n, float scale, int32_t zp) {
  for (int64_t i = 0; i < n; ++i) y[i] = quantize_value<Q>(x[i], scale, zp);
}

void min_max_portable(const float* x, int64_t n, float* lo, float* hi) {
  float l = *lo, h = *hi;
  for (int64_t i = 0; i < n; ++i) {
    l = x[i] < l ? x[i] : l;  // NaN compares false: skipped
    h = x[i] > h ? x[i] : h;
  }
  *lo = l;
  *hi = h;
}

const QuantizeLanes kPortable = {to_int_portable<uint8_t>, to_int_portable<int8_t>, min_max_portable,
                                 cpu::Isa::Portable};

}  // namespace

const QuantizeLanes& quantize_lanes_for(cpu::Isa isa) {
  switch (isa) {
    case cpu::Isa::Avx512: return kQuantizeLanesAvx512;
    case cpu::Isa::Avx2: return kQuantizeLanesAvx2;
    default: return kPortable;
  }
}

}  // namespace quant
}  // namespace onnxmini
