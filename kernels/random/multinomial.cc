// Multinomial (opsets 7, 22): x [batch, classes] holds unnormalised log
// probabilities; each row draws sample_size (default 1) class indices with
// probabilities softmax(row). Output [batch, sample_size] of `dtype` int32
// (default) or int64. x: float32 / float64 / float16 / bfloat16; -inf means
// probability 0; NaN, +inf or a row with no finite entry fails naming the row.
// Seeded nodes repeat on every run (counter_rng.h).
//
// Layout: per row, the cumulative weights exp(x - max) are built once in
// double (scratch of `classes` doubles per thread); each sample then takes the
// uniform of counter (row * sample_size + s), scales it by the total and
// binary-searches the cumulative row: O(classes + samples log classes).
// Rows are split across threads.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/thread_pool.h"
#include "kernels/random/counter_rng.h"
#include "kernels/registry.h"
#include "kernels/vision/half_float.h"

namespace onnxmini {
namespace random {
namespace {

class MultinomialKernel : public Kernel {
 public:
  explicit MultinomialKernel(const KernelInfo& info)
      : seed_(info),
        samples_(info.attrs.get_int("sample_size", 1)),
        dtype_(static_cast<DType>(info.attrs.get_int("dtype", 6))) {
    if (dtype_ != DType::Int32 && dtype_ != DType::Int64)
      info.fail("dtype {} is not supported (int32 or int64)", info.attrs.get_int("dtype", 6));
    if (samples_ < 1) info.fail("sample_size must be positive, got {}", samples_);
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && !vision::is_half(t))
      ctx.unsupported("input dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(t));
    if (x.rank() != 2) ctx.fail("input has shape {}, want [batch_size, class_size]", shape_to_string(x.shape()));
    if (x.dim(1) < 1 && x.dim(0) > 0) ctx.fail("input has no classes (shape {})", shape_to_string(x.shape()));
    ctx.allocate_output(0, dtype_, {x.dim(0), samples_});
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    ctx.stats().variant = "multinomial_cdf";
    Tensor wide;
    if (vision::is_half(x.dtype())) {
      wide = ctx.scratch(DType::Float32, x.shape());
      vision::widen_half(x, wide.mutable_data<float>());
    }
    const Tensor& logits = wide.defined() ? wide : x;
    const int64_t batch = x.dim(0), classes = x.dim(1);
    // Checked before the threads start (a worker must not throw).
    for (int64_t b = 0; b < batch; ++b) {
      double top = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < classes; ++c) {
        const int64_t i = b * classes + c;
        const double v = logits.dtype() == DType::Float64 ? logits.data<double>()[i] : logits.data<float>()[i];
        if (std::isnan(v) || v == std::numeric_limits<double>::infinity())
          ctx.fail("row {} class {} has log-probability {}", b, c, v);
        top = std::max(top, v);
      }
      if (!std::isfinite(top)) ctx.fail("row {} has no finite log-probability (all -inf)", b);
    }
    const CounterRng rng(seed_.key());
    parallel_for(ctx.threads(), batch, 1, [&](int64_t b0, int64_t b1) {
      std::vector<double> cdf(classes);
      for (int64_t b = b0; b < b1; ++b) {
        auto logit = [&](int64_t c) {
          const int64_t i = b * classes + c;
          return logits.dtype() == DType::Float64 ? logits.data<double>()[i]
                                                  : static_cast<double>(logits.data<float>()[i]);
        };
        double top = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < classes; ++c) top = std::max(top, logit(c));  // finite: checked above
        double total = 0;
        for (int64_t c = 0; c < classes; ++c) cdf[c] = total += std::exp(logit(c) - top);
        for (int64_t s = 0; s < samples_; ++s) {
          const double target = rng.uniform(static_cast<uint64_t>(b * samples_ + s)) * total;
          // First class whose cumulative weight exceeds the target; clamp for rounding at the top.
          int64_t c = std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin();
          c = std::min(c, classes - 1);
          if (y.dtype() == DType::Int32) y.mutable_data<int32_t>()[b * samples_ + s] = static_cast<int32_t>(c);
          else y.mutable_data<int64_t>()[b * samples_ + s] = c;
        }
      }
    });
  }

 private:
  SeedAttr seed_;
  int64_t samples_;
  DType dtype_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("multinomial", "", "Multinomial", 7, INT_MAX, make_kernel<MultinomialKernel>);

}  // namespace random
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(random_multinomial);
