// RandomUniform, RandomNormal (opsets 1, 22): a tensor of the `shape`
// attribute; RandomUniformLike, RandomNormalLike (1, 22): shaped as the input
// (whose values are not read). dtype: float32 (default for the plain ops),
// float64, float16, bfloat16; the Like ops default to the input's dtype.
// Uniform in [low, high) (default [0, 1)), normal with `mean` and `scale`.
// Seeded nodes repeat their output on every run; unseeded ones draw a new
// stream per run (counter_rng.h). Values are computed in double and rounded
// once to the output type; a float32 uniform that rounds up to `high` is
// moved to the float just below it, so the interval stays half-open.
//
// Layout: element i is a function of (stream key, i) only, so the output is
// filled in parallel blocks and does not depend on the thread count.
#include <algorithm>
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/random/counter_rng.h"
#include "kernels/registry.h"
#include "kernels/typed_store.h"

namespace onnxmini {
namespace random {
namespace {

enum class Distribution { Uniform, Normal };

bool is_random_float(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}

class RandomKernel : public Kernel {
 public:
  RandomKernel(const KernelInfo& info, Distribution dist, bool like)
      : dist_(dist), like_(like), seed_(info) {
    if (dist == Distribution::Uniform) {
      a_ = info.attrs.get_float("low", 0.f);
      b_ = info.attrs.get_float("high", 1.f);
      if (!(b_ >= a_) || !std::isfinite(a_) || !std::isfinite(b_))
        info.fail("want finite low <= high, got low {} and high {}", a_, b_);
    } else {
      a_ = info.attrs.get_float("mean", 0.f);
      b_ = info.attrs.get_float("scale", 1.f);
      if (!std::isfinite(a_) || !std::isfinite(b_)) info.fail("mean {} and scale {} must be finite", a_, b_);
    }
    if (info.attrs.has("dtype") || !like) {
      dtype_ = static_cast<DType>(info.attrs.get_int("dtype", 1));
      if (!is_random_float(dtype_))
        info.fail("dtype {} is not supported (float32, float64, float16, bfloat16)", info.attrs.get_int("dtype", 1));
    }
    if (!like) {
      shape_ = info.attrs.get_ints("shape");
      for (int64_t d : shape_)
        if (d < 0) info.fail("shape [{}] has a negative dimension", fmt::join(shape_, ","));
    }
  }

  void prepare(KernelContext& ctx) override {
    DType t = dtype_;
    Shape shape = shape_;
    if (like_) {
      const Tensor& x = ctx.input(0);
      shape = x.shape();
      if (t == DType::Undefined) t = x.dtype();
      if (!is_random_float(t))
        ctx.fail("the input's dtype {} is not a float type and the node has no dtype attribute",
                 dtype_name(x.dtype()));
    }
    ctx.check_tensor_size(t, shape, "output");
    ctx.allocate_output(0, t, shape);
  }

  void compute(KernelContext& ctx) override {
    Tensor& y = ctx.output(0);
    const CounterRng rng(seed_.key());
    ctx.stats().variant = dist_ == Distribution::Uniform ? "random_uniform" : "random_normal";
    const double a = a_, b = b_;
    const bool uniform = dist_ == Distribution::Uniform;
    auto value = [&](int64_t i) {
      return uniform ? a + (b - a) * rng.uniform(static_cast<uint64_t>(i)) : a + b * rng.normal(static_cast<uint64_t>(i));
    };
    parallel_for(ctx.threads(), y.numel(), 16384, [&](int64_t i0, int64_t i1) {
      if (y.dtype() == DType::Float64) {
        double* out = y.mutable_data<double>();
        for (int64_t i = i0; i < i1; ++i) out[i] = value(i);
      } else if (y.dtype() == DType::Float32) {
        float* out = y.mutable_data<float>();
        const float hi = static_cast<float>(b);
        for (int64_t i = i0; i < i1; ++i) {
          float v = static_cast<float>(value(i));
          if (uniform && v >= hi && b > a) v = std::nextafter(hi, static_cast<float>(a));
          out[i] = v;
        }
      } else {
        for (int64_t i = i0; i < i1; ++i) store_number(y, i, value(i));  // half types: rounded once
      }
    });
  }

 private:
  Distribution dist_;
  bool like_;
  SeedAttr seed_;
  float a_ = 0, b_ = 1;  // low / high, or mean / scale
  DType dtype_ = DType::Undefined;
  Shape shape_;
};

template <Distribution kDist, bool kLike>
std::unique_ptr<Kernel> make_random(const KernelInfo& info) {
  return std::make_unique<RandomKernel>(info, kDist, kLike);
}

}  // namespace

ONNXMINI_REGISTER_KERNEL("random", "", "RandomUniform", 1, INT_MAX, (make_random<Distribution::Uniform, false>));
ONNXMINI_REGISTER_KERNEL("random", "", "RandomNormal", 1, INT_MAX, (make_random<Distribution::Normal, false>));
ONNXMINI_REGISTER_KERNEL("random", "", "RandomUniformLike", 1, INT_MAX, (make_random<Distribution::Uniform, true>));
ONNXMINI_REGISTER_KERNEL("random", "", "RandomNormalLike", 1, INT_MAX, (make_random<Distribution::Normal, true>));

}  // namespace random
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(random_random_distributions);
