// ai.onnx.ml SVMRegressor and SVMClassifier (kernels LINEAR, POLY, RBF,
// SIGMOID; one-class; pairwise probabilities from prob_a / prob_b).
//
// Layout: X is rows x features (a 1-D X is one row). support_vectors is
// V x features row-major, grouped by class (vectors_per_class). A run first
// fills a rows x V kernel matrix K(x, sv): for the dot-product kernels one
// GEMM (X * SV^T, trans_b) followed by the element-wise gamma / coef0 / power
// or tanh; for RBF a direct squared-distance loop (no |x|^2 + |sv|^2 - 2 x.sv
// expansion: it cancels badly for nearby points). The decision functions are
// then short dot products of a K row with coefficient rows.
//
// Semantics follow onnxruntime (the oracle), including its binary-classifier
// rules and the score layout:
// - "SVC" mode (support vectors given): one decision value per class pair
//   (i, j), i < j; a positive value votes for i. The label is the class with
//   most votes (first on ties). Without prob_a/prob_b the scores output holds
//   the pair values (two columns [-d, d] or [1 - d, d] for two classes); with
//   them, the pair values become probabilities (Platt sigmoid) that are
//   coupled into one probability per class (Wu, Lin and Weng's method, as
//   libsvm does);
// - "linear" mode (no support vectors): score[c] = x . coefficients[c] +
//   rho[0]; the label is the argmax, with onnxruntime's binary thresholds.
#include <algorithm>
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/ml/ml_common.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace ml {
namespace {

enum class SvmKernel { Linear, Poly, Rbf, Sigmoid };

SvmKernel parse_kernel(const KernelInfo& info) {
  const std::string k = info.attrs.get_string("kernel_type", "LINEAR");
  if (k == "LINEAR") return SvmKernel::Linear;
  if (k == "POLY") return SvmKernel::Poly;
  if (k == "RBF") return SvmKernel::Rbf;
  if (k == "SIGMOID") return SvmKernel::Sigmoid;
  info.fail("kernel_type '{}' is not one of LINEAR, POLY, RBF, SIGMOID", k);
}

// The kernel function and its parameters (kernel_params = [gamma, coef0, degree]).
struct KernelFunction {
  SvmKernel type = SvmKernel::Linear;
  float gamma = 0, coef0 = 0, degree = 0;

  explicit KernelFunction(const KernelInfo& info) : type(parse_kernel(info)) {
    const auto params = info.attrs.get_floats("kernel_params", {});
    if (!params.empty() && params.size() < 3)
      info.fail("kernel_params has {} values; expected [gamma, coef0, degree]", params.size());
    if (!params.empty()) {
      gamma = params[0];
      coef0 = params[1];
      degree = params[2];
    }
  }

  // out[r, v] = K(x_r, b_v) for rows x n, b being n x features. The dot
  // kernels run as one GEMM; `bias` is added to a LINEAR kernel's dot.
  void matrix(KernelContext& ctx, const float* x, const float* b, int64_t rows, int64_t n, int64_t features,
              float bias, float* out) const {
    if (type == SvmKernel::Rbf) {
      auto work = [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t v = 0; v < n; ++v) {
            const float* xr = x + r * features;
            const float* bv = b + v * features;
            float sum = 0;
            for (int64_t f = 0; f < features; ++f) {
              const float d = xr[f] - bv[f];
              sum += d * d;
            }
            out[r * n + v] = std::exp(-gamma * sum);
          }
      };
      if (ctx.reference_mode()) work(0, rows);
      else parallel_for(ctx.threads(), rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n * features)), work);
      return;
    }
    if (ctx.reference_mode()) {
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t v = 0; v < n; ++v) {
          float acc = 0;
          for (int64_t f = 0; f < features; ++f) acc += x[r * features + f] * b[v * features + f];
          out[r * n + v] = acc;
        }
    } else {
      gemm::SgemmArgs args;
      args.trans_b = true;
      args.M = rows;
      args.N = n;
      args.K = features;
      args.A = x;
      args.lda = features;
      args.B = b;
      args.ldb = features;
      args.C = out;
      args.ldc = n;
      ctx.gemm().sgemm(args, ctx.threads());
    }
    const int64_t total = rows * n;
    switch (type) {
      case SvmKernel::Linear:
        if (bias != 0)
          for (int64_t i = 0; i < total; ++i) out[i] += bias;
        break;
      case SvmKernel::Poly:
        for (int64_t i = 0; i < total; ++i) out[i] = std::pow(gamma * out[i] + coef0, degree);
        break;
      case SvmKernel::Sigmoid:
        for (int64_t i = 0; i < total; ++i) out[i] = std::tanh(gamma * out[i] + coef0);
        break;
      case SvmKernel::Rbf: break;
    }
  }
};

void check_features(const KernelContext& ctx, int64_t features, int64_t expected) {
  if (features != expected) ctx.fail("input has {} features; the model expects {}", features, expected);
}

class SVMRegressorKernel : public Kernel {
 public:
  explicit SVMRegressorKernel(const KernelInfo& info)
      : kernel_(info),
        support_vectors_(info.attrs.get_floats("support_vectors", {})),
        coefficients_(info.attrs.get_floats("coefficients")),
        rho_(info.attrs.get_floats("rho", {})),
        vectors_(info.attrs.get_int("n_supports", 0)),
        one_class_(info.attrs.get_int("one_class", 0) != 0),
        post_(parse_post_transform(info, info.attrs.get_string("post_transform", "NONE"))) {
    if (rho_.empty()) info.fail("rho is empty; expected one value");
    if (vectors_ < 0) info.fail("n_supports is {}; expected >= 0", vectors_);
    if (vectors_ > 0) {
      if (support_vectors_.empty() || support_vectors_.size() % static_cast<size_t>(vectors_) != 0)
        info.fail("support_vectors has {} values, not a multiple of n_supports ({})", support_vectors_.size(),
                  vectors_);
      features_ = static_cast<int64_t>(support_vectors_.size()) / vectors_;
      if (static_cast<int64_t>(coefficients_.size()) != vectors_)
        info.fail("coefficients has {} values; expected one per support vector ({})", coefficients_.size(), vectors_);
    } else {
      // Linear mode: the coefficients are the weight vector, the kernel is a dot product.
      features_ = static_cast<int64_t>(coefficients_.size());
      kernel_.type = SvmKernel::Linear;
      if (features_ == 0) info.fail("coefficients is empty");
    }
  }

  void prepare(KernelContext& ctx) override {
    int64_t rows, features;
    rows_and_features(ctx, ctx.input(0), rows, features);
    check_features(ctx, features, features_);
    ctx.allocate_output(0, DType::Float32, {rows, 1});
  }

  void compute(KernelContext& ctx) override {
    int64_t rows, features;
    rows_and_features(ctx, ctx.input(0), rows, features);
    check_features(ctx, features, features_);
    Tensor x = input_as_float(ctx, ctx.input(0));
    float* y = ctx.output(0).mutable_data<float>();
    ctx.stats().variant = "svm_kernel_matrix";
    if (vectors_ > 0) {
      Tensor k = ctx.scratch(DType::Float32, {rows, vectors_});
      float* km = k.mutable_data<float>();
      kernel_.matrix(ctx, x.data<float>(), support_vectors_.data(), rows, vectors_, features_, 0.0f, km);
      for (int64_t r = 0; r < rows; ++r) {
        double sum = 0;
        for (int64_t v = 0; v < vectors_; ++v) sum += static_cast<double>(coefficients_[v]) * km[r * vectors_ + v];
        y[r] = static_cast<float>(sum + rho_[0]);
      }
    } else {
      kernel_.matrix(ctx, x.data<float>(), coefficients_.data(), rows, 1, features_, rho_[0], y);
    }
    if (one_class_)
      for (int64_t r = 0; r < rows; ++r) y[r] = y[r] > 0 ? 1.0f : -1.0f;
    apply_post_transform(post_, y, rows, 1);
  }

 private:
  KernelFunction kernel_;
  std::vector<float> support_vectors_, coefficients_, rho_;
  int64_t vectors_, features_ = 0;
  bool one_class_;
  PostTransform post_;
};

// Platt's sigmoid for one pair: P(class i | pair value d).
float pair_probability(float d, float a, float b) { return 1.0f - logistic(d * a + b); }

// Couples k x k pairwise probabilities r (r[i][j] = P(i | i or j)) into k
// class probabilities p: minimises sum_ij (r_ji p_i - r_ij p_j)^2 subject to
// sum p = 1 by coordinate descent (Wu, Lin and Weng 2004, as in libsvm), with
// onnxruntime's stopping rule (max error < 0.005 / k, at most 100 sweeps).
// q (k * k) and qp (k) are caller-provided scratch.
void couple_probabilities(int64_t k, const float* r, float* p, float* q, float* qp) {
  for (int64_t i = 0; i < k; ++i) {
    p[i] = 1.0f / static_cast<float>(k);
    q[i * k + i] = 0;
    for (int64_t j = 0; j < k; ++j) {
      if (j == i) continue;
      q[i * k + i] += r[j * k + i] * r[j * k + i];
      if (j > i) q[i * k + j] = -r[j * k + i] * r[i * k + j];
      else q[i * k + j] = q[j * k + i];
    }
  }
  const float eps = 0.005f / static_cast<float>(k);
  for (int sweep = 0; sweep < 100; ++sweep) {
    float pqp = 0;
    for (int64_t i = 0; i < k; ++i) {
      qp[i] = 0;
      for (int64_t j = 0; j < k; ++j) qp[i] += q[i * k + j] * p[j];
      pqp += p[i] * qp[i];
    }
    float max_error = 0;
    for (int64_t i = 0; i < k; ++i) max_error = std::max(max_error, std::fabs(qp[i] - pqp));
    if (max_error < eps) break;
    for (int64_t i = 0; i < k; ++i) {
      const float diff = (-qp[i] + pqp) / q[i * k + i];
      p[i] += diff;
      pqp = (pqp + diff * (diff * q[i * k + i] + 2 * qp[i])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[i * k + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

class SVMClassifierKernel : public Kernel {
 public:
  explicit SVMClassifierKernel(const KernelInfo& info)
      : kernel_(info),
        support_vectors_(info.attrs.get_floats("support_vectors", {})),
        coefficients_(info.attrs.get_floats("coefficients")),
        rho_(info.attrs.get_floats("rho")),
        prob_a_(info.attrs.get_floats("prob_a", {})),
        prob_b_(info.attrs.get_floats("prob_b", {})),
        per_class_(info.attrs.get_ints("vectors_per_class", {})),
        label_ints_(info.attrs.get_ints("classlabels_ints", {})),
        label_strings_(info.attrs.get_strings("classlabels_strings", {})),
        post_(parse_post_transform(info, info.attrs.get_string("post_transform", "NONE"))) {
    if (label_ints_.empty() == label_strings_.empty())
      info.fail("exactly one of classlabels_ints and classlabels_strings must be given (got {} ints, {} strings)",
                label_ints_.size(), label_strings_.size());
    strings_ = !label_strings_.empty();
    classes_ = static_cast<int64_t>(strings_ ? label_strings_.size() : label_ints_.size());
    if (prob_a_.size() != prob_b_.size())
      info.fail("prob_a has {} values but prob_b has {}; they must be equal", prob_a_.size(), prob_b_.size());
    if (coefficients_.empty()) info.fail("coefficients is empty");
    pairs_ = classes_ * (classes_ - 1) / 2;
    for (size_t c = 0; c < per_class_.size(); ++c) {
      if (per_class_[c] < 0) info.fail("vectors_per_class[{}] is {}; expected >= 0", c, per_class_[c]);
      first_vector_.push_back(vectors_);
      vectors_ += per_class_[c];
    }
    if (vectors_ > 0) {
      if (static_cast<int64_t>(per_class_.size()) != classes_)
        info.fail("vectors_per_class has {} values but there are {} classes", per_class_.size(), classes_);
      if (classes_ < 2) info.fail("{} class label(s); a support-vector classifier needs at least two", classes_);
      if (support_vectors_.size() % static_cast<size_t>(vectors_) != 0 || support_vectors_.empty())
        info.fail("support_vectors has {} values, not a multiple of the {} support vectors", support_vectors_.size(),
                  vectors_);
      features_ = static_cast<int64_t>(support_vectors_.size()) / vectors_;
      if (static_cast<int64_t>(coefficients_.size()) != (classes_ - 1) * vectors_)
        info.fail("coefficients has {} values; expected (classes - 1) x support vectors = {}", coefficients_.size(),
                  (classes_ - 1) * vectors_);
      if (static_cast<int64_t>(rho_.size()) < pairs_)
        info.fail("rho has {} values; expected one per class pair ({})", rho_.size(), pairs_);
      if (!prob_a_.empty() && static_cast<int64_t>(prob_a_.size()) < pairs_)
        info.fail("prob_a has {} values; expected one per class pair ({})", prob_a_.size(), pairs_);
    } else {
      kernel_.type = SvmKernel::Linear;  // liblinear mode: coefficients are classes x features
      if (coefficients_.size() % static_cast<size_t>(std::max<int64_t>(classes_, 1)) != 0)
        info.fail("coefficients has {} values, not a multiple of the {} classes", coefficients_.size(), classes_);
      features_ = static_cast<int64_t>(coefficients_.size()) / classes_;
      if (rho_.empty()) info.fail("rho is empty");
    }
    for (float c : coefficients_)
      if (c < 0) all_positive_ = false;
    proba_ = vectors_ > 0 && !prob_a_.empty();
    score_cols_ = classes_;
    if (vectors_ > 0 && !proba_) score_cols_ = classes_ > 2 ? pairs_ : 2;
  }

  void prepare(KernelContext& ctx) override {
    int64_t rows, features;
    rows_and_features(ctx, ctx.input(0), rows, features);
    check_features(ctx, features, features_);
    ctx.allocate_output(0, strings_ ? DType::String : DType::Int64, {rows});
    ctx.allocate_output(1, DType::Float32, {rows, score_cols_});
  }

  void compute(KernelContext& ctx) override {
    int64_t rows, features;
    rows_and_features(ctx, ctx.input(0), rows, features);
    check_features(ctx, features, features_);
    Tensor x = input_as_float(ctx, ctx.input(0));
    float* z = ctx.output(1).mutable_data<float>();
    ctx.stats().variant = "svm_kernel_matrix";
    if (vectors_ == 0) {
      compute_linear(ctx, x.data<float>(), rows, z);
      return;
    }
    Tensor k = ctx.scratch(DType::Float32, {rows, vectors_});
    float* km = k.mutable_data<float>();
    kernel_.matrix(ctx, x.data<float>(), support_vectors_.data(), rows, vectors_, features_, 0.0f, km);
    Tensor pair_t = ctx.scratch(DType::Float32, {pairs_});
    Tensor votes_t = ctx.scratch(DType::Int64, {classes_});
    Tensor coupling = ctx.scratch(DType::Float32, {proba_ ? 2 * classes_ * classes_ + classes_ : 1});
    float* pair = pair_t.mutable_data<float>();
    int64_t* votes = votes_t.mutable_data<int64_t>();
    for (int64_t r = 0; r < rows; ++r) {
      pair_values(km + r * vectors_, pair, votes);
      const int64_t best = std::max_element(votes, votes + classes_) - votes;
      write_label(ctx.output(0), r, best);
      float* zr = z + r * score_cols_;
      if (proba_) {
        float* rmat = coupling.mutable_data<float>();
        float* q = rmat + classes_ * classes_;
        float* qp = q + classes_ * classes_;
        std::fill(rmat, rmat + classes_ * classes_, 0.0f);
        int64_t idx = 0;
        for (int64_t i = 0; i < classes_; ++i)
          for (int64_t j = i + 1; j < classes_; ++j, ++idx) {
            const float v = std::min(std::max(pair_probability(pair[idx], prob_a_[idx], prob_b_[idx]), 1e-7f),
                                     1 - 1e-7f);
            rmat[i * classes_ + j] = v;
            rmat[j * classes_ + i] = 1 - v;
          }
        couple_probabilities(classes_, rmat, zr, q, qp);
        apply_post_transform(post_, zr, 1, classes_);
      } else if (classes_ > 2) {
        std::copy(pair, pair + pairs_, zr);
        apply_post_transform(post_, zr, 1, pairs_);
      } else {
        write_binary_pair(pair[0], zr);
      }
    }
  }

 private:
  // Decision value of every class pair for one row of kernel values, and the votes.
  void pair_values(const float* kr, float* pair, int64_t* votes) const {
    std::fill(votes, votes + classes_, int64_t{0});
    int64_t idx = 0;
    for (int64_t i = 0; i < classes_; ++i)
      for (int64_t j = i + 1; j < classes_; ++j, ++idx) {
        // Class i's vectors use coefficient row j - 1, class j's use row i.
        double sum = 0;
        const float* ci = coefficients_.data() + (j - 1) * vectors_;
        const float* cj = coefficients_.data() + i * vectors_;
        for (int64_t v = first_vector_[i]; v < first_vector_[i] + per_class_[i]; ++v) sum += ci[v] * kr[v];
        for (int64_t v = first_vector_[j]; v < first_vector_[j] + per_class_[j]; ++v) sum += cj[v] * kr[v];
        sum += rho_[idx];
        pair[idx] = static_cast<float>(sum);
        ++votes[sum > 0 ? i : j];
      }
  }

  // Two classes, no probabilities: onnxruntime writes [-d, d] for NONE,
  // [1 - d, d] for the other transforms, and only PROBIT(d) for PROBIT.
  void write_binary_pair(float d, float* zr) const {
    if (post_ == PostTransform::Probit) {
      zr[0] = probit(d);
      zr[1] = 0;
    } else if (post_ == PostTransform::None) {
      zr[0] = -d;
      zr[1] = d;
    } else {
      zr[0] = 1 - d;
      zr[1] = d;
    }
  }

  void compute_linear(KernelContext& ctx, const float* x, int64_t rows, float* z) {
    kernel_.matrix(ctx, x, coefficients_.data(), rows, classes_, features_, rho_[0], z);
    for (int64_t r = 0; r < rows; ++r) {
      float* zr = z + r * classes_;
      const int64_t best = std::max_element(zr, zr + classes_) - zr;
      const float max_score = zr[best];
      int64_t k = best;
      if (classes_ == 2 && ((all_positive_ && max_score >= 0.5f) || (!all_positive_ && max_score > 0))) k = 1;
      write_label(ctx.output(0), r, k);
      apply_post_transform(post_, zr, 1, classes_);
    }
  }

  void write_label(Tensor& labels, int64_t r, int64_t k) const {
    if (strings_) labels.mutable_data<std::string>()[r] = label_strings_[static_cast<size_t>(k)];
    else labels.mutable_data<int64_t>()[r] = label_ints_[static_cast<size_t>(k)];
  }

  KernelFunction kernel_;
  std::vector<float> support_vectors_, coefficients_, rho_, prob_a_, prob_b_;
  std::vector<int64_t> per_class_, first_vector_;
  std::vector<int64_t> label_ints_;
  std::vector<std::string> label_strings_;
  PostTransform post_;
  bool strings_ = false, all_positive_ = true, proba_ = false;
  int64_t classes_ = 0, pairs_ = 0, vectors_ = 0, features_ = 0, score_cols_ = 0;
};

ONNXMINI_REGISTER_KERNEL("svm", "ai.onnx.ml", "SVMRegressor", 1, INT_MAX, make_kernel<SVMRegressorKernel>);
ONNXMINI_REGISTER_KERNEL("svm", "ai.onnx.ml", "SVMClassifier", 1, INT_MAX, make_kernel<SVMClassifierKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_svm);
