// ai.onnx.ml Imputer: replaces the "missing" marker (replaced_value_float,
// NaN matching NaN, or replaced_value_int64) by an imputed value - one for
// all features, or one per feature (the last dimension).
//
// Layout: X is [C] or [N, C] (any rank: the last dimension is the feature
// axis), Y has X's shape and dtype. One pass, element by element.
#include <cmath>

#include "kernels/registry.h"

namespace onnxmini {
namespace ml {
namespace {

class ImputerKernel : public Kernel {
 public:
  explicit ImputerKernel(const KernelInfo& info)
      : floats_(info.attrs.get_floats("imputed_value_floats", {})),
        ints_(info.attrs.get_ints("imputed_value_int64s", {})),
        replaced_float_(info.attrs.get_float("replaced_value_float", 0.0f)),
        replaced_int_(info.attrs.get_int("replaced_value_int64", 0)) {
    if (floats_.empty() == ints_.empty())
      info.fail("exactly one of imputed_value_floats and imputed_value_int64s must be given (got {} floats, {} ints)",
                floats_.size(), ints_.size());
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const bool float_in = x.dtype() == DType::Float32 || x.dtype() == DType::Float64;
    const bool int_in = x.dtype() == DType::Int64 || x.dtype() == DType::Int32;
    if (!float_in && !int_in) ctx.fail("input has dtype {}; expected float, double, int64 or int32", dtype_name(x.dtype()));
    if (float_in && floats_.empty())
      ctx.fail("input is {} but only imputed_value_int64s is given", dtype_name(x.dtype()));
    if (int_in && ints_.empty()) ctx.fail("input is {} but only imputed_value_floats is given", dtype_name(x.dtype()));
    const int64_t per_feature = static_cast<int64_t>(float_in ? floats_.size() : ints_.size());
    const int64_t features = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);
    if (per_feature != 1 && per_feature != features)
      ctx.fail("input has {} features but {} imputed values are given (expected 1 or {})", features, per_feature,
               features);
    ctx.allocate_output(0, x.dtype(), x.shape());
  }

  void compute(KernelContext& ctx) override {
    switch (ctx.input(0).dtype()) {
      case DType::Float32: run<float>(ctx, floats_, static_cast<double>(replaced_float_)); break;
      case DType::Float64: run<double>(ctx, floats_, static_cast<double>(replaced_float_)); break;
      case DType::Int64: run<int64_t>(ctx, ints_, static_cast<double>(replaced_int_)); break;
      default: run<int32_t>(ctx, ints_, static_cast<double>(replaced_int_)); break;
    }
  }

 private:
  template <typename T, typename V>
  void run(KernelContext& ctx, const std::vector<V>& imputed, double replaced) const {
    const Tensor& x = ctx.input(0);
    const T* in = x.data<T>();
    T* out = ctx.output(0).mutable_data<T>();
    const int64_t features = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);
    const bool nan_marker = std::isnan(replaced);
    const bool one = imputed.size() == 1;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = static_cast<double>(in[i]);
      const bool missing = nan_marker ? std::isnan(v) : v == replaced;
      out[i] = missing ? static_cast<T>(imputed[one ? 0 : static_cast<size_t>(i % features)]) : in[i];
    }
  }

  std::vector<float> floats_;
  std::vector<int64_t> ints_;
  float replaced_float_;
  int64_t replaced_int_;
};

ONNXMINI_REGISTER_KERNEL("imputer", "ai.onnx.ml", "Imputer", 1, INT_MAX, make_kernel<ImputerKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_imputer);
