// DynamicQuantizeLinear (opset 11-latest): float32 x -> (y uint8, y_scale,
// y_zero_point) with ONNX's rule: the range [min(0, min x), max(0, max x)]
// maps onto [0, 255]; y_scale = (max - min) / 255 (1 when the range is empty,
// as onnxruntime does, so an all-zero x gives zeros instead of NaN);
// y_zero_point = saturate(round_half_even(0 - min / y_scale)); then
// y = saturate(round_half_even(x / y_scale) + y_zero_point).
// NaN inputs are skipped by the min / max scan and quantize to 0.
//
// Data layout: one min/max pass (the active ISA's min_max lanes over chunks
// across threads, merged), then its float32 -> uint8 quantize lanes over chunks.
#include <algorithm>
#include <limits>
#include <mutex>

#include "core/thread_pool.h"
#include "kernels/quantization/quant_common.h"
#include "kernels/quantization/quantize_lanes.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace {

class DynamicQuantizeLinearKernel : public Kernel {
 public:
  explicit DynamicQuantizeLinearKernel(const KernelInfo& info) { info.require_dtype(0, {DType::Float32}); }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32)
      ctx.unsupported("x dtype {} is not supported (float32)", dtype_name(x.dtype()));
    ctx.allocate_output(0, DType::UInt8, x.shape());
    if (ctx.output_wanted(1)) ctx.allocate_output(1, DType::Float32, {});
    if (ctx.output_wanted(2)) ctx.allocate_output(2, DType::UInt8, {});
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const float* in = x.data<float>();
    const int64_t n = x.numel();
    float lo = 0.f, hi = 0.f;  // the range always includes 0
    std::mutex mu;
    const quant::QuantizeLanes& lanes = ctx.reference_mode() ? quant::quantize_lanes_for(cpu::Isa::Portable)
                                                            : quant::quantize_lanes();
    parallel_for(ctx.threads(), n, 65536, [&](int64_t begin, int64_t end) {
      float l = 0.f, h = 0.f;
      lanes.min_max(in + begin, end - begin, &l, &h);  // NaN skipped
      std::lock_guard<std::mutex> lock(mu);
      lo = std::min(lo, l);
      hi = std::max(hi, h);
    });
    const float scale = hi == lo ? 1.f : (hi - lo) / 255.f;
    const uint8_t zp = quant::saturate_round<uint8_t>(0.f - lo / scale);
    uint8_t* out = ctx.output(0).mutable_data<uint8_t>();
    parallel_for(ctx.threads(), n, 16384, [&](int64_t begin, int64_t end) {
      lanes.to_u8(in + begin, out + begin, end - begin, scale, zp);
    });
    if (ctx.output_wanted(1)) ctx.output(1).mutable_data<float>()[0] = scale;
    if (ctx.output_wanted(2)) ctx.output(2).mutable_data<uint8_t>()[0] = zp;
  }
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("dynamic_quantize_linear", "", "DynamicQuantizeLinear", 11, INT_MAX,
                         make_kernel<DynamicQuantizeLinearKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_dynamic_quantize_linear);
