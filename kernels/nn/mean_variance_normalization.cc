// MeanVarianceNormalization (opsets 9, 13): y = (x - mean) / (sqrt(var) + 1e-9),
// mean and (population) variance taken over `axes` (default [0, 2, 3]), as the
// ONNX function body defines it; float32, float64, float16 / bfloat16 (through
// float32). Statistics are accumulated in double, variance in a second pass
// over (x - mean)^2 (never negative, unlike E[x^2] - mean^2).
//
// Layout: every element belongs to the group named by its coordinates on the
// kept axes; `group_of` walks x in memory order with an odometer and yields the
// group's flat index (strides of the kept shape, 0 on reduced axes), so all
// three passes (sum, squared deviation, output) read x contiguously. Groups
// are interleaved in memory in general, so the passes run on one thread.
#include <cmath>

#include "core/shape_util.h"
#include "kernels/registry.h"
#include "kernels/vision/half_float.h"

namespace onnxmini {
namespace nn {
namespace {

constexpr double kMvnEpsilon = 1e-9;

class MeanVarianceNormalizationKernel : public Kernel {
 public:
  explicit MeanVarianceNormalizationKernel(const KernelInfo& info)
      : axes_(info.attrs.get_ints("axes", {0, 2, 3})) {
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && !vision::is_half(t))
      ctx.unsupported("dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(t));
    reduced_axes(ctx, x.shape());
    ctx.allocate_output(0, t, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    ctx.stats().flops = 5.0 * x.numel();
    ctx.stats().variant = "mvn_groups";
    if (x.numel() == 0) return;
    if (x.dtype() == DType::Float32) {
      run(ctx, x.data<float>(), y.mutable_data<float>());
    } else if (x.dtype() == DType::Float64) {
      run(ctx, x.data<double>(), y.mutable_data<double>());
    } else {
      Tensor xf = ctx.scratch(DType::Float32, x.shape()), yf = ctx.scratch(DType::Float32, x.shape());
      vision::widen_half(x, xf.mutable_data<float>());
      run(ctx, xf.data<float>(), yf.mutable_data<float>());
      vision::narrow_to_half(yf.data<float>(), y);
    }
  }

 private:
  // reduced[d] for each axis d of `shape`; fails on an out-of-range or repeated axis.
  std::vector<bool> reduced_axes(const KernelContext& ctx, const Shape& shape) const {
    const int64_t r = static_cast<int64_t>(shape.size());
    std::vector<bool> reduced(shape.size(), false);
    for (int64_t a : axes_) {
      const auto n = normalize_axis(a, r);
      if (!n) ctx.fail("axes entry {} is out of range [{}, {}) for input shape {}", a, -r, r, shape_to_string(shape));
      if (reduced[*n]) ctx.fail("axes lists axis {} twice", a);
      reduced[*n] = true;
    }
    return reduced;
  }

  template <typename T>
  void run(KernelContext& ctx, const T* x, T* y) const {
    const Shape& s = ctx.input(0).shape();
    const std::vector<bool> reduced = reduced_axes(ctx, s);
    const size_t r = s.size();
    // Group strides: row-major over the kept axes, 0 on the reduced ones.
    std::vector<int64_t> gstride(r, 0);
    int64_t groups = 1;
    for (size_t d = r; d-- > 0;)
      if (!reduced[d]) {
        gstride[d] = groups;
        groups *= s[d];
      }
    const int64_t n = ctx.input(0).numel(), count = n / groups;
    std::vector<double> mean(groups, 0.0), dev(groups, 0.0);
    auto for_each = [&](auto&& body) {
      std::vector<int64_t> coord(r, 0);
      int64_t g = 0;
      for (int64_t i = 0; i < n; ++i) {
        body(i, g);
        for (size_t d = r; d-- > 0;) {  // odometer step, keeping g in sync
          if (++coord[d] < s[d]) {
            g += gstride[d];
            break;
          }
          g -= gstride[d] * (s[d] - 1);
          coord[d] = 0;
        }
      }
    };
    for_each([&](int64_t i, int64_t g) { mean[g] += x[i]; });
    for (double& m : mean) m /= static_cast<double>(count);
    for_each([&](int64_t i, int64_t g) { dev[g] += (x[i] - mean[g]) * (x[i] - mean[g]); });
    for (double& v : dev) v = 1.0 / (std::sqrt(v / static_cast<double>(count)) + kMvnEpsilon);
    for_each([&](int64_t i, int64_t g) { y[i] = static_cast<T>((x[i] - mean[g]) * dev[g]); });
  }

  std::vector<int64_t> axes_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("mean_variance_normalization", "", "MeanVarianceNormalization", 9, INT_MAX,
                         make_kernel<MeanVarianceNormalizationKernel>);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_mean_variance_normalization);
