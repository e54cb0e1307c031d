// com.microsoft QLinearSigmoid and QLinearLeakyRelu (attribute alpha, default
// 0.01): X, X_scale, X_zero_point, Y_scale, Y_zero_point; uint8 or int8,
// per-tensor parameters. An 8-bit input has 256 values, so each run builds the
// 256-entry table y(q) = sat(round(f((q - zx) * sx) / sy) + zy) once
// (quant::build_lookup; f in float32: 1 / (1 + exp(-x)), or x >= 0 ? x : alpha x)
// and then maps every element through it.
// Data layout: any shape, one flat loop of table look-ups split across threads.
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/quantization/quant_common.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace {

enum class QUnaryOp { Sigmoid, LeakyRelu };

template <QUnaryOp OP>
class QLinearLookupKernel : public Kernel {
 public:
  explicit QLinearLookupKernel(const KernelInfo& info) : alpha_(info.attrs.get_float("alpha", 0.01f)) {
    info.require_dtype(0, {DType::UInt8, DType::Int8});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::UInt8 && x.dtype() != DType::Int8)
      ctx.unsupported("X dtype {} is not supported (uint8, int8)", dtype_name(x.dtype()));
    ctx.allocate_output(0, x.dtype(), x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const DType t = x.dtype();
    const float sx = quant::scalar_scale(ctx, 1, "X_scale"), sy = quant::scalar_scale(ctx, 3, "Y_scale");
    const int32_t zx = quant::scalar_zero_point(ctx, 2, t, "X_zero_point"),
                  zy = quant::scalar_zero_point(ctx, 4, t, "Y_zero_point");
    const float alpha = alpha_;
    auto f = [alpha](float v) {
      if constexpr (OP == QUnaryOp::Sigmoid) return 1.f / (1.f + std::exp(-v));
      else return v >= 0.f ? v : v * alpha;
    };
    uint8_t table[256];
    const uint8_t* in = static_cast<const uint8_t*>(x.raw());
    uint8_t* out = static_cast<uint8_t*>(y.raw_mut());
    if (t == DType::UInt8) quant::build_lookup(table, sx, zx, sy, zy, f);
    else quant::build_lookup(reinterpret_cast<int8_t*>(table), sx, zx, sy, zy, f);
    // Same bytes for both types: the table is indexed by the input's bit pattern.
    parallel_for(ctx.threads(), x.numel(), 65536, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = table[in[i]];
    });
  }

 private:
  float alpha_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("qlinear_lookup", "com.microsoft", "QLinearSigmoid", 1, INT_MAX,
                         make_kernel<QLinearLookupKernel<QUnaryOp::Sigmoid>>);
ONNXMINI_REGISTER_KERNEL("qlinear_lookup", "com.microsoft", "QLinearLeakyRelu", 1, INT_MAX,
                         make_kernel<QLinearLookupKernel<QUnaryOp::LeakyRelu>>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_qlinear_lookup);
