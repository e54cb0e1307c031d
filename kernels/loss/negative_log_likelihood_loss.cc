// NegativeLogLikelihoodLoss (opsets 12-22): input [N, C, d1..dk] holds
// log-probabilities, target [N, d1..dk] class indices (int32 / int64), the
// optional weight [C] scales each class; reduction none / sum / mean (mean
// divides by the summed weights of the targets that are not ignore_index).
// float32, float64, float16, bfloat16 (halves computed in float32).
// Layout and the shared loop: loss_common.h.
#include "kernels/loss/loss_common.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

using namespace loss;

class NegativeLogLikelihoodLossKernel : public Kernel {
 public:
  explicit NegativeLogLikelihoodLossKernel(const KernelInfo& info)
      : reduction_(parse_reduction(info)), ignore_index_(parse_ignore_index(info)) {
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const LossShape s = check_loss_shapes(ctx, x, ctx.input(1), ctx.has_input(2) ? &ctx.input(2) : nullptr, "input");
    ctx.allocate_output(0, x.dtype(), reduction_ == Reduction::None ? s.unreduced : Shape{});
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
    const LossShape s = check_loss_shapes(ctx, x, target, weight, "input");
    Tensor x_wide, w_wide, out_wide;
    const Acc* logp = as_compute<Acc>(ctx, x, x_wide);
    const Acc* w = weight ? as_compute<Acc>(ctx, *weight, w_wide) : nullptr;
    Tensor& y = ctx.output(0);
    const bool direct = y.dtype() == dtype_of<Acc>::value;
    Acc* unreduced = nullptr;
    if (reduction_ == Reduction::None) {
      if (direct) {
        unreduced = y.mutable_data<Acc>();
      } else {
        out_wide = ctx.scratch(DType::Float32, y.shape());
        unreduced = reinterpret_cast<Acc*>(out_wide.mutable_data<float>());
      }
    }
    const Acc r = nll<Acc>(ctx, logp, target, w, s, ignore_index_, reduction_, unreduced);
    if (reduction_ == Reduction::None) store<Acc>(unreduced, y);
    else store<Acc>(&r, y);
  }

  Reduction reduction_;
  std::optional<int64_t> ignore_index_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("negative_log_likelihood_loss", "", "NegativeLogLikelihoodLoss", 12, INT_MAX,
                         make_kernel<NegativeLogLikelihoodLossKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(loss_negative_log_likelihood_loss);
