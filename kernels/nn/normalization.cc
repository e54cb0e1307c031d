// BatchNormalization (inference), InstanceNormalization, LayerNormalization;
// float32 and float64 (LayerNormalization also float16 / bfloat16: converted
// to float32, normalised there, rounded back; Mean / InvStdDev then float32,
// the default stash_type).
//
// Layout: X is N x C x D1..Dk (BatchNorm / InstanceNorm: per channel c,
// "spatial" = the D block of one (n, c) plane, contiguous). LayerNorm views X
// as rows x cols, rows = prod(shape[:axis]), cols = prod(shape[axis:]), and
// normalises each contiguous row.
// Statistics are accumulated in double (two passes: mean, then variance), so
// the reference and fast paths differ only in threading and in folding
// scale/shift into one multiply-add per element; except LayerNormalization's
// float32 fast path (layer_norm_rows_f32: float32 SIMD row sums, as the
// decomposed graph it replaces computes them).
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/aligned_vector.h"
#include "core/float16.h"
#include "core/shape_util.h"
#include "kernels/registry.h"
#include "core/thread_pool.h"
#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace nn {
namespace {

bool is_float(DType t) { return t == DType::Float32 || t == DType::Float64; }
bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// float16 / bfloat16 tensor -> float32 tensor of the same shape, and back.
Tensor half_to_f32(KernelContext& ctx, const Tensor& t) {
  Tensor f = ctx.scratch(DType::Float32, t.shape());
  const uint16_t* src = static_cast<const uint16_t*>(t.raw());
  float* dst = f.mutable_data<float>();
  const bool bf = t.dtype() == DType::BFloat16;
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = bf ? bfloat16_to_float(src[i]) : half_to_float(src[i]);
  return f;
}
void f32_to_half(const Tensor& f, Tensor& t) {
  const float* src = f.data<float>();
  uint16_t* dst = static_cast<uint16_t*>(t.raw_mut());
  const bool bf = t.dtype() == DType::BFloat16;
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = bf ? float_to_bfloat16(src[i]) : float_to_half(src[i]);
}

// ---- BatchNormalization: y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + B[c]
// Before opset 9, spatial = 0 gives per-element (C x D1..Dk) statistics.
// Opsets 1-6 also carry is_test, momentum and (1-5) consumed_inputs; their spec picks test
// mode by the outputs ("Output case #2: Y (test mode)"), as opset 7+ does, so a node with
// only Y runs in inference whatever is_test says, and the training outputs are refused below.
class BatchNormKernel : public Kernel {
 public:
  explicit BatchNormKernel(const KernelInfo& info)
      : epsilon_(info.attrs.get_float("epsilon", 1e-5f)), spatial_(info.opset < 9 ? info.attrs.get_int("spatial", 1) != 0 : true) {
    // Opset 14+: training_mode = 1 normalises with the batch's statistics and may output the
    // updated running mean / var. The opset 1-13 training outputs (saved statistics) are refused.
    training_ = info.opset >= 14 && info.attrs.get_int("training_mode", 0) != 0;
    momentum_ = info.attrs.get_float("momentum", 0.9f);
    for (size_t i = 1; i < info.num_outputs; ++i)
      if (i < info.output_present.size() && info.output_present[i] && !training_)
        info.unsupported(info.opset >= 14 ? "running mean / var outputs need training_mode = 1"
                                          : "training outputs (running mean / var, saved statistics) of opsets 1-13 are "
                                            "not supported; inference only");
  }
  KernelPlan describe(const KernelInfo&, const std::vector<const Shape*>&) const override {
    return KernelPlan{"batchnorm_affine", "portable", ""};
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (!is_float(x.dtype())) ctx.unsupported("dtype {} is not supported (float, double)", dtype_name(x.dtype()));
    if (x.rank() < 2) ctx.fail("input has shape {}, expected N x C [x D1 ...]", shape_to_string(x.shape()));
    const Shape expect = spatial_ ? Shape{x.dim(1)} : Shape(x.shape().begin() + 1, x.shape().end());
    static const char* names[] = {"X", "scale", "B", "mean", "var"};
    for (size_t i = 1; i < 5; ++i) {
      const Tensor& p = ctx.input(i);
      if (p.dtype() != x.dtype()) ctx.fail("{} has dtype {}, input has {}", names[i], dtype_name(p.dtype()), dtype_name(x.dtype()));
      if (p.numel() != shape_numel(expect))
        ctx.fail("{} has shape {}, expected {} for input {}", names[i], shape_to_string(p.shape()), shape_to_string(expect), shape_to_string(x.shape()));
    }
    ctx.allocate_output(0, x.dtype(), x.shape());
    if (training_)
      for (size_t i = 1; i < 3 && i < ctx.num_outputs(); ++i)
        if (ctx.output_wanted(i)) ctx.allocate_output(i, x.dtype(), expect);
  }
  void compute(KernelContext& ctx) override {
    ctx.stats().flops = (training_ ? 5.0 : 2.0) * ctx.input(0).numel();
    if (ctx.input(0).dtype() == DType::Float32) run<float>(ctx);
    else run<double>(ctx);
  }

 private:
  template <typename T>
  void run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const T *scale = ctx.input(1).data<T>(), *bias = ctx.input(2).data<T>(), *mean = ctx.input(3).data<T>(),
            *var = ctx.input(4).data<T>();
    const int64_t N = x.dim(0), C = x.dim(1), S = x.numel() / std::max<int64_t>(1, N * C);
    const T* px = x.data<T>();
    T* py = ctx.output(0).mutable_data<T>();
    std::vector<T> batch_mean, batch_var;
    if (training_) {
      batch_statistics(ctx, px, N, C, S, batch_mean, batch_var);
      mean = batch_mean.data();
      var = batch_var.data();
    }
    if (ctx.reference_mode()) {
      ctx.stats().variant = "batchnorm_reference";
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t s = 0; s < S; ++s) {
            const int64_t p = spatial_ ? c : c * S + s;  // parameter index
            const int64_t i = (n * C + c) * S + s;
            py[i] = static_cast<T>((px[i] - mean[p]) / std::sqrt(static_cast<double>(var[p]) + epsilon_) * scale[p] + bias[p]);
          }
      return;
    }
    // Fold into y = x * a + b per parameter: a = scale / sqrt(var + eps), b = B - mean * a.
    const int64_t P = spatial_ ? C : C * S;
    std::vector<T> a(P), b(P);
    for (int64_t p = 0; p < P; ++p) {
      const double k = scale[p] / std::sqrt(static_cast<double>(var[p]) + epsilon_);
      a[p] = static_cast<T>(k);
      b[p] = static_cast<T>(bias[p] - mean[p] * k);
    }
    ctx.stats().variant = "batchnorm_affine";
    parallel_for(ctx.threads(), N * C, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, S)), [&](int64_t p0, int64_t p1) {
      for (int64_t pl = p0; pl < p1; ++pl) {
        const int64_t c = pl % C;
        const T* xs = px + pl * S;
        T* ys = py + pl * S;
        if (spatial_) {
          const T ac = a[c], bc = b[c];
          for (int64_t s = 0; s < S; ++s) ys[s] = xs[s] * ac + bc;
        } else {
          const T *ac = &a[c * S], *bc = &b[c * S];
          for (int64_t s = 0; s < S; ++s) ys[s] = xs[s] * ac[s] + bc[s];
        }
      }
    });
  }
  // Training mode: per-channel mean and biased variance over N and the spatial axes (in
  // double), and the running statistics blended with `momentum` into outputs 1 and 2.
  template <typename T>
  void batch_statistics(KernelContext& ctx, const T* px, int64_t N, int64_t C, int64_t S, std::vector<T>& mean,
                        std::vector<T>& var) {
    mean.resize(C);
    var.resize(C);
    const double count = static_cast<double>(N * S);
    for (int64_t c = 0; c < C; ++c) {
      double sum = 0, sq = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s) sum += px[(n * C + c) * S + s];
      const double m = count > 0 ? sum / count : 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s) {
          const double d = px[(n * C + c) * S + s] - m;
          sq += d * d;
        }
      mean[c] = static_cast<T>(m);
      var[c] = static_cast<T>(count > 0 ? sq / count : 0);
    }
    const T* in_stats[2] = {ctx.input(3).data<T>(), ctx.input(4).data<T>()};
    const std::vector<T>* batch[2] = {&mean, &var};
    for (size_t o = 1; o < 3; ++o) {
      if (o >= ctx.num_outputs() || !ctx.output_wanted(o)) continue;
      T* out = ctx.output(o).mutable_data<T>();
      for (int64_t c = 0; c < C; ++c)
        out[c] = static_cast<T>(in_stats[o - 1][c] * momentum_ + (*batch[o - 1])[c] * (1.0 - momentum_));
    }
  }

  float epsilon_;
  bool spatial_;
  bool training_ = false;
  float momentum_ = 0.9f;
};

// Normalises `rows` contiguous rows of length `len`; row r uses gamma/beta
// at param(r, j) and optionally writes its mean and 1/stddev.
template <typename T, typename Param>
void normalize_rows(ThreadPool* pool, int64_t rows, int64_t len, double eps, const T* x, T* y, Param param,
                    T* mean_out, T* inv_out) {
  parallel_for(pool, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, len)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * len;
      double mean = 0, var = 0;
      for (int64_t j = 0; j < len; ++j) mean += xr[j];
      mean /= len;
      for (int64_t j = 0; j < len; ++j) var += (xr[j] - mean) * (xr[j] - mean);
      var /= len;
      const double inv = 1.0 / std::sqrt(var + eps);
      T* yr = y + r * len;
      for (int64_t j = 0; j < len; ++j) {
        double g, b;
        param(r, j, g, b);
        yr[j] = static_cast<T>((xr[j] - mean) * inv * g + b);
      }
      if (mean_out) mean_out[r] = static_cast<T>(mean);
      if (inv_out) inv_out[r] = static_cast<T>(inv);
    }
  });
}

// LayerNormalization's float32 fast path. Layout: rows of `len` contiguous floats, threads
// over rows, one row at a time: the ISA's row sum (kernels/simd) gives the mean, the centred
// row d = x - mean goes to a per-thread buffer (kept across runs), the ISA's sum of squares of
// d gives the variance (two passes, as the decomposed graph computes it), then
// y = d * (inv * gamma) + beta in a loop the compiler vectorises. float32 accumulation, like
// the unfused graph; normalize_rows (double) stays the reference path. gamma / beta: [len].
void layer_norm_rows_f32(ThreadPool* pool, int64_t rows, int64_t len, float eps, const float* x, float* y,
                         const float* gamma, const float* beta, float* mean_out, float* inv_out) {
  const simd::F32Kernels& k = simd::f32_kernels();
  const simd::ReduceRowsFn sum_fn = k.reduce_rows[simd::kRowSum], sq_fn = k.reduce_rows[simd::kRowSumSquare];
  parallel_for(pool, rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, len)), [&](int64_t r0, int64_t r1) {
    thread_local AlignedVector<float> d;
    d.resize(static_cast<size_t>(len));
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * len;
      float sum = 0.f, ss = 0.f;
      if (sum_fn) sum_fn(xr, 1, len, &sum);
      else for (int64_t j = 0; j < len; ++j) sum += xr[j];
      const float mean = sum / static_cast<float>(len);
      for (int64_t j = 0; j < len; ++j) d[j] = xr[j] - mean;
      if (sq_fn) sq_fn(d.data(), 1, len, &ss);
      else for (int64_t j = 0; j < len; ++j) ss += d[j] * d[j];
      const float inv = 1.f / std::sqrt(ss / static_cast<float>(len) + eps);
      float* yr = y + r * len;
      if (beta) {
        for (int64_t j = 0; j < len; ++j) yr[j] = d[j] * (inv * gamma[j]) + beta[j];
      } else {
        for (int64_t j = 0; j < len; ++j) yr[j] = d[j] * (inv * gamma[j]);
      }
      if (mean_out) mean_out[r] = mean;
      if (inv_out) inv_out[r] = inv;
    }
  });
}

// ---- InstanceNormalization: per (n, c) plane, y = (x - mean) / sqrt(var + eps) * scale[c] + B[c]
// Opset 1 differs from 6 only by the legacy consumed_inputs attribute, which is ignored.
class InstanceNormKernel : public Kernel {
 public:
  explicit InstanceNormKernel(const KernelInfo& info) : epsilon_(info.attrs.get_float("epsilon", 1e-5f)) {}
  KernelPlan describe(const KernelInfo&, const std::vector<const Shape*>&) const override {
    return KernelPlan{"instancenorm_rows", "portable", ""};
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (!is_float(x.dtype())) ctx.unsupported("dtype {} is not supported (float, double)", dtype_name(x.dtype()));
    if (x.rank() < 3) ctx.fail("input has shape {}, expected N x C x D1 [x D2 ...]", shape_to_string(x.shape()));
    for (size_t i = 1; i < 3; ++i)
      if (ctx.input(i).numel() != x.dim(1) || ctx.input(i).dtype() != x.dtype())
        ctx.fail("{} has shape {}, expected [{}] of dtype {}", i == 1 ? "scale" : "B", shape_to_string(ctx.input(i).shape()), x.dim(1), dtype_name(x.dtype()));
    ctx.allocate_output(0, x.dtype(), x.shape());
  }
  void compute(KernelContext& ctx) override {
    ctx.stats().flops = 5.0 * ctx.input(0).numel();
    ctx.stats().variant = ctx.reference_mode() ? "instancenorm_reference" : "instancenorm_rows";
    if (ctx.input(0).dtype() == DType::Float32) run<float>(ctx);
    else run<double>(ctx);
  }

 private:
  template <typename T>
  void run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const T *scale = ctx.input(1).data<T>(), *bias = ctx.input(2).data<T>();
    const int64_t C = x.dim(1), planes = x.dim(0) * C, S = x.numel() / std::max<int64_t>(1, planes);
    auto param = [&](int64_t r, int64_t, double& g, double& b) { g = scale[r % C], b = bias[r % C]; };
    normalize_rows<T>(ctx.reference_mode() ? nullptr : ctx.threads(), planes, S, epsilon_, x.data<T>(),
                      ctx.output(0).mutable_data<T>(), param, nullptr, nullptr);
  }
  float epsilon_;
};

// ---- LayerNormalization (opset 17): rows = shape[:axis], normalised over shape[axis:];
// Scale and B broadcast to shape[axis:]. Mean / InvStdDev have shape[:axis] + 1s.
class LayerNormKernel : public Kernel {
 public:
  explicit LayerNormKernel(const KernelInfo& info)
      : axis_(info.attrs.get_int("axis", -1)), epsilon_(info.attrs.get_float("epsilon", 1e-5f)) {}
  KernelPlan describe(const KernelInfo&, const std::vector<const Shape*>&) const override {
    return KernelPlan{"layernorm_rows", "portable", ""};
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (!is_float(x.dtype()) && !is_half(x.dtype()))
      ctx.unsupported("dtype {} is not supported (float, double, float16, bfloat16)", dtype_name(x.dtype()));
    const int64_t r = static_cast<int64_t>(x.rank());
    const auto normalized = normalize_axis(axis_, r);
    if (!normalized) ctx.fail("axis {} is out of range [{}, {})", axis_, -r, r);
    const int64_t axis = *normalized;
    const int64_t cols = shape_product(x.shape(), axis, x.rank());
    for (size_t i = 1; i < 3; ++i) {
      if (!ctx.has_input(i)) continue;
      const Tensor& p = ctx.input(i);
      if (p.dtype() != x.dtype()) ctx.fail("{} has dtype {}, input has {}", i == 1 ? "Scale" : "B", dtype_name(p.dtype()), dtype_name(x.dtype()));
      if (p.numel() != cols && p.numel() != 1)
        ctx.fail("{} has shape {}, expected the normalised shape {}", i == 1 ? "Scale" : "B", shape_to_string(p.shape()),
                 shape_to_string(Shape(x.shape().begin() + axis, x.shape().end())));
    }
    ctx.allocate_output(0, x.dtype(), x.shape());
    Shape stat(x.shape().begin(), x.shape().begin() + axis);
    stat.resize(x.rank(), 1);
    for (size_t i = 1; i < 3; ++i)
      if (ctx.output_wanted(i)) ctx.allocate_output(i, is_half(x.dtype()) ? DType::Float32 : x.dtype(), stat);
  }
  void compute(KernelContext& ctx) override {
    ctx.stats().flops = 5.0 * ctx.input(0).numel();
    ctx.stats().variant = ctx.reference_mode() ? "layernorm_reference" : "layernorm_rows";
    const Tensor& x = ctx.input(0);
    if (x.dtype() == DType::Float32) {
      run<float>(ctx, x, ctx.input(1), ctx.has_input(2) ? &ctx.input(2) : nullptr, ctx.output(0));
    } else if (x.dtype() == DType::Float64) {
      run<double>(ctx, x, ctx.input(1), ctx.has_input(2) ? &ctx.input(2) : nullptr, ctx.output(0));
    } else {  // float16 / bfloat16 through float32
      const Tensor xf = half_to_f32(ctx, x), sf = half_to_f32(ctx, ctx.input(1));
      const Tensor bf = ctx.has_input(2) ? half_to_f32(ctx, ctx.input(2)) : Tensor();
      Tensor yf = ctx.scratch(DType::Float32, x.shape());
      run<float>(ctx, xf, sf, bf.defined() ? &bf : nullptr, yf);
      f32_to_half(yf, ctx.output(0));
    }
  }

 private:
  template <typename T>
  void run(KernelContext& ctx, const Tensor& x, const Tensor& sc, const Tensor* b, Tensor& y) {
    const int64_t axis = *normalize_axis(axis_, static_cast<int64_t>(x.rank()));  // checked in prepare()
    const int64_t cols = shape_product(x.shape(), axis, x.rank());
    const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
    const T* scale = sc.data<T>();
    const T* bias = b ? b->data<T>() : nullptr;
    const bool scale_scalar = sc.numel() == 1, bias_scalar = bias && b->numel() == 1;
    if constexpr (std::is_same<T, float>::value) {
      if (!ctx.reference_mode() && !scale_scalar && !bias_scalar && cols > 1) {
        layer_norm_rows_f32(ctx.threads(), rows, cols, epsilon_, x.data<float>(), y.mutable_data<float>(), scale, bias,
                            ctx.output_wanted(1) ? ctx.output(1).mutable_data<float>() : nullptr,
                            ctx.output_wanted(2) ? ctx.output(2).mutable_data<float>() : nullptr);
        return;
      }
    }
    auto param = [&](int64_t, int64_t j, double& g, double& b) {
      g = scale[scale_scalar ? 0 : j];
      b = bias ? bias[bias_scalar ? 0 : j] : 0.0;
    };
    normalize_rows<T>(ctx.reference_mode() ? nullptr : ctx.threads(), rows, cols, epsilon_, x.data<T>(),
                      y.mutable_data<T>(), param, ctx.output_wanted(1) ? ctx.output(1).mutable_data<T>() : nullptr,
                      ctx.output_wanted(2) ? ctx.output(2).mutable_data<T>() : nullptr);
  }
  int64_t axis_;
  float epsilon_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("normalization", "", "BatchNormalization", 1, INT_MAX, make_kernel<BatchNormKernel>);
ONNXMINI_REGISTER_KERNEL("normalization", "", "InstanceNormalization", 1, INT_MAX, make_kernel<InstanceNormKernel>);
ONNXMINI_REGISTER_KERNEL("normalization", "", "LayerNormalization", 17, INT_MAX, make_kernel<LayerNormKernel>);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_normalization);
