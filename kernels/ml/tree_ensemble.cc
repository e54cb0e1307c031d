// ai.onnx.ml TreeEnsembleRegressor, TreeEnsembleClassifier (opsets 1 and 3:
// the *_as_tensor attributes hold doubles) and TreeEnsemble (opset 5).
//
// Layout: X is rows x features (a 1-D X is one row). The model is flattened
// once at session creation (kernels/ml/tree_model.h); a run evaluates blocks
// of rows tree by tree into double accumulators (rows x targets scratch),
// threads split the rows. Finalisation (base values, averaging, the binary
// classifier rules, post_transform) follows onnxruntime, the oracle for these
// ops; the scores are accumulated in double, so they can differ from
// onnxruntime's float accumulation by float rounding of the sum.
#include <algorithm>
#include <cmath>

#include "core/float16.h"
#include "core/thread_pool.h"
#include "kernels/ml/ml_common.h"
#include "kernels/ml/tree_model.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace ml {
namespace {

Aggregate parse_aggregate(const KernelInfo& info, const std::string& name) {
  if (name == "SUM") return Aggregate::Sum;
  if (name == "AVERAGE") return Aggregate::Average;
  if (name == "MIN") return Aggregate::Min;
  if (name == "MAX") return Aggregate::Max;
  info.fail("aggregate_function '{}' is not one of SUM, AVERAGE, MIN, MAX", name);
}

// Evaluates every row of `x` into scores / has (rows x targets, zeroed here).
// X as float or double is read in place; other dtypes are converted to double.
void run_trees(KernelContext& ctx, const TreeModel& m, Aggregate agg, const Tensor& x, int64_t rows,
               int64_t features, double* scores, uint8_t* has) {
  if (m.max_feature >= features)
    ctx.fail("input has {} features but the trees read feature {}", features, m.max_feature);
  std::fill(scores, scores + rows * m.targets, 0.0);
  std::fill(has, has + rows * m.targets, uint8_t{0});
  Tensor converted;
  const Tensor* in = &x;
  if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64) {
    if (x.dtype() != DType::Int64 && x.dtype() != DType::Int32 && x.dtype() != DType::Float16)
      ctx.fail("input has dtype {}; expected float, double, float16, int64 or int32", dtype_name(x.dtype()));
    converted = ctx.scratch(DType::Float64, x.shape());
    double* dst = converted.mutable_data<double>();
    for (int64_t i = 0; i < x.numel(); ++i) dst[i] = x.get_as_double(i);
    in = &converted;
  }
  auto work = [&](int64_t r0, int64_t r1) {
    if (in->dtype() == DType::Float32) evaluate_trees(m, agg, in->data<float>(), features, r0, r1, scores, has);
    else evaluate_trees(m, agg, in->data<double>(), features, r0, r1, scores, has);
  };
  ctx.stats().variant = ctx.reference_mode() ? "trees_serial" : "trees_row_blocks";
  if (ctx.reference_mode()) {
    work(0, rows);
    return;
  }
  const int64_t cost_per_row = std::max<int64_t>(1, static_cast<int64_t>(m.roots.size()));
  parallel_for(ctx.threads(), rows, std::max<int64_t>(16, 65536 / cost_per_row), work);
}

// Regressor-style finalisation of one row: averaging, base values (missing
// scores count as 0), written as float to `out`.
template <typename Out>
void finalize_regression_row(const TreeModel& m, const double* s, const uint8_t* h, Aggregate agg,
                             const std::vector<double>& base, int64_t targets, Out* out) {
  for (int64_t t = 0; t < targets; ++t) {
    double v = h[t] ? s[t] : 0.0;
    if (agg == Aggregate::Average) v = m.round_sum(v / static_cast<double>(m.roots.size()));
    if (!base.empty()) v = m.round_sum(v + base[static_cast<size_t>(t)]);
    out[t] = static_cast<Out>(v);
  }
}

std::vector<double> read_base_values(const KernelInfo& info) {
  std::vector<double> out;
  if (info.attrs.has("base_values") && info.attrs.has("base_values_as_tensor"))
    info.fail("has both base_values and base_values_as_tensor; expected one");
  if (info.attrs.has("base_values")) {
    for (float f : info.attrs.get_floats("base_values")) out.push_back(f);
  } else if (info.attrs.has("base_values_as_tensor")) {
    const Tensor& t = info.attrs.get_tensor("base_values_as_tensor");
    for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_as_double(i));
  }
  return out;
}

class TreeEnsembleRegressorKernel : public Kernel {
 public:
  explicit TreeEnsembleRegressorKernel(const KernelInfo& info)
      : targets_(info.attrs.get_int("n_targets", 1)),
        agg_(parse_aggregate(info, info.attrs.get_string("aggregate_function", "SUM"))),
        post_(parse_post_transform(info, info.attrs.get_string("post_transform", "NONE"))),
        base_(read_base_values(info)) {
    if (targets_ < 1 || targets_ > (1 << 24)) info.fail("n_targets is {}; expected >= 1", targets_);
    if (!base_.empty() && static_cast<int64_t>(base_.size()) != targets_)
      info.fail("base_values has {} values; expected one per target ({})", base_.size(), targets_);
    model_ = build_tree_model_v3(info, "target", targets_);
  }

  void prepare(KernelContext& ctx) override {
    int64_t rows, features;
    rows_and_features(ctx, ctx.input(0), rows, features);
    ctx.allocate_output(0, DType::Float32, {rows, targets_});
  }

  void compute(KernelContext& ctx) override {
    int64_t rows, features;
    rows_and_features(ctx, ctx.input(0), rows, features);
    Tensor scores = ctx.scratch(DType::Float64, {rows, targets_});
    Tensor has = ctx.scratch(DType::UInt8, {rows, targets_});
    double* s = scores.mutable_data<double>();
    uint8_t* h = has.mutable_data<uint8_t>();
    run_trees(ctx, model_, agg_, ctx.input(0), rows, features, s, h);
    float* y = ctx.output(0).mutable_data<float>();
    for (int64_t r = 0; r < rows; ++r)
      finalize_regression_row(model_, s + r * targets_, h + r * targets_, agg_, base_, targets_,
                              y + r * targets_);
    apply_post_transform(post_, y, rows, targets_);
  }

 private:
  int64_t targets_;
  Aggregate agg_;
  PostTransform post_;
  std::vector<double> base_;
  TreeModel model_;
};

// The classifier's rules (onnxruntime's, including its binary special cases):
// - more than two classes: base values are added, the label is the first
//   class with the highest score among classes that got a score, the scores
//   are post-transformed;
// - two classes: when only class 1's column would be meaningful (one class
//   id carries all weights, "binary case") the single score p decides the
//   label (p > 0.5 with all weights >= 0, p > 0 otherwise) and the score pair
//   becomes [1 - p, p], or [-p, p] / [logistic(-p), logistic(p)] with mixed
//   weights.
class TreeEnsembleClassifierKernel : public Kernel {
 public:
  explicit TreeEnsembleClassifierKernel(const KernelInfo& info)
      : label_ints_(info.attrs.get_ints("classlabels_int64s", {})),
        label_strings_(info.attrs.get_strings("classlabels_strings", {})),
        post_(parse_post_transform(info, info.attrs.get_string("post_transform", "NONE"))),
        base_(read_base_values(info)) {
    if (label_ints_.empty() == label_strings_.empty())
      info.fail("exactly one of classlabels_int64s and classlabels_strings must be given (got {} ints, {} strings)",
                label_ints_.size(), label_strings_.size());
    strings_ = !label_strings_.empty();
    classes_ = static_cast<int64_t>(strings_ ? label_strings_.size() : label_ints_.size());
    if (classes_ < 2) info.unsupported("{} class label(s); at least two are needed", classes_);
    if (!base_.empty() && static_cast<int64_t>(base_.size()) != classes_ && !(classes_ == 2 && base_.size() == 1))
      info.fail("base_values has {} values; expected one per class ({})", base_.size(), classes_);
    model_ = build_tree_model_v3(info, "class", classes_);
    std::vector<bool> used(static_cast<size_t>(classes_));
    int64_t distinct = 0;
    for (size_t k = 0; k < model_.leaf_target.size(); ++k) {
      if (!used[static_cast<size_t>(model_.leaf_target[k])]) ++distinct;
      used[static_cast<size_t>(model_.leaf_target[k])] = true;
      if (model_.leaf_weight[k] < 0) all_positive_ = false;
    }
    binary_case_ = classes_ == 2 && distinct == 1;
  }

  void prepare(KernelContext& ctx) override {
    int64_t rows, features;
    rows_and_features(ctx, ctx.input(0), rows, features);
    ctx.allocate_output(0, strings_ ? DType::String : DType::Int64, {rows});
    ctx.allocate_output(1, DType::Float32, {rows, classes_});
  }

  void compute(KernelContext& ctx) override {
    int64_t rows, features;
    rows_and_features(ctx, ctx.input(0), rows, features);
    Tensor scores = ctx.scratch(DType::Float64, {rows, classes_});
    Tensor has = ctx.scratch(DType::UInt8, {rows, classes_});
    double* s = scores.mutable_data<double>();
    uint8_t* h = has.mutable_data<uint8_t>();
    run_trees(ctx, model_, Aggregate::Sum, ctx.input(0), rows, features, s, h);
    float* z = ctx.output(1).mutable_data<float>();
    Tensor& labels = ctx.output(0);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t k = classes_ > 2 ? finalize_multiclass(s + r * classes_, h + r * classes_, z + r * classes_)
                                     : finalize_binary(s + r * 2, h + r * 2, z + r * 2);
      if (strings_) labels.mutable_data<std::string>()[r] = label_strings_[static_cast<size_t>(k)];
      else labels.mutable_data<int64_t>()[r] = label_ints_[static_cast<size_t>(k)];
    }
  }

 private:
  int64_t finalize_multiclass(double* s, uint8_t* h, float* z) const {
    for (size_t k = 0; k < base_.size(); ++k) {
      s[k] = model_.round_sum((h[k] ? s[k] : 0.0) + base_[k]);
      h[k] = 1;
    }
    int64_t best = -1;
    for (int64_t k = 0; k < classes_; ++k)
      if (h[k] && (best < 0 || s[k] > s[best])) best = k;
    for (int64_t k = 0; k < classes_; ++k) z[k] = static_cast<float>(h[k] ? s[k] : 0.0);
    apply_post_transform(post_, z, 1, classes_);
    return std::max<int64_t>(best, 0);
  }

  // Returns the class index (0 or 1) and writes the two scores.
  int64_t finalize_binary(double* s, uint8_t* h, float* z) const {
    bool single = false;  // only one meaningful score, in s[0]
    if (base_.size() == 2) {
      if (h[1]) {
        s[1] = model_.round_sum(base_[1] + s[0]);
        s[0] = -s[1];
      } else {
        s[1] = model_.round_sum(s[1] + base_[1]);
        s[0] = model_.round_sum(s[0] + base_[0]);
      }
    } else if (base_.size() == 1) {
      s[0] = model_.round_sum(s[0] + base_[0]);
      single = !h[1];
    } else {
      single = !h[1];
    }
    const double pos = (!single && h[1]) ? s[1] : (h[0] ? s[0] : 0.0);
    int64_t k;
    bool mixed_pair = true;  // how a single score becomes two columns
    if (binary_case_ && all_positive_) {
      k = pos > 0.5 ? 1 : 0;
      mixed_pair = false;
    } else {
      k = pos > 0 ? 1 : 0;
    }
    if (!single) {
      z[0] = static_cast<float>(s[0]);
      z[1] = static_cast<float>(s[1]);
      apply_post_transform(post_, z, 1, 2);
      return k;
    }
    const float p = static_cast<float>(s[0]);
    if (post_ == PostTransform::Probit) {
      // onnxruntime writes only the first column here; the second gets 1 - it.
      z[0] = probit(p);
      z[1] = 1.0f - z[0];
    } else if (!mixed_pair) {
      z[0] = 1.0f - p;
      z[1] = p;
    } else if (post_ == PostTransform::Logistic) {
      z[0] = logistic(-p);
      z[1] = logistic(p);
    } else {
      z[0] = -p;
      z[1] = p;
    }
    return k;
  }

  std::vector<int64_t> label_ints_;
  std::vector<std::string> label_strings_;
  PostTransform post_;
  std::vector<double> base_;
  TreeModel model_;
  bool strings_ = false, binary_case_ = false, all_positive_ = true;
  int64_t classes_ = 0;
};

// TreeEnsemble (ai.onnx.ml 5): integer-coded enums, output in X's dtype.
class TreeEnsembleKernel : public Kernel {
 public:
  explicit TreeEnsembleKernel(const KernelInfo& info) : model_(build_tree_model_v5(info)) {
    const int64_t agg = info.attrs.get_int("aggregate_function", 1);
    static const Aggregate kAggs[] = {Aggregate::Average, Aggregate::Sum, Aggregate::Min, Aggregate::Max};
    if (agg < 0 || agg > 3) info.fail("aggregate_function is {}; expected 0 (AVERAGE) .. 3 (MAX)", agg);
    agg_ = kAggs[agg];
    const int64_t post = info.attrs.get_int("post_transform", 0);
    static const PostTransform kPosts[] = {PostTransform::None, PostTransform::Softmax, PostTransform::Logistic,
                                           PostTransform::SoftmaxZero, PostTransform::Probit};
    if (post < 0 || post > 4) info.fail("post_transform is {}; expected 0 (NONE) .. 4 (PROBIT)", post);
    post_ = kPosts[post];
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64 && x.dtype() != DType::Float16)
      ctx.fail("input has dtype {}; expected float, double or float16", dtype_name(x.dtype()));
    int64_t rows, features;
    rows_and_features(ctx, x, rows, features);
    ctx.allocate_output(0, x.dtype(), {rows, model_.targets});
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    int64_t rows, features;
    rows_and_features(ctx, x, rows, features);
    const int64_t targets = model_.targets;
    Tensor scores = ctx.scratch(DType::Float64, {rows, targets});
    Tensor has = ctx.scratch(DType::UInt8, {rows, targets});
    double* s = scores.mutable_data<double>();
    uint8_t* h = has.mutable_data<uint8_t>();
    run_trees(ctx, model_, agg_, x, rows, features, s, h);
    Tensor& y = ctx.output(0);
    const std::vector<double> no_base;
    if (y.dtype() == DType::Float64 && post_ == PostTransform::None) {
      double* out = y.mutable_data<double>();
      for (int64_t r = 0; r < rows; ++r)
        finalize_regression_row(model_, s + r * targets, h + r * targets, agg_, no_base, targets,
                                out + r * targets);
      return;
    }
    // The post transforms are float routines: finish in float, then store.
    Tensor f = y.dtype() == DType::Float32 ? y : ctx.scratch(DType::Float32, {rows, targets});
    float* out = f.mutable_data<float>();
    for (int64_t r = 0; r < rows; ++r)
      finalize_regression_row(model_, s + r * targets, h + r * targets, agg_, no_base, targets,
                              out + r * targets);
    apply_post_transform(post_, out, rows, targets);
    if (y.dtype() == DType::Float64) {
      for (int64_t i = 0; i < rows * targets; ++i) y.mutable_data<double>()[i] = out[i];
    } else if (y.dtype() == DType::Float16) {
      for (int64_t i = 0; i < rows * targets; ++i) static_cast<uint16_t*>(y.raw_mut())[i] = float_to_half(out[i]);
    }
  }

 private:
  TreeModel model_;
  Aggregate agg_ = Aggregate::Sum;
  PostTransform post_ = PostTransform::None;
};

ONNXMINI_REGISTER_KERNEL("tree_ensemble", "ai.onnx.ml", "TreeEnsembleRegressor", 1, INT_MAX,
                         make_kernel<TreeEnsembleRegressorKernel>);
ONNXMINI_REGISTER_KERNEL("tree_ensemble", "ai.onnx.ml", "TreeEnsembleClassifier", 1, INT_MAX,
                         make_kernel<TreeEnsembleClassifierKernel>);
ONNXMINI_REGISTER_KERNEL("tree_ensemble", "ai.onnx.ml", "TreeEnsemble", 5, INT_MAX, make_kernel<TreeEnsembleKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_tree_ensemble);
