#include "kernels/ml/ml_common.h"

#include <algorithm>
#include <limits>

namespace onnxmini {
namespace ml {

PostTransform parse_post_transform(const KernelInfo& info, const std::string& name) {
  if (name == "NONE") return PostTransform::None;
  if (name == "LOGISTIC") return PostTransform::Logistic;
  if (name == "SOFTMAX") return PostTransform::Softmax;
  if (name == "SOFTMAX_ZERO") return PostTransform::SoftmaxZero;
  if (name == "PROBIT") return PostTransform::Probit;
  info.fail("post_transform '{}' is not one of NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO, PROBIT", name);
}

const char* post_transform_name(PostTransform t) {
  switch (t) {
    case PostTransform::None: return "NONE";
    case PostTransform::Logistic: return "LOGISTIC";
    case PostTransform::Softmax: return "SOFTMAX";
    case PostTransform::SoftmaxZero: return "SOFTMAX_ZERO";
    case PostTransform::Probit: return "PROBIT";
  }
  return "?";
}

namespace {

// Softmax over one row, max subtracted first for stability.
void softmax_row(float* s, int64_t n) {
  float mx = -std::numeric_limits<float>::max();
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, s[i]);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    s[i] = std::exp(s[i] - mx);
    sum += s[i];
  }
  for (int64_t i = 0; i < n; ++i) s[i] /= sum;
}

// SOFTMAX_ZERO: like softmax, but a score that is (almost) exactly zero stays
// (almost) zero instead of becoming exp(0 - max): a zero means "no vote".
void softmax_zero_row(float* s, int64_t n) {
  float mx = -std::numeric_limits<float>::max();
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, s[i]);
  const float exp_neg_max = std::exp(-mx);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (s[i] > 1e-7f || s[i] < -1e-7f) {
      s[i] = std::exp(s[i] - mx);
      sum += s[i];
    } else {
      s[i] *= exp_neg_max;
    }
  }
  for (int64_t i = 0; i < n; ++i) s[i] /= sum;
}

}  // namespace

void apply_post_transform(PostTransform t, float* scores, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  if (cols == 1) {
    // onnxruntime applies only PROBIT to a single score column.
    if (t == PostTransform::Probit)
      for (int64_t i = 0; i < n; ++i) scores[i] = probit(scores[i]);
    return;
  }
  switch (t) {
    case PostTransform::None: break;
    case PostTransform::Logistic:
      for (int64_t i = 0; i < n; ++i) scores[i] = logistic(scores[i]);
      break;
    case PostTransform::Probit:
      for (int64_t i = 0; i < n; ++i) scores[i] = probit(scores[i]);
      break;
    case PostTransform::Softmax:
      for (int64_t r = 0; r < rows; ++r) softmax_row(scores + r * cols, cols);
      break;
    case PostTransform::SoftmaxZero:
      for (int64_t r = 0; r < rows; ++r) softmax_zero_row(scores + r * cols, cols);
      break;
  }
}

void rows_and_features(const KernelContext& ctx, const Tensor& x, int64_t& rows, int64_t& features) {
  if (x.rank() == 1) {
    rows = 1;
    features = x.dim(0);
  } else if (x.rank() == 2) {
    rows = x.dim(0);
    features = x.dim(1);
  } else {
    ctx.fail("input has shape {} (rank {}); expected [features] or [rows, features]", shape_to_string(x.shape()),
             x.rank());
  }
}

namespace {
template <typename T>
void convert_to_float(const Tensor& x, Tensor& out) {
  const T* src = x.data<T>();
  float* dst = out.mutable_data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) dst[i] = static_cast<float>(src[i]);
}
}  // namespace

Tensor input_as_float(KernelContext& ctx, const Tensor& x) {
  if (x.dtype() == DType::Float32) return x;
  Tensor out = ctx.scratch(DType::Float32, x.shape());
  switch (x.dtype()) {
    case DType::Float64: convert_to_float<double>(x, out); break;
    case DType::Int64: convert_to_float<int64_t>(x, out); break;
    case DType::Int32: convert_to_float<int32_t>(x, out); break;
    default: ctx.fail("input has dtype {}; expected float, double, int64 or int32", dtype_name(x.dtype()));
  }
  return out;
}

}  // namespace ml
}  // namespace onnxmini
