// LpNormalization (opsets 1, 22): y = x / ||x||_p along `axis`, p = 1 or 2;
// float32, float64, and float16 / bfloat16 through float32 (half_float.h).
// A zero norm gives 0 (onnxruntime's rule; the plain formula would give NaN).
//
// Layout: x viewed as [outer, n, inner] around the axis. For one outer index
// the norms of its `inner` lines are accumulated in a double row of length
// inner while walking the n rows, so every pass reads memory contiguously;
// outer blocks are independent and split across threads.
#include <cmath>

#include "core/shape_util.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/vision/half_float.h"

namespace onnxmini {
namespace nn {
namespace {

class LpNormalizationKernel : public Kernel {
 public:
  explicit LpNormalizationKernel(const KernelInfo& info)
      : axis_(info.attrs.get_int("axis", -1)), p_(info.attrs.get_int("p", 2)) {
    if (p_ != 1 && p_ != 2) info.fail("p must be 1 or 2, got {}", p_);
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && !vision::is_half(t))
      ctx.unsupported("dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(t));
    const int64_t r = static_cast<int64_t>(x.rank());
    if (!normalize_axis(axis_, r)) ctx.fail("axis {} is out of range [{}, {}) for input shape {}", axis_, -r, r,
                                            shape_to_string(x.shape()));
    ctx.allocate_output(0, t, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    ctx.stats().flops = 3.0 * x.numel();
    ctx.stats().variant = ctx.reference_mode() ? "lpnorm_reference" : "lpnorm_rows";
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
  template <typename T>
  void run(KernelContext& ctx, const T* x, T* y) const {
    const Shape& s = ctx.input(0).shape();
    const int64_t axis = *normalize_axis(axis_, static_cast<int64_t>(s.size()));
    const int64_t outer = shape_product(s, 0, axis), n = s[axis], inner = shape_product(s, axis + 1, s.size());
    const int p = static_cast<int>(p_);
    parallel_for(ctx.reference_mode() ? nullptr : ctx.threads(), outer,
                 std::max<int64_t>(1, 8192 / std::max<int64_t>(1, n * inner)), [&](int64_t o0, int64_t o1) {
                   std::vector<double> norm(inner);
                   for (int64_t o = o0; o < o1; ++o) {
                     const T* xb = x + o * n * inner;
                     T* yb = y + o * n * inner;
                     std::fill(norm.begin(), norm.end(), 0.0);
                     for (int64_t k = 0; k < n; ++k)
                       for (int64_t i = 0; i < inner; ++i) {
                         const double v = xb[k * inner + i];
                         norm[i] += p == 1 ? std::fabs(v) : v * v;
                       }
                     for (int64_t i = 0; i < inner; ++i) {
                       const double len = p == 1 ? norm[i] : std::sqrt(norm[i]);
                       norm[i] = len == 0 ? 0.0 : 1.0 / len;
                     }
                     for (int64_t k = 0; k < n; ++k)
                       for (int64_t i = 0; i < inner; ++i)
                         yb[k * inner + i] = static_cast<T>(xb[k * inner + i] * norm[i]);
                   }
                 });
  }
  int64_t axis_, p_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("lp_normalization", "", "LpNormalization", 1, INT_MAX, make_kernel<LpNormalizationKernel>);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_lp_normalization);
