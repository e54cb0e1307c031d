// The ai.onnx.preview.training optimizer steps: Adagrad, Momentum, Adam (opset 1).
// Inputs R (learning rate, scalar), T (update count, int64 scalar), then the
// optimized tensors grouped by role: Adagrad [X.., G.., H..] -> [X_new.., H_new..],
// Momentum [X.., G.., V..] -> [X_new.., V_new..], Adam [X.., G.., V.., H..] ->
// [X_new.., V_new.., H_new..]. Each group has n tensors of one shape each; every
// element is updated independently, in the element type (float or double), in
// the order the spec's pseudocode writes the operations.
#include <cmath>
#include <string>

#include "kernels/registry.h"

namespace onnxmini {

namespace {

enum class Step { Adagrad, Momentum, Adam };

struct StepParams {
  double r = 0, norm = 0, decay = 0, epsilon = 0, alpha = 0, beta = 0, norm_post = 0;
  int64_t t = 0;
  bool nesterov = false;
};

// Groups of inputs after R and T (and of outputs) per algorithm.
int input_groups(Step s) { return s == Step::Adagrad ? 3 : s == Step::Momentum ? 3 : 4; }

template <typename T>
void adagrad(const StepParams& p, int64_t n, const T* x, const T* g, const T* h, T* x_new, T* h_new) {
  const T r = static_cast<T>(p.r / (1.0 + static_cast<double>(p.t) * p.decay));
  for (int64_t i = 0; i < n; ++i) {
    const T gr = static_cast<T>(p.norm) * x[i] + g[i];
    h_new[i] = h[i] + gr * gr;
    x_new[i] = x[i] - r * gr / (std::sqrt(h_new[i]) + static_cast<T>(p.epsilon));
  }
}

template <typename T>
void momentum(const StepParams& p, int64_t n, const T* x, const T* g, const T* v, T* x_new, T* v_new) {
  const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.t > 0 ? p.beta : 1.0), r = static_cast<T>(p.r);
  for (int64_t i = 0; i < n; ++i) {
    const T gr = static_cast<T>(p.norm) * x[i] + g[i];
    v_new[i] = alpha * v[i] + beta * gr;
    x_new[i] = p.nesterov ? x[i] - r * (gr + alpha * v_new[i]) : x[i] - r * v_new[i];
  }
}

template <typename T>
void adam(const StepParams& p, int64_t n, const T* x, const T* g, const T* v, const T* h, T* x_new, T* v_new,
          T* h_new) {
  const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
  const double tt = static_cast<double>(p.t);
  const T r = static_cast<T>(p.t > 0 ? p.r * std::sqrt(1 - std::pow(p.beta, tt)) / (1 - std::pow(p.alpha, tt)) : p.r);
  for (int64_t i = 0; i < n; ++i) {
    const T gr = static_cast<T>(p.norm) * x[i] + g[i];
    v_new[i] = alpha * v[i] + (T(1) - alpha) * gr;
    h_new[i] = beta * h[i] + (T(1) - beta) * gr * gr;
    const T xn = x[i] - r * v_new[i] / (std::sqrt(h_new[i]) + static_cast<T>(p.epsilon));
    x_new[i] = (T(1) - static_cast<T>(p.norm_post)) * xn;
  }
}

class OptimizerStepKernel : public Kernel {
 public:
  OptimizerStepKernel(const KernelInfo& info, Step step) : step_(step) {
    const auto& a = info.attrs;
    p_.norm = a.get_float("norm_coefficient", 0.f);
    if (step == Step::Adagrad) {
      p_.decay = a.get_float("decay_factor", 0.f);
      p_.epsilon = a.get_float("epsilon", 1e-6f);
    } else if (step == Step::Momentum) {
      for (const char* name : {"alpha", "beta", "mode", "norm_coefficient"})
        if (!a.has(name)) info.fail("attribute '{}' is required", name);
      p_.alpha = a.get_float("alpha");
      p_.beta = a.get_float("beta");
      const std::string mode = a.get_string("mode");
      if (mode != "standard" && mode != "nesterov") info.fail("mode must be 'standard' or 'nesterov', got '{}'", mode);
      p_.nesterov = mode == "nesterov";
    } else {
      p_.alpha = a.get_float("alpha", 0.9f);
      p_.beta = a.get_float("beta", 0.999f);
      p_.epsilon = a.get_float("epsilon", 1e-6f);
      p_.norm_post = a.get_float("norm_coefficient_post", 0.f);
    }
  }

  void prepare(KernelContext& ctx) override {
    const int groups = input_groups(step_);
    const size_t tensors = ctx.num_inputs() - 2;
    if (ctx.num_inputs() < 2 + static_cast<size_t>(groups) || tensors % groups != 0)
      ctx.fail("{} inputs after R and T: expected a multiple of {} (the optimized tensors and their states)", tensors,
               groups);
    n_ = static_cast<int64_t>(tensors / groups);
    if (ctx.num_outputs() != static_cast<size_t>(n_ * (groups - 1)))
      ctx.fail("{} outputs for {} optimized tensor(s): expected {}", ctx.num_outputs(), n_, n_ * (groups - 1));
    const Tensor& r = ctx.input(0);
    const Tensor& t = ctx.input(1);
    if ((r.dtype() != DType::Float32 && r.dtype() != DType::Float64) || r.numel() != 1)
      ctx.fail("R must be a float or double scalar, got {} {}", dtype_name(r.dtype()), shape_to_string(r.shape()));
    if (t.dtype() != DType::Int64 || t.numel() != 1)
      ctx.fail("T must be an int64 scalar, got {} {}", dtype_name(t.dtype()), shape_to_string(t.shape()));
    for (int64_t k = 0; k < n_; ++k) {
      const Tensor& x = ctx.input(2 + k);
      if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64)
        ctx.fail("input {} has dtype {}; the optimized tensors must be float or double", 2 + k, dtype_name(x.dtype()));
      for (int g = 1; g < groups; ++g) {
        const Tensor& s = ctx.input(2 + g * n_ + k);
        if (s.dtype() != x.dtype() || s.shape() != x.shape())
          ctx.fail("input {} is {} {}, the tensor it belongs to (input {}) is {} {}", 2 + g * n_ + k,
                   dtype_name(s.dtype()), shape_to_string(s.shape()), 2 + k, dtype_name(x.dtype()),
                   shape_to_string(x.shape()));
      }
      for (int g = 0; g < groups - 1; ++g) ctx.allocate_output(g * n_ + k, x.dtype(), x.shape());
    }
  }

  void compute(KernelContext& ctx) override {
    StepParams p = p_;
    const Tensor& r = ctx.input(0);
    p.r = r.dtype() == DType::Float32 ? r.data<float>()[0] : r.data<double>()[0];
    p.t = ctx.input(1).data<int64_t>()[0];
    for (int64_t k = 0; k < n_; ++k) {
      if (ctx.input(2 + k).dtype() == DType::Float32)
        run<float>(ctx, p, k);
      else
        run<double>(ctx, p, k);
    }
  }

 private:
  template <typename T>
  void run(KernelContext& ctx, const StepParams& p, int64_t k) {
    auto in = [&](int g) { return ctx.input(2 + g * n_ + k).template data<T>(); };
    auto out = [&](int g) { return ctx.output(g * n_ + k).template mutable_data<T>(); };
    const int64_t n = ctx.input(2 + k).numel();
    switch (step_) {
      case Step::Adagrad: return adagrad<T>(p, n, in(0), in(1), in(2), out(0), out(1));
      case Step::Momentum: return momentum<T>(p, n, in(0), in(1), in(2), out(0), out(1));
      case Step::Adam: return adam<T>(p, n, in(0), in(1), in(2), in(3), out(0), out(1), out(2));
    }
  }

  Step step_;
  StepParams p_;
  int64_t n_ = 0;
};

template <Step S>
std::unique_ptr<Kernel> make_step(const KernelInfo& info) {
  return std::make_unique<OptimizerStepKernel>(info, S);
}

}  // namespace

ONNXMINI_REGISTER_KERNEL("optimizers", "ai.onnx.preview.training", "Adagrad", 1, INT_MAX, make_step<Step::Adagrad>);
ONNXMINI_REGISTER_KERNEL("optimizers", "ai.onnx.preview.training", "Momentum", 1, INT_MAX, make_step<Step::Momentum>);
ONNXMINI_REGISTER_KERNEL("optimizers", "ai.onnx.preview.training", "Adam", 1, INT_MAX, make_step<Step::Adam>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(training_optimizers);
