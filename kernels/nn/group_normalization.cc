// GroupNormalization (opsets 18, 21): the C channels of X [N, C, D1..Dk] are
// split into num_groups groups of C / num_groups channels; each (n, group) is
// normalised by its own mean and variance, then scaled and shifted:
//   opset 18: scale / bias have one entry per group,
//   opset 21: one entry per channel (and stash_type: 1 = float32 statistics,
//             the only value onnxruntime implements; we accumulate in double).
// float32, float64, float16 / bfloat16 (through float32).
//
// Layout: the channels of one (n, group) are adjacent, so a group is one
// contiguous block of (C / G) * prod(D) elements: two passes over it (mean,
// then squared deviations, in double), then y = x * a[c] + b[c] with a, b
// folded per channel. (n, group) blocks are split across threads.
#include <cmath>

#include "core/shape_util.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/vision/half_float.h"

namespace onnxmini {
namespace nn {
namespace {

class GroupNormalizationKernel : public Kernel {
 public:
  explicit GroupNormalizationKernel(const KernelInfo& info)
      : epsilon_(info.attrs.get_float("epsilon", 1e-5f)),
        groups_(info.attrs.get_int("num_groups")),
        per_channel_(info.opset >= 21) {
    if (groups_ < 1) info.fail("num_groups must be positive, got {}", groups_);
    const int64_t stash = info.attrs.get_int("stash_type", 1);
    if (stash != 1) info.unsupported("stash_type {} is not supported (1: float32 statistics)", stash);
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && !vision::is_half(t))
      ctx.unsupported("dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(t));
    if (x.rank() < 2) ctx.fail("X has shape {}, expected N x C [x D1 ...]", shape_to_string(x.shape()));
    const int64_t C = x.dim(1);
    if (C % groups_ != 0) ctx.fail("the {} channels of X do not split into num_groups = {} groups", C, groups_);
    const int64_t want = per_channel_ ? C : groups_;
    static const char* names[] = {"X", "scale", "bias"};
    for (size_t i = 1; i < 3; ++i) {
      const Tensor& p = ctx.input(i);
      if (p.dtype() != t) ctx.fail("{} has dtype {}, X has {}", names[i], dtype_name(p.dtype()), dtype_name(t));
      if (p.rank() != 1 || p.dim(0) != want)
        ctx.fail("{} has shape {}, expected [{}] (one per {} at opset {})", names[i], shape_to_string(p.shape()), want,
                 per_channel_ ? "channel" : "group", ctx.info().opset);
    }
    ctx.allocate_output(0, t, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    ctx.stats().flops = 5.0 * x.numel();
    ctx.stats().variant = ctx.reference_mode() ? "groupnorm_reference" : "groupnorm_blocks";
    if (x.numel() == 0) return;
    if (x.dtype() == DType::Float32) {
      run(ctx, x.data<float>(), ctx.input(1).data<float>(), ctx.input(2).data<float>(),
          ctx.output(0).mutable_data<float>());
    } else if (x.dtype() == DType::Float64) {
      run(ctx, x.data<double>(), ctx.input(1).data<double>(), ctx.input(2).data<double>(),
          ctx.output(0).mutable_data<double>());
    } else {
      Tensor xf = ctx.scratch(DType::Float32, x.shape()), yf = ctx.scratch(DType::Float32, x.shape());
      Tensor sf = ctx.scratch(DType::Float32, ctx.input(1).shape()), bf = ctx.scratch(DType::Float32, ctx.input(2).shape());
      vision::widen_half(x, xf.mutable_data<float>());
      vision::widen_half(ctx.input(1), sf.mutable_data<float>());
      vision::widen_half(ctx.input(2), bf.mutable_data<float>());
      run(ctx, xf.data<float>(), sf.data<float>(), bf.data<float>(), yf.mutable_data<float>());
      vision::narrow_to_half(yf.data<float>(), ctx.output(0));
    }
  }

 private:
  template <typename T>
  void run(KernelContext& ctx, const T* x, const T* scale, const T* bias, T* y) const {
    const Tensor& xt = ctx.input(0);
    const int64_t N = xt.dim(0), C = xt.dim(1), S = shape_product(xt.shape(), 2, xt.rank());
    const int64_t cpg = C / groups_, block = cpg * S;
    parallel_for(ctx.reference_mode() ? nullptr : ctx.threads(), N * groups_,
                 std::max<int64_t>(1, 8192 / std::max<int64_t>(1, block)), [&](int64_t b0, int64_t b1) {
                   for (int64_t b = b0; b < b1; ++b) {
                     const int64_t g = b % groups_;
                     const T* xb = x + b * block;
                     T* yb = y + b * block;
                     double mean = 0, var = 0;
                     for (int64_t i = 0; i < block; ++i) mean += xb[i];
                     mean /= static_cast<double>(block);
                     for (int64_t i = 0; i < block; ++i) var += (xb[i] - mean) * (xb[i] - mean);
                     const double inv = 1.0 / std::sqrt(var / static_cast<double>(block) + epsilon_);
                     for (int64_t c = 0; c < cpg; ++c) {
                       const int64_t p = per_channel_ ? g * cpg + c : g;
                       const double a = inv * scale[p], sh = bias[p] - mean * a;
                       for (int64_t s = 0; s < S; ++s) yb[c * S + s] = static_cast<T>(xb[c * S + s] * a + sh);
                     }
                   }
                 });
  }
  float epsilon_;
  int64_t groups_;
  bool per_channel_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("group_normalization", "", "GroupNormalization", 18, INT_MAX,
                         make_kernel<GroupNormalizationKernel>);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_group_normalization);
