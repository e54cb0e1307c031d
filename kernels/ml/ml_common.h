// Shared pieces of the ai.onnx.ml kernels: the score post-transforms of the
// linear models (with onnxruntime's exact formulas, so scores match it bit for
// bit where possible), the 2-D view of a feature input, and input conversion
// to float32.
//
// Layout: every ml op here sees its input as rows x features, row-major. A 1-D
// input [C] is one row of C features; a 2-D input [N, C] is N rows.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include "kernels/kernel.h"

namespace onnxmini {
namespace ml {

enum class PostTransform { None, Logistic, Softmax, SoftmaxZero, Probit };

// "NONE", "LOGISTIC", ... ; anything else is a model error naming the node.
PostTransform parse_post_transform(const KernelInfo& info, const std::string& name);
const char* post_transform_name(PostTransform t);

// 1 / (1 + e^-x), computed on -|x| so exp never overflows.
inline float logistic(float x) {
  const float v = 1.0f / (1.0f + std::exp(-std::fabs(x)));
  return x < 0 ? 1.0f - v : v;
}

// Inverse of erf by Winitzki's closed-form approximation (a = 0.147). This is
// what onnxruntime uses for PROBIT, so we use it too: an exact erfinv would
// differ from onnxruntime by up to ~2e-3.
inline float erfinv_approx(float x) {
  const float sgn = x < 0 ? -1.0f : 1.0f;
  const float one_minus_x2 = (1 - x) * (1 + x);
  const float ln = std::log(one_minus_x2);
  const float a = 2 / (3.14159265358979f * 0.147f) + 0.5f * ln;
  const float b = 1 / 0.147f * ln;
  return sgn * std::sqrt(-a + std::sqrt(a * a - b));
}

// probit(p) = sqrt(2) * erfinv(2p - 1): the standard normal quantile of p.
inline float probit(float p) { return 1.41421356f * erfinv_approx(2 * p - 1); }

// Applies `t` in place to `rows` rows of `cols` scores (row-major).
// cols == 1 is onnxruntime's "binary case": only PROBIT changes the score.
void apply_post_transform(PostTransform t, float* scores, int64_t rows, int64_t cols);

// rows x features of a feature input: [C] -> 1 x C, [N, C] -> N x C.
// Fails (naming the node) for rank 0 or rank > 2.
void rows_and_features(const KernelContext& ctx, const Tensor& x, int64_t& rows, int64_t& features);

// The input as float32: the tensor itself when already float, else a converted
// copy from the run's pool (double, int64, int32 accepted).
Tensor input_as_float(KernelContext& ctx, const Tensor& x);

}  // namespace ml
}  // namespace onnxmini
