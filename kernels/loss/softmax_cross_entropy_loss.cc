// SoftmaxCrossEntropyLoss (opsets 12-13): scores [N, C, d1..dk], labels
// [N, d1..dk] (int32 / int64), optional weights [C]; log_prob = log_softmax of
// the scores over axis 1 (the optional second output, same shape as the
// scores), then the NegativeLogLikelihoodLoss of log_prob (loss_common.h) with
// reduction none / sum / mean and ignore_index. float32, float64, float16,
// bfloat16 (halves computed in float32 and rounded once).
//
// Layout: for each (n, d) the C class scores are strided by D; the log-softmax
// makes two passes over them (max, then sum of exp) and a third to write.
#include <algorithm>
#include <cmath>

#include "kernels/loss/loss_common.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

using namespace loss;

class SoftmaxCrossEntropyLossKernel : public Kernel {
 public:
  explicit SoftmaxCrossEntropyLossKernel(const KernelInfo& info)
      : reduction_(parse_reduction(info)), ignore_index_(parse_ignore_index(info)) {
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const LossShape s = check_loss_shapes(ctx, x, ctx.input(1), ctx.has_input(2) ? &ctx.input(2) : nullptr, "scores");
    ctx.allocate_output(0, x.dtype(), reduction_ == Reduction::None ? s.unreduced : Shape{});
    if (ctx.output_wanted(1)) ctx.allocate_output(1, x.dtype(), x.shape());
  }

  void compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::Float64) run<double>(ctx);
    else run<float>(ctx);
  }

 private:
  template <typename Acc>
  void run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& target = ctx.input(1);
    const Tensor* weight = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const LossShape s = check_loss_shapes(ctx, x, target, weight, "scores");
    const DType compute_dtype = dtype_of<Acc>::value;
    Tensor x_wide, w_wide, logp_wide, out_wide;
    const Acc* scores = as_compute<Acc>(ctx, x, x_wide);
    const Acc* w = weight ? as_compute<Acc>(ctx, *weight, w_wide) : nullptr;

    // log_prob goes straight into output 1 when it is wanted and of the compute type.
    const bool logp_direct = ctx.output_wanted(1) && ctx.output(1).dtype() == compute_dtype;
    if (!logp_direct) logp_wide = ctx.scratch(compute_dtype, x.shape());
    Acc* logp = static_cast<Acc*>(logp_direct ? ctx.output(1).raw_mut() : logp_wide.raw_mut());
    log_softmax_axis1(scores, logp, s);

    Tensor& y = ctx.output(0);
    Acc* unreduced = nullptr;
    if (reduction_ == Reduction::None) {
      if (y.dtype() != compute_dtype) out_wide = ctx.scratch(compute_dtype, y.shape());
      unreduced = static_cast<Acc*>(y.dtype() == compute_dtype ? y.raw_mut() : out_wide.raw_mut());
    }
    const Acc r = nll<Acc>(ctx, logp, target, w, s, ignore_index_, reduction_, unreduced);
    if (reduction_ == Reduction::None) store<Acc>(unreduced, y);
    else store<Acc>(&r, y);
    if (ctx.output_wanted(1) && !logp_direct) store<Acc>(logp, ctx.output(1));
  }

  // logp[n, :, d] = x[n, :, d] - max - log(sum(exp(x[n, :, d] - max))).
  template <typename Acc>
  static void log_softmax_axis1(const Acc* x, Acc* logp, const LossShape& s) {
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t d = 0; d < s.d; ++d) {
        const Acc* row = x + n * s.c * s.d + d;
        Acc* out = logp + n * s.c * s.d + d;
        Acc mx = -INFINITY;
        for (int64_t c = 0; c < s.c; ++c) mx = std::max(mx, row[c * s.d]);
        Acc sum = 0;
        for (int64_t c = 0; c < s.c; ++c) sum += std::exp(row[c * s.d] - mx);
        const Acc shift = mx + std::log(sum);
        for (int64_t c = 0; c < s.c; ++c) out[c * s.d] = row[c * s.d] - shift;
      }
  }

  Reduction reduction_;
  std::optional<int64_t> ignore_index_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("softmax_cross_entropy_loss", "", "SoftmaxCrossEntropyLoss", 12, INT_MAX,
                         make_kernel<SoftmaxCrossEntropyLossKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(loss_softmax_cross_entropy_loss);
