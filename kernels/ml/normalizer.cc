// ai.onnx.ml Normalizer: scales each row by its MAX, L1 or L2 norm.
//
// Layout: input rows x features (a 1-D input is one row), output float32 of the
// same shape. Rows are independent, so the fast path splits rows over threads;
// the reference path is the same row routine run serially.
//
// onnxruntime semantics (the oracle): MAX divides by the largest *signed*
// value (so a row of negatives flips sign); L1 divides by sum |x|; L2 computes
// sign(x) * sqrt(x^2 / sum x^2). A row whose norm is 0 is copied unchanged.
#include <algorithm>
#include <limits>

#include "kernels/ml/ml_common.h"
#include "kernels/registry.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace ml {
namespace {

enum class Norm { Max, L1, L2 };

template <typename T>
void normalize_max_row(const T* x, float* y, int64_t n) {
  float mx = std::numeric_limits<float>::lowest();
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, static_cast<float>(x[i]));
  for (int64_t i = 0; i < n; ++i) y[i] = mx != 0.0f ? static_cast<float>(x[i]) / mx : static_cast<float>(x[i]);
}

template <typename T>
void normalize_l1_row(const T* x, float* y, int64_t n) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<float>(std::abs(x[i]));
  for (int64_t i = 0; i < n; ++i) y[i] = sum != 0.0f ? static_cast<float>(x[i]) / sum : static_cast<float>(x[i]);
}

template <typename T>
void normalize_l2_row(const T* x, float* y, int64_t n) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<float>(x[i] * x[i]);
  for (int64_t i = 0; i < n; ++i) {
    if (sum == 0.0f) {
      y[i] = static_cast<float>(x[i]);
      continue;
    }
    // sqrt(x^2 / sum) rather than x / sqrt(sum): the same rounding as onnxruntime.
    const float r = std::sqrt(static_cast<float>(x[i] * x[i]) / sum);
    y[i] = x[i] < 0 ? -r : r;
  }
}

template <typename T>
void normalize_rows(Norm norm, const T* x, float* y, int64_t r0, int64_t r1, int64_t n) {
  for (int64_t r = r0; r < r1; ++r) {
    switch (norm) {
      case Norm::Max: normalize_max_row(x + r * n, y + r * n, n); break;
      case Norm::L1: normalize_l1_row(x + r * n, y + r * n, n); break;
      case Norm::L2: normalize_l2_row(x + r * n, y + r * n, n); break;
    }
  }
}

class NormalizerKernel : public Kernel {
 public:
  explicit NormalizerKernel(const KernelInfo& info) {
    const std::string norm = info.attrs.get_string("norm", "MAX");
    if (norm == "MAX") norm_ = Norm::Max;
    else if (norm == "L1") norm_ = Norm::L1;
    else if (norm == "L2") norm_ = Norm::L2;
    else info.fail("norm '{}' is not one of MAX, L1, L2", norm);
  }

  void prepare(KernelContext& ctx) override {
    int64_t rows, cols;
    rows_and_features(ctx, ctx.input(0), rows, cols);
    ctx.allocate_output(0, DType::Float32, ctx.input(0).shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    switch (x.dtype()) {
      case DType::Float32: run<float>(ctx); break;
      case DType::Float64: run<double>(ctx); break;
      case DType::Int64: run<int64_t>(ctx); break;
      case DType::Int32: run<int32_t>(ctx); break;
      default: ctx.fail("input has dtype {}; expected float, double, int64 or int32", dtype_name(x.dtype()));
    }
  }

 private:
  template <typename T>
  void run(KernelContext& ctx) const {
    int64_t rows, cols;
    rows_and_features(ctx, ctx.input(0), rows, cols);
    const T* x = ctx.input(0).data<T>();
    float* y = ctx.output(0).mutable_data<float>();
    const Norm norm = norm_;
    if (ctx.reference_mode()) {
      normalize_rows(norm, x, y, 0, rows, cols);
      return;
    }
    const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(cols, 1));
    parallel_for(ctx.threads(), rows, grain, [&](int64_t r0, int64_t r1) { normalize_rows(norm, x, y, r0, r1, cols); });
  }

  Norm norm_ = Norm::Max;
};

ONNXMINI_REGISTER_KERNEL("normalizer", "ai.onnx.ml", "Normalizer", 1, INT_MAX, make_kernel<NormalizerKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_normalizer);
