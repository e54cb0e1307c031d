// ai.onnx.ml LinearRegressor and LinearClassifier: scores = X * W^T + b.
//
// Layout: X is rows x features (row-major; a 1-D X is one row), W is the
// `coefficients` attribute read as targets x features (row-major), b the
// `intercepts`. The fast path runs one GEMM (trans_b, intercepts fused as the
// epilogue bias); the reference path is the plain triple loop.
//
// Semantics follow onnxruntime (the oracle for these ops):
// - the label is taken from the raw scores (argmax, first maximum wins), then
//   post_transform is applied to the scores;
// - one coefficient row (binary classifier) gives label = score > 0 ? labels[1] :
//   labels[0] (or 1 / 0 without two labels); with two class labels the score
//   output gets two columns [1 - p, p] where p = logistic(s) for LOGISTIC and
//   p = s (untransformed) for NONE / SOFTMAX / SOFTMAX_ZERO (measured on
//   onnxruntime 1.31);
// - a single score column is only changed by PROBIT;
// - multi_class is accepted and ignored (onnxruntime ignores it too).
#include <algorithm>

#include "core/checked_math.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/ml/ml_common.h"
#include "kernels/registry.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace ml {
namespace {

// scores[r, t] = sum_f x[r, f] * w[t, f] + b[t], loop by loop (the oracle).
void linear_scores_reference(const float* x, const float* w, const float* b, float* scores, int64_t rows,
                             int64_t targets, int64_t features) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < targets; ++t) {
      float acc = b ? b[t] : 0.0f;
      for (int64_t f = 0; f < features; ++f) acc += x[r * features + f] * w[t * features + f];
      scores[r * targets + t] = acc;
    }
}

// Fills rows x targets `scores` with X * W^T + b; picks GEMM or the reference loop.
void linear_scores(KernelContext& ctx, const float* x, const std::vector<float>& w, const std::vector<float>& b,
                   float* scores, int64_t rows, int64_t targets, int64_t features) {
  const float* bias = b.empty() ? nullptr : b.data();
  ctx.stats().flops = 2.0 * rows * targets * features;
  if (ctx.reference_mode()) {
    ctx.stats().variant = "linear_reference";
    linear_scores_reference(x, w.data(), bias, scores, rows, targets, features);
    return;
  }
  ctx.stats().variant = "linear_gemm";
  ctx.stats().isa = ctx.gemm().sgemm_path(gemm::SgemmArgs{}, false).isa;
  gemm::SgemmArgs args;
  args.trans_b = true;
  args.M = rows;
  args.N = targets;
  args.K = features;
  args.A = x;
  args.lda = features;
  args.B = w.data();
  args.ldb = features;
  args.C = scores;
  args.ldc = targets;
  args.epilogue.bias = bias;
  ctx.gemm().sgemm(args, ctx.threads());
}

// Post-transform split over row blocks (each row is independent).
void post_transform_rows(KernelContext& ctx, PostTransform t, float* scores, int64_t rows, int64_t cols) {
  if (t == PostTransform::None) return;
  if (ctx.reference_mode()) {
    apply_post_transform(t, scores, rows, cols);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(cols, 1));
  parallel_for(ctx.threads(), rows, grain,
               [&](int64_t r0, int64_t r1) { apply_post_transform(t, scores + r0 * cols, r1 - r0, cols); });
}

class LinearRegressorKernel : public Kernel {
 public:
  explicit LinearRegressorKernel(const KernelInfo& info)
      : coefficients_(info.attrs.get_floats("coefficients")),
        intercepts_(info.attrs.get_floats("intercepts", {})),
        targets_(info.attrs.get_int("targets", 1)),
        post_(parse_post_transform(info, info.attrs.get_string("post_transform", "NONE"))) {
    if (targets_ < 1) info.fail("targets must be >= 1, got {}", targets_);
    if (coefficients_.empty() || coefficients_.size() % targets_ != 0)
      info.fail("coefficients has {} values, not a multiple of targets ({})", coefficients_.size(), targets_);
    if (!intercepts_.empty() && static_cast<int64_t>(intercepts_.size()) != targets_)
      info.fail("intercepts has {} values, expected one per target ({})", intercepts_.size(), targets_);
  }

  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    return KernelPlan{"linear_gemm", gemm::engine(info.gemm, info.mode).sgemm_path(gemm::SgemmArgs{}, false).isa, ""};
  }

  void prepare(KernelContext& ctx) override {
    int64_t rows, features;
    check(ctx, rows, features);
    ctx.allocate_output(0, DType::Float32, {rows, targets_});
  }

  void compute(KernelContext& ctx) override {
    int64_t rows, features;
    check(ctx, rows, features);
    Tensor x = input_as_float(ctx, ctx.input(0));
    float* y = ctx.output(0).mutable_data<float>();
    linear_scores(ctx, x.data<float>(), coefficients_, intercepts_, y, rows, targets_, features);
    post_transform_rows(ctx, post_, y, rows, targets_);
  }

 private:
  void check(const KernelContext& ctx, int64_t& rows, int64_t& features) const {
    rows_and_features(ctx, ctx.input(0), rows, features);
    // targets comes from the model: features x targets is checked, not wrapped.
    if (try_mul(features, targets_) != std::optional<int64_t>(static_cast<int64_t>(coefficients_.size())))
      ctx.fail("input has {} features but coefficients has {} values for {} target(s) (expected {})", features,
               coefficients_.size(), targets_, try_mul(features, targets_).value_or(-1));
  }

  std::vector<float> coefficients_, intercepts_;
  int64_t targets_;
  PostTransform post_;
};

class LinearClassifierKernel : public Kernel {
 public:
  explicit LinearClassifierKernel(const KernelInfo& info)
      : coefficients_(info.attrs.get_floats("coefficients")),
        intercepts_(info.attrs.get_floats("intercepts", {})),
        label_ints_(info.attrs.get_ints("classlabels_ints", {})),
        label_strings_(info.attrs.get_strings("classlabels_strings", {})),
        post_(parse_post_transform(info, info.attrs.get_string("post_transform", "NONE"))) {
    if (!label_ints_.empty() && !label_strings_.empty())
      info.fail("has both classlabels_ints and classlabels_strings; expected one");
    strings_ = !label_strings_.empty();
    classes_ = static_cast<int64_t>(intercepts_.size());
    if (classes_ == 0) info.unsupported("intercepts is empty; one intercept per coefficient row is required");
    if (coefficients_.empty() || coefficients_.size() % classes_ != 0)
      info.fail("coefficients has {} values, not a multiple of the {} intercepts", coefficients_.size(), classes_);
    const int64_t labels = num_labels();
    if (classes_ > 1 && labels != classes_)
      info.fail("{} coefficient rows but {} class labels", classes_, labels);
    // One row and two labels: the score output gets a column for each class.
    two_columns_ = classes_ == 1 && labels == 2;
    if (two_columns_ && post_ == PostTransform::Probit)
      info.unsupported("PROBIT with one coefficient row and two class labels (onnxruntime leaves half of the scores "
                       "uninitialised in this case)");
  }

  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    return KernelPlan{"linear_gemm", gemm::engine(info.gemm, info.mode).sgemm_path(gemm::SgemmArgs{}, false).isa, ""};
  }

  void prepare(KernelContext& ctx) override {
    int64_t rows, features;
    check(ctx, rows, features);
    ctx.allocate_output(0, strings_ ? DType::String : DType::Int64, {rows});
    ctx.allocate_output(1, DType::Float32, {rows, two_columns_ ? 2 : classes_});
  }

  void compute(KernelContext& ctx) override {
    int64_t rows, features;
    check(ctx, rows, features);
    Tensor x = input_as_float(ctx, ctx.input(0));
    float* scores = ctx.output(1).mutable_data<float>();
    // Binary with two columns: compute the raw score into a scratch column first.
    Tensor raw = two_columns_ ? ctx.scratch(DType::Float32, {rows}) : Tensor();
    float* s = two_columns_ ? raw.mutable_data<float>() : scores;
    linear_scores(ctx, x.data<float>(), coefficients_, intercepts_, s, rows, classes_, features);

    write_labels(ctx.output(0), s, rows);
    if (two_columns_) {
      const bool logistic_p = post_ == PostTransform::Logistic;
      for (int64_t r = 0; r < rows; ++r) {
        const float p = logistic_p ? logistic(s[r]) : s[r];
        scores[2 * r] = 1.0f - p;
        scores[2 * r + 1] = p;
      }
    } else {
      post_transform_rows(ctx, post_, scores, rows, classes_);
    }
  }

 private:
  int64_t num_labels() const {
    return static_cast<int64_t>(strings_ ? label_strings_.size() : label_ints_.size());
  }

  void check(const KernelContext& ctx, int64_t& rows, int64_t& features) const {
    rows_and_features(ctx, ctx.input(0), rows, features);
    // classes comes from the model: features x classes is checked, not wrapped.
    if (try_mul(features, classes_) != std::optional<int64_t>(static_cast<int64_t>(coefficients_.size())))
      ctx.fail("input has {} features but coefficients has {} values for {} class row(s) (expected {})", features,
               coefficients_.size(), classes_, try_mul(features, classes_).value_or(-1));
  }

  // Label of each row from the raw scores: argmax (first maximum), or the sign
  // of the single score for a one-row classifier.
  void write_labels(Tensor& labels, const float* s, int64_t rows) const {
    for (int64_t r = 0; r < rows; ++r) {
      int64_t best = 0;
      if (classes_ == 1) {
        best = s[r] > 0 ? 1 : 0;
      } else {
        const float* row = s + r * classes_;
        for (int64_t c = 1; c < classes_; ++c)
          if (row[c] > row[best]) best = c;
      }
      if (strings_) labels.mutable_data<std::string>()[r] = label_string(best);
      else labels.mutable_data<int64_t>()[r] = label_int(best);
    }
  }
  // For one row without two labels, the labels are 0/1 ("0"/"1").
  int64_t label_int(int64_t k) const { return classes_ == 1 && !two_columns_ ? k : label_ints_[k]; }
  std::string label_string(int64_t k) const {
    return classes_ == 1 && !two_columns_ ? std::to_string(k) : label_strings_[k];
  }

  std::vector<float> coefficients_, intercepts_;
  std::vector<int64_t> label_ints_;
  std::vector<std::string> label_strings_;
  PostTransform post_;
  bool strings_ = false, two_columns_ = false;
  int64_t classes_ = 0;
};

ONNXMINI_REGISTER_KERNEL("linear", "ai.onnx.ml", "LinearRegressor", 1, INT_MAX, make_kernel<LinearRegressorKernel>);
ONNXMINI_REGISTER_KERNEL("linear", "ai.onnx.ml", "LinearClassifier", 1, INT_MAX, make_kernel<LinearClassifierKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_linear);
