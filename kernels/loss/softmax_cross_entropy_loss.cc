// SoftmaxCrossEntropyLoss (opsets 12-13): scores [N, C, d1..dk], labels
// [N, d1..dk] (int32 / int64), optional weights [C]; log_prob = log_softmax of
// the scores over axis 1 (the optional second output, same shape as the
// scores), then the NegativeLogLikelihoodLoss of log_prob (loss_common.h) with
// reduction none / sum / mean and ignore_index. float32, float64, float16,
// bfloat16 (halves computed in float32 and rounded once).
//
// Layout: for each (n, d) the C class scores are strided by D; the log-softmax
// makes two passes over them (max, then sum of exp) and a third to write.
// Fast path (float32, 2-D scores: D = 1, so each row of C scores is contiguous):
// rows split across threads; per row the SIMD table's max, then exp of
// (x - max) written into the log_prob row itself, its SIMD sum, and a last
// pass rewriting the row as x - max - log(sum) - no scratch buffer. The plain
// loops stay as the reference path (and serve D > 1 and float64).
#include <algorithm>
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/simd/f32_kernels.h"

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
    if constexpr (std::is_same_v<Acc, float>) {
      if (!ctx.reference_mode() && s.d == 1) log_softmax_rows_fast(ctx, scores, logp, s);
      else log_softmax_axis1(scores, logp, s);
    } else {
      log_softmax_axis1(scores, logp, s);
    }

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

  // The fast path of log_softmax_axis1 for D = 1 (see the file comment).
  static void log_softmax_rows_fast(const KernelContext& ctx, const float* x, float* logp, const LossShape& s) {
    const simd::F32Kernels& k = simd::f32_kernels();
    const int64_t c = s.c;
    parallel_for(ctx.threads(), s.n, std::max<int64_t>(1, 16384 / std::max<int64_t>(c, 1)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* row = x + r * c;
        float* out = logp + r * c;
        float mx = -INFINITY, sum = 0.f;
        if (k.reduce_rows[simd::kRowMax]) k.reduce_rows[simd::kRowMax](row, 1, c, &mx);
        else for (int64_t j = 0; j < c; ++j) mx = std::max(mx, row[j]);
        for (int64_t j = 0; j < c; ++j) out[j] = row[j] - mx;
        if (k.exp) k.exp(out, out, c);
        else for (int64_t j = 0; j < c; ++j) out[j] = std::exp(out[j]);
        if (k.reduce_rows[simd::kRowSum]) k.reduce_rows[simd::kRowSum](out, 1, c, &sum);
        else for (int64_t j = 0; j < c; ++j) sum += out[j];
        const float shift = mx + std::log(sum);
        for (int64_t j = 0; j < c; ++j) out[j] = row[j] - shift;
      }
    });
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
