// ai.onnx.ml Scaler: y = (x - offset) * scale, per feature or with one value
// for all features; output float32 of the input's shape.
//
// Layout: input rows x features (1-D: one row). offset/scale have either one
// entry per feature (the last dimension) or a single entry. Element-wise, so
// the fast path splits the flat index range over threads; the reference is
// the serial loop.
#include <algorithm>

#include "kernels/ml/ml_common.h"
#include "kernels/registry.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace ml {
namespace {

template <typename T>
void scale_range(const T* x, float* y, int64_t begin, int64_t end, const float* offset, const float* scale,
                 int64_t period) {
  // period = features (per-feature parameters) or 1 (one value for all).
  for (int64_t i = begin; i < end; ++i) {
    const int64_t f = period == 1 ? 0 : i % period;
    y[i] = static_cast<float>((x[i] - offset[f]) * scale[f]);
  }
}

class ScalerKernel : public Kernel {
 public:
  explicit ScalerKernel(const KernelInfo& info)
      : offset_(info.attrs.get_floats("offset", {})), scale_(info.attrs.get_floats("scale", {})) {
    if (scale_.empty()) info.fail("scale is empty");
    if (scale_.size() != offset_.size())
      info.fail("scale has {} values but offset has {}; they must have the same length", scale_.size(), offset_.size());
  }

  void prepare(KernelContext& ctx) override {
    period(ctx);
    ctx.allocate_output(0, DType::Float32, ctx.input(0).shape());
  }

  void compute(KernelContext& ctx) override {
    switch (ctx.input(0).dtype()) {
      case DType::Float32: run<float>(ctx); break;
      case DType::Float64: run<double>(ctx); break;
      case DType::Int64: run<int64_t>(ctx); break;
      case DType::Int32: run<int32_t>(ctx); break;
      default: ctx.fail("input has dtype {}; expected float, double, int64 or int32", dtype_name(ctx.input(0).dtype()));
    }
  }

 private:
  int64_t period(const KernelContext& ctx) const {
    int64_t rows, features;
    rows_and_features(ctx, ctx.input(0), rows, features);
    const int64_t n = static_cast<int64_t>(scale_.size());
    if (n == features) return features;
    if (n == 1) return 1;
    ctx.fail("scale and offset have {} values; expected 1 or one per feature ({})", n, features);
  }

  template <typename T>
  void run(KernelContext& ctx) const {
    const int64_t p = period(ctx);
    const T* x = ctx.input(0).data<T>();
    float* y = ctx.output(0).mutable_data<float>();
    const int64_t n = ctx.input(0).numel();
    if (ctx.reference_mode()) {
      scale_range(x, y, 0, n, offset_.data(), scale_.data(), p);
      return;
    }
    parallel_for(ctx.threads(), n, 16384,
                 [&](int64_t b, int64_t e) { scale_range(x, y, b, e, offset_.data(), scale_.data(), p); });
  }

  std::vector<float> offset_, scale_;
};

ONNXMINI_REGISTER_KERNEL("scaler", "ai.onnx.ml", "Scaler", 1, INT_MAX, make_kernel<ScalerKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_scaler);
