// LRN (opsets 1-23): local response normalization across channels; float32,
// float64, and float16 / bfloat16 computed in float32 (half_float.h).
//   y[n,c,s] = x[n,c,s] / (bias + alpha/size * sum_{c' in window(c)} x[n,c',s]²)^beta
// with window(c) = [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
//
// Rows (n, c) are independent and split across threads; each row first sums
// its window of squared input rows into its own output row (no scratch to
// allocate), then divides, so the inner loops run along the contiguous
// spatial axis.
#include <algorithm>
#include <cmath>

#include "core/checked_math.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/vision/half_float.h"

namespace onnxmini {

namespace {

class LrnKernel : public Kernel {
 public:
  explicit LrnKernel(const KernelInfo& info)
      : size_(info.attrs.get_int("size", 0)),
        alpha_(info.attrs.get_float("alpha", 1e-4f)),
        beta_(info.attrs.get_float("beta", 0.75f)),
        bias_(info.attrs.get_float("bias", 1.0f)) {
    if (size_ < 1) info.fail("size must be a positive integer, got {}", size_);
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && !vision::is_half(t))
      ctx.unsupported("input dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(t));
    if (x.rank() < 2) ctx.fail("input must have rank >= 2 [N, C, ...], got shape {}", shape_to_string(x.shape()));
    ctx.allocate_output(0, x.dtype(), x.shape());
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.numel() == 0) return;
    if (x.dtype() == DType::Float32) {
      normalize<float>(ctx, x, x.data<float>(), y.mutable_data<float>());
    } else if (x.dtype() == DType::Float64) {
      normalize<double>(ctx, x, x.data<double>(), y.mutable_data<double>());
    } else {  // float16 / bfloat16: widen, normalize in float32, round once
      Tensor wide_x = ctx.scratch(DType::Float32, x.shape()), wide_y = ctx.scratch(DType::Float32, x.shape());
      vision::widen_half(x, wide_x.mutable_data<float>());
      normalize<float>(ctx, x, wide_x.data<float>(), wide_y.mutable_data<float>());
      vision::narrow_to_half(wide_y.data<float>(), y);
    }
  }

 private:
  // out = LRN(in), both laid out as x ([N, C, spatial...], contiguous), in T arithmetic.
  template <typename T>
  void normalize(const KernelContext& ctx, const Tensor& x, const T* in, T* out) const {
    const int64_t channels = x.dim(1);
    const int64_t spatial = x.numel() / (x.dim(0) * channels);
    const int64_t below = (size_ - 1) / 2, above = size_ - 1 - below;  // floor / ceil of (size-1)/2
    const T scale = static_cast<T>(alpha_) / static_cast<T>(size_), bias = bias_, beta = beta_;
    const int64_t rows = x.dim(0) * channels;
    // size comes from the model: the product saturates instead of wrapping (it only sizes the work grain).
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, try_mul(spatial, size_).value_or(INT64_MAX)));
    parallel_for(ctx.threads(), rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t n = row / channels, c = row % channels;
        T* sum = out + row * spatial;  // the window's sum of squares, then the result
        std::fill(sum, sum + spatial, T(0));
        const int64_t lo = std::max<int64_t>(0, c - below), hi = std::min(channels - 1, c + above);
        for (int64_t k = lo; k <= hi; ++k) {
          const T* xk = in + (n * channels + k) * spatial;
          for (int64_t s = 0; s < spatial; ++s) sum[s] += xk[s] * xk[s];
        }
        const T* xr = in + row * spatial;
        for (int64_t s = 0; s < spatial; ++s) sum[s] = xr[s] / std::pow(bias + scale * sum[s], beta);
      }
    });
  }

  int64_t size_;
  float alpha_, beta_, bias_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("lrn", "", "LRN", 1, INT_MAX, make_kernel<LrnKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(vision_lrn);
