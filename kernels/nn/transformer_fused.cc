// The com.microsoft fused ops that onnxruntime's transformer optimizer writes
// (onnxruntime/python/tools/transformers): SkipLayerNormalization,
// SkipSimplifiedLayerNormalization, BiasGelu, FastGelu, and
// SimplifiedLayerNormalization (which onnxruntime registers in the ai.onnx
// domain, as here). float32 here; float16 / bfloat16 run through the
// half adapter (kernels/half), which keeps the statistics outputs float32 as
// onnxruntime's type constraint U says.
//
// Layout: the normalisations view input as rows x H (H = the last dimension,
// or prod(shape[axis:]) for SimplifiedLayerNormalization), each row contiguous;
// skip is either input's shape or one batch of it (its rows repeat), gamma /
// beta / bias have H elements. Statistics per row in double (two passes), rows
// split across threads. The Gelus are one flat element pass with the bias add
// fused, split across threads anywhere (the bias column follows the offset):
// on AVX2 / AVX-512 the SIMD Gelus of kernels/simd/erf_impl.h (the Gelu op's),
// on the portable level a scalar loop over std::erf / std::tanh.
#include <cmath>

#include "core/shape_util.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace nn {
namespace {

constexpr char kMs[] = "com.microsoft";

void require_float(const KernelContext& ctx, size_t i, const char* what) {
  if (ctx.input(i).dtype() != DType::Float32)
    ctx.unsupported("{} has dtype {}; supported: float, float16, bfloat16", what, dtype_name(ctx.input(i).dtype()));
}

// A parameter vector of H elements (gamma, beta, bias), or nullptr when absent.
const float* param_row(const KernelContext& ctx, size_t i, int64_t h, const char* what) {
  if (!ctx.has_input(i)) return nullptr;
  require_float(ctx, i, what);
  const Tensor& p = ctx.input(i);
  if (p.numel() != h) ctx.fail("{} has shape {}, expected {} elements (the hidden size)", what, shape_to_string(p.shape()), h);
  return p.data<float>();
}

void for_rows(KernelContext& ctx, int64_t rows, int64_t h, const std::function<void(int64_t, int64_t)>& fn) {
  ThreadPool* pool = ctx.reference_mode() ? nullptr : ctx.threads();
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(h, 1));
  if (pool && rows > grain) pool->parallel_for(rows, grain, fn);
  else fn(0, rows);
}

// y = (x - mean) * inv_std * gamma + beta over one row (simplified: no mean, RMS),
// statistics in double. Returns {mean, inv_std} of the row.
std::pair<float, float> normalize_row(const float* x, float* y, int64_t h, float epsilon, bool simplified,
                                      const float* gamma, const float* beta) {
  double mean = 0;
  if (!simplified) {
    for (int64_t j = 0; j < h; ++j) mean += x[j];
    mean /= static_cast<double>(h);
  }
  double var = 0;
  for (int64_t j = 0; j < h; ++j) {
    const double d = x[j] - mean;
    var += d * d;
  }
  var /= static_cast<double>(h);
  const double inv_std = 1.0 / std::sqrt(var + epsilon);
  for (int64_t j = 0; j < h; ++j) {
    const double v = (x[j] - mean) * inv_std * (gamma ? gamma[j] : 1.0f) + (beta ? beta[j] : 0.0f);
    y[j] = static_cast<float>(v);
  }
  return {static_cast<float>(mean), static_cast<float>(inv_std)};
}

// ---- SkipLayerNormalization / SkipSimplifiedLayerNormalization:
// sum = input + skip (+ bias); output = LayerNorm(sum) * gamma (+ beta), over the last axis.
// Inputs: input, skip, gamma, beta (not in the simplified form), bias. Outputs: output,
// mean, inv_std_var (shape[:-1] + 1), input_skip_bias_sum.
class SkipLayerNormKernel : public Kernel {
 public:
  SkipLayerNormKernel(const KernelInfo& info, bool simplified)
      : simplified_(simplified), epsilon_(info.attrs.get_float("epsilon", 1e-12f)) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_float(ctx, 0, "input");
    require_float(ctx, 1, "skip");
    if (x.rank() < 2) ctx.fail("input has shape {}, expected rank 2 or 3", shape_to_string(x.shape()));
    const int64_t h = x.shape().back();
    const Tensor& skip = ctx.input(1);
    if (skip.rank() == 0 || skip.shape().back() != h || h == 0 || x.numel() % skip.numel() != 0)
      ctx.fail("skip has shape {}, expected input's shape {} or one batch of it", shape_to_string(skip.shape()),
               shape_to_string(x.shape()));
    ctx.allocate_output(0, DType::Float32, x.shape());
    Shape stat = x.shape();
    stat.back() = 1;
    for (size_t i = 1; i < 3; ++i)
      if (ctx.output_wanted(i)) ctx.allocate_output(i, DType::Float32, stat);
    if (ctx.output_wanted(3)) ctx.allocate_output(3, DType::Float32, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t h = x.shape().back();
    const int64_t rows = x.numel() / h, skip_rows = ctx.input(1).numel() / h;
    const float* gamma = param_row(ctx, 2, h, "gamma");
    if (!gamma) ctx.fail("gamma is missing");
    const float* beta = simplified_ ? nullptr : param_row(ctx, 3, h, "beta");
    const float* bias = param_row(ctx, simplified_ ? 3 : 4, h, "bias");
    const float* px = x.data<float>();
    const float* ps = ctx.input(1).data<float>();
    float* py = ctx.output(0).mutable_data<float>();
    float* mean = ctx.output_wanted(1) ? ctx.output(1).mutable_data<float>() : nullptr;
    float* inv_std = ctx.output_wanted(2) ? ctx.output(2).mutable_data<float>() : nullptr;
    float* sum_out = ctx.output_wanted(3) ? ctx.output(3).mutable_data<float>() : nullptr;
    ctx.stats().flops = 8.0 * static_cast<double>(x.numel());
    for_rows(ctx, rows, h, [&](int64_t r0, int64_t r1) {
      std::vector<float> sum(sum_out ? 0 : static_cast<size_t>(h));
      for (int64_t r = r0; r < r1; ++r) {
        float* s = sum_out ? sum_out + r * h : sum.data();
        const float* xr = px + r * h;
        const float* sr = ps + (r % skip_rows) * h;
        for (int64_t j = 0; j < h; ++j) s[j] = xr[j] + sr[j] + (bias ? bias[j] : 0.0f);
        const auto [m, is] = normalize_row(s, py + r * h, h, epsilon_, simplified_, gamma, beta);
        if (mean) mean[r] = m;
        if (inv_std) inv_std[r] = is;
      }
    });
  }

 private:
  bool simplified_;
  float epsilon_;
};

// ---- SimplifiedLayerNormalization (RMS norm): Y = X / sqrt(mean(X^2) + epsilon) * scale,
// over shape[axis:]; output 1 is inv_std_var (shape[:axis] + 1s).
class SimplifiedLayerNormKernel : public Kernel {
 public:
  explicit SimplifiedLayerNormKernel(const KernelInfo& info)
      : axis_(info.attrs.get_int("axis", -1)), epsilon_(info.attrs.get_float("epsilon", 1e-5f)) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_float(ctx, 0, "X");
    const int64_t rank = static_cast<int64_t>(x.rank());
    const auto axis = normalize_axis(axis_, rank);
    if (!axis) ctx.fail("axis {} is out of range [{}, {})", axis_, -rank, rank);
    ctx.allocate_output(0, DType::Float32, x.shape());
    Shape stat(x.shape().begin(), x.shape().begin() + *axis);
    stat.resize(x.rank(), 1);
    if (ctx.output_wanted(1)) ctx.allocate_output(1, DType::Float32, stat);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = *normalize_axis(axis_, static_cast<int64_t>(x.rank()));
    const int64_t h = shape_product(x.shape(), axis, x.rank());
    const int64_t rows = h == 0 ? 0 : x.numel() / h;
    const float* scale = param_row(ctx, 1, h, "scale");
    if (!scale) ctx.fail("scale is missing");
    const float* px = x.data<float>();
    float* py = ctx.output(0).mutable_data<float>();
    float* inv_std = ctx.output_wanted(1) ? ctx.output(1).mutable_data<float>() : nullptr;
    ctx.stats().flops = 4.0 * static_cast<double>(x.numel());
    for_rows(ctx, rows, h, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const auto stats = normalize_row(px + r * h, py + r * h, h, epsilon_, true, scale, nullptr);
        if (inv_std) inv_std[r] = stats.second;
      }
    });
  }

 private:
  int64_t axis_;
  float epsilon_;
};

// ---- BiasGelu: gelu(A + B), exact (erf); FastGelu: the tanh approximation of
// gelu(X + bias), 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). B / bias have
// the last dimension's size (a scalar too).
class GeluKernel : public Kernel {
 public:
  GeluKernel(const KernelInfo&, bool fast) : fast_(fast) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_float(ctx, 0, fast_ ? "X" : "A");
    if (ctx.has_input(1)) {
      require_float(ctx, 1, fast_ ? "bias" : "B");
      const int64_t b = ctx.input(1).numel();
      if (x.rank() == 0 || (b != 1 && b != x.shape().back()))
        ctx.fail("{} has shape {}, expected the last dimension of {}", fast_ ? "bias" : "B",
                 shape_to_string(ctx.input(1).shape()), shape_to_string(x.shape()));
    } else if (!fast_) {
      ctx.fail("B is missing");
    }
    ctx.allocate_output(0, DType::Float32, x.shape());
  }

  KernelPlan describe(const KernelInfo&, const std::vector<const Shape*>&) const override {
    const simd::F32Kernels& k = simd::f32_kernels();
    if (!(fast_ ? k.gelu_tanh_bias : k.gelu_erf_bias)) return KernelPlan{"gelu_loop", "portable", ""};
    return KernelPlan{"gelu_simd", cpu::isa_name(k.isa), ""};
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const float* px = x.data<float>();
    const float* bias = ctx.has_input(1) ? ctx.input(1).data<float>() : nullptr;
    const int64_t nb = bias ? ctx.input(1).numel() : 1;
    float* py = ctx.output(0).mutable_data<float>();
    const bool fast = fast_;
    ctx.stats().flops = 10.0 * static_cast<double>(x.numel());
    ThreadPool* pool = ctx.reference_mode() ? nullptr : ctx.threads();
    // Grain: 16K elements is ~10-20 us of SIMD Gelu (0.5-1 ns per element on one
    // core), long enough to pay for a task, short enough to spread [64, 3072] over cores.
    const simd::F32Kernels& k = simd::f32_kernels();
    const simd::BiasUnaryFn simd_fn = ctx.reference_mode() ? nullptr : fast ? k.gelu_tanh_bias : k.gelu_erf_bias;
    if (simd_fn) {
      const float zero = 0.0f;
      const float* b = bias ? bias : &zero;
      auto body = [&](int64_t s, int64_t e) { simd_fn(px + s, b, nb, s % nb, py + s, e - s); };
      parallel_for(pool, x.numel(), 16384, body);
      ctx.stats().variant = "gelu_simd";
      ctx.stats().isa = cpu::isa_name(k.isa);
      return;
    }
    auto body = [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float v = px[i] + (bias ? bias[i % nb] : 0.0f);
        if (fast) {
          const float inner = 0.7978845608028654f * (v + 0.044715f * v * v * v);
          py[i] = 0.5f * v * (1.0f + std::tanh(inner));
        } else {
          py[i] = 0.5f * v * (1.0f + std::erf(v * 0.7071067811865476f));
        }
      }
    };
    if (pool && x.numel() > 65536) pool->parallel_for(x.numel(), 32768, body);
    else body(0, x.numel());
    if (!ctx.reference_mode()) ctx.stats().variant = "gelu_loop";
  }

 private:
  bool fast_;
};

std::unique_ptr<Kernel> make_skip_layer_norm(const KernelInfo& info) {
  return std::make_unique<SkipLayerNormKernel>(info, false);
}
std::unique_ptr<Kernel> make_skip_simplified_layer_norm(const KernelInfo& info) {
  return std::make_unique<SkipLayerNormKernel>(info, true);
}
std::unique_ptr<Kernel> make_bias_gelu(const KernelInfo& info) { return std::make_unique<GeluKernel>(info, false); }
std::unique_ptr<Kernel> make_fast_gelu(const KernelInfo& info) { return std::make_unique<GeluKernel>(info, true); }

}  // namespace

ONNXMINI_REGISTER_KERNEL("transformer_fused", kMs, "SkipLayerNormalization", 1, INT_MAX, make_skip_layer_norm);
ONNXMINI_REGISTER_KERNEL("transformer_fused", kMs, "SkipSimplifiedLayerNormalization", 1, INT_MAX,
                         make_skip_simplified_layer_norm);
ONNXMINI_REGISTER_KERNEL("transformer_fused", kMs, "BiasGelu", 1, INT_MAX, make_bias_gelu);
ONNXMINI_REGISTER_KERNEL("transformer_fused", kMs, "FastGelu", 1, INT_MAX, make_fast_gelu);
ONNXMINI_REGISTER_KERNEL("transformer_fused", "", "SimplifiedLayerNormalization", 1, INT_MAX,
                         make_kernel<SimplifiedLayerNormKernel>);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_transformer_fused);
