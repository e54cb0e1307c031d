// Bernoulli (opsets 15, 22): y[i] = 1 with probability x[i], else 0. x is
// float32 / float64 / float16 / bfloat16 in [0, 1] (anything else, NaN
// included, fails naming the element); y has `dtype` (any numeric type or
// bool; default: x's dtype). Seeded nodes repeat on every run, unseeded ones
// draw a new stream per run (counter_rng.h): y[i] = u_i < x[i] with u_i the
// uniform of counter i, so the output does not depend on the thread count.
#include "core/thread_pool.h"
#include "kernels/random/counter_rng.h"
#include "kernels/registry.h"
#include "kernels/typed_store.h"
#include "kernels/vision/half_float.h"

namespace onnxmini {
namespace random {
namespace {

class BernoulliKernel : public Kernel {
 public:
  explicit BernoulliKernel(const KernelInfo& info) : seed_(info) {
    if (info.attrs.has("dtype")) dtype_ = output_dtype(info, info.attrs.get_int("dtype"), /*allow_bool=*/true);
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && !vision::is_half(t))
      ctx.unsupported("input dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(t));
    ctx.allocate_output(0, dtype_ == DType::Undefined ? t : dtype_, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    ctx.stats().variant = "bernoulli";
    Tensor wide;
    if (vision::is_half(x.dtype())) {
      wide = ctx.scratch(DType::Float32, x.shape());
      vision::widen_half(x, wide.mutable_data<float>());
    }
    const Tensor& p = wide.defined() ? wide : x;
    auto prob = [&](int64_t i) {
      return p.dtype() == DType::Float64 ? p.data<double>()[i] : static_cast<double>(p.data<float>()[i]);
    };
    for (int64_t i = 0; i < x.numel(); ++i)
      if (!(prob(i) >= 0.0 && prob(i) <= 1.0)) ctx.fail("probability [{}] = {} is outside [0, 1]", i, prob(i));
    const CounterRng rng(seed_.key());
    parallel_for(ctx.threads(), x.numel(), 16384, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
        store_number(y, i, rng.uniform(static_cast<uint64_t>(i)) < prob(i) ? 1.0 : 0.0);
    });
  }

 private:
  SeedAttr seed_;
  DType dtype_ = DType::Undefined;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("bernoulli", "", "Bernoulli", 15, INT_MAX, make_kernel<BernoulliKernel>);

}  // namespace random
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(random_bernoulli);
