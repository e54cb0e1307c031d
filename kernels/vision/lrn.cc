// LRN (opsets 1-23): local response normalization across channels, float32.
//   y[n,c,s] = x[n,c,s] / (bias + alpha/size * sum_{c' in window(c)} x[n,c',s]²)^beta
// with window(c) = [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
//
// Rows (n, c) are independent and split across threads; each row first sums
// its window of squared input rows into its own output row (no scratch to
// allocate), then divides, so the inner loops run along the contiguous
// spatial axis.
#include <algorithm>
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/registry.h"

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
    info.require_dtype(0, {DType::Float32});
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32) ctx.unsupported("input dtype {} is not supported (float32 only)", dtype_name(x.dtype()));
    if (x.rank() < 2) ctx.fail("input must have rank >= 2 [N, C, ...], got shape {}", shape_to_string(x.shape()));
    ctx.allocate_output(0, x.dtype(), x.shape());
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.numel() == 0) return;
    const int64_t channels = x.dim(1);
    const int64_t spatial = x.numel() / (x.dim(0) * channels);
    const int64_t below = (size_ - 1) / 2, above = size_ - 1 - below;  // floor / ceil of (size-1)/2
    const float* in = x.data<float>();
    float* out = y.mutable_data<float>();
    const float scale = alpha_ / static_cast<float>(size_);
    const int64_t rows = x.dim(0) * channels;
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, spatial * size_));
    parallel_for(ctx.threads(), rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t n = row / channels, c = row % channels;
        float* sum = out + row * spatial;  // the window's sum of squares, then the result
        std::fill(sum, sum + spatial, 0.f);
        const int64_t lo = std::max<int64_t>(0, c - below), hi = std::min(channels - 1, c + above);
        for (int64_t k = lo; k <= hi; ++k) {
          const float* xk = in + (n * channels + k) * spatial;
          for (int64_t s = 0; s < spatial; ++s) sum[s] += xk[s] * xk[s];
        }
        const float* xr = in + row * spatial;
        for (int64_t s = 0; s < spatial; ++s) sum[s] = xr[s] / std::pow(bias_ + scale * sum[s], beta_);
      }
    });
  }

 private:
  int64_t size_;
  float alpha_, beta_, bias_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("lrn", "", "LRN", 1, INT_MAX, make_kernel<LrnKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(vision_lrn);
