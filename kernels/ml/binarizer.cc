// ai.onnx.ml Binarizer: y = x > threshold ? 1 : 0, same dtype and shape as x.
//
// Layout: any shape, treated as a flat array. threshold defaults to 0 (the
// ONNX schema default). A NaN input is an error naming its index, as in
// onnxruntime (a NaN has no meaningful 0/1 value).
#include <cmath>

#include "kernels/registry.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace ml {
namespace {

class BinarizerKernel : public Kernel {
 public:
  explicit BinarizerKernel(const KernelInfo& info) : threshold_(info.attrs.get_float("threshold", 0.0f)) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && t != DType::Int64 && t != DType::Int32)
      ctx.fail("input has dtype {}; expected float, double, int64 or int32", dtype_name(t));
    ctx.allocate_output(0, t, x.shape());
  }

  void compute(KernelContext& ctx) override {
    switch (ctx.input(0).dtype()) {
      case DType::Float32: run<float>(ctx); break;
      case DType::Float64: run<double>(ctx); break;
      case DType::Int64: run<int64_t>(ctx); break;
      default: run<int32_t>(ctx); break;
    }
  }

 private:
  template <typename T>
  void run(KernelContext& ctx) const {
    const T* x = ctx.input(0).data<T>();
    T* y = ctx.output(0).mutable_data<T>();
    const int64_t n = ctx.input(0).numel();
    // NaN check first (serial, cheap) so the error names the first bad index.
    if constexpr (std::is_floating_point_v<T>)
      for (int64_t i = 0; i < n; ++i)
        if (std::isnan(x[i])) ctx.fail("input element {} is NaN", i);
    // Compared in double: exact for every element type, and an integer input
    // against a fractional threshold (x > -0.5) keeps its meaning.
    const double threshold = threshold_;
    auto body = [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = static_cast<double>(x[i]) > threshold ? T(1) : T(0);
    };
    if (ctx.reference_mode()) body(0, n);
    else parallel_for(ctx.threads(), n, 32768, body);
  }

  float threshold_;
};

ONNXMINI_REGISTER_KERNEL("binarizer", "ai.onnx.ml", "Binarizer", 1, INT_MAX, make_kernel<BinarizerKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_binarizer);
