// Shared core of the two loss kernels (NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss, which is NLL applied to a log-softmax).
//
// Data layout: log-probabilities are [N, C, D] (D = product of the trailing
// dims d1..dk, 1 for a 2-D input), targets [N, D]; element (n, d) of the
// unreduced loss is -logp[n, target[n, d], d] * weight[target[n, d]], or 0 when
// the target equals ignore_index. float16 / bfloat16 tensors are widened to
// float32 scratch first (half_float.h), float32 and float64 are read in place;
// sums are kept in the compute type (float32 or float64), like onnxruntime.
#pragma once
#include <cmath>
#include <optional>
#include <string>

#include "core/float16.h"
#include "kernels/kernel.h"

namespace onnxmini {
namespace loss {

enum class Reduction { None, Sum, Mean };

inline Reduction parse_reduction(const KernelInfo& info) {
  const std::string r = info.attrs.get_string("reduction", "mean");
  if (r == "none") return Reduction::None;
  if (r == "sum") return Reduction::Sum;
  if (r == "mean") return Reduction::Mean;
  info.fail("reduction '{}' is not one of none, sum, mean", r);
}

inline std::optional<int64_t> parse_ignore_index(const KernelInfo& info) {
  if (!info.attrs.has("ignore_index")) return std::nullopt;
  return info.attrs.get_int("ignore_index");
}

inline bool is_loss_float(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}

// The geometry of a loss input [N, C, d1..dk] against its target [N, d1..dk]
// and optional weight [C]; fails naming the node and the shapes.
struct LossShape {
  int64_t n = 0, c = 0, d = 1;
  Shape unreduced;  // [N, d1..dk]
};

inline LossShape check_loss_shapes(const KernelContext& ctx, const Tensor& x, const Tensor& target,
                                   const Tensor* weight, const char* x_name) {
  if (!is_loss_float(x.dtype()))
    ctx.unsupported("{} dtype {} is not supported (float32, float64, float16, bfloat16)", x_name,
                    dtype_name(x.dtype()));
  if (target.dtype() != DType::Int32 && target.dtype() != DType::Int64)
    ctx.fail("target must be int32 or int64, got {}", dtype_name(target.dtype()));
  if (x.rank() < 2) ctx.fail("{} must have rank >= 2 [N, C, ...], got shape {}", x_name, shape_to_string(x.shape()));
  LossShape s;
  s.n = x.dim(0);
  s.c = x.dim(1);
  s.unreduced.push_back(s.n);
  for (size_t i = 2; i < x.rank(); ++i) {
    s.d *= x.dim(i);
    s.unreduced.push_back(x.dim(i));
  }
  if (target.shape() != s.unreduced)
    ctx.fail("target shape {} does not match {} shape {} (want {})", shape_to_string(target.shape()), x_name,
             shape_to_string(x.shape()), shape_to_string(s.unreduced));
  if (weight) {
    if (weight->dtype() != x.dtype())
      ctx.fail("weight dtype {} differs from {} dtype {}", dtype_name(weight->dtype()), x_name, dtype_name(x.dtype()));
    if (weight->rank() != 1 || weight->dim(0) != s.c)
      ctx.fail("weight must be 1-D of length C = {}, got shape {}", s.c, shape_to_string(weight->shape()));
  }
  return s;
}

inline int64_t target_at(const Tensor& target, int64_t i) {
  return target.dtype() == DType::Int64 ? target.data<int64_t>()[i] : target.data<int32_t>()[i];
}

// A float tensor as Acc values: in place for float32 / float64 (Acc matching),
// widened into `scratch` for float16 / bfloat16 (Acc = float).
template <typename Acc>
const Acc* as_compute(KernelContext& ctx, const Tensor& t, Tensor& scratch) {
  if (t.dtype() == dtype_of<Acc>::value) return t.data<Acc>();
  scratch = ctx.scratch(DType::Float32, t.shape());
  float* dst = scratch.mutable_data<float>();
  const auto* src = static_cast<const uint16_t*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i)
    dst[i] = t.dtype() == DType::Float16 ? half_to_float(src[i]) : bfloat16_to_float(src[i]);
  return reinterpret_cast<const Acc*>(dst);
}

// Writes `n` Acc values into tensor `out` of the op's dtype (rounding for halves).
template <typename Acc>
void store(const Acc* src, Tensor& out) {
  const int64_t n = out.numel();
  switch (out.dtype()) {
    case DType::Float16: {
      auto* d = static_cast<uint16_t*>(out.raw_mut());
      for (int64_t i = 0; i < n; ++i) d[i] = float_to_half(static_cast<float>(src[i]));
      break;
    }
    case DType::BFloat16: {
      auto* d = static_cast<uint16_t*>(out.raw_mut());
      for (int64_t i = 0; i < n; ++i) d[i] = float_to_bfloat16(static_cast<float>(src[i]));
      break;
    }
    default: {
      Acc* d = static_cast<Acc*>(out.raw_mut());
      if (d != src) std::copy(src, src + n, d);
    }
  }
}

// The NLL of log-probabilities `logp` [N, C, D]: fills `unreduced` [N, D] when
// reduction is None, else returns the sum or the weighted mean. Every target is
// checked against [0, C) (unless it is ignore_index) before it indexes.
template <typename Acc>
Acc nll(const KernelContext& ctx, const Acc* logp, const Tensor& target, const Acc* weight, const LossShape& s,
        std::optional<int64_t> ignore_index, Reduction reduction, Acc* unreduced) {
  Acc total = 0, weight_sum = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t d = 0; d < s.d; ++d) {
      const int64_t i = n * s.d + d, t = target_at(target, i);
      Acc loss = 0, w = 0;
      if (!(ignore_index && t == *ignore_index)) {
        if (t < 0 || t >= s.c)
          ctx.fail("target {} at position {} is out of range [0, {}) (ignore_index {})", t, i, s.c,
                   ignore_index ? std::to_string(*ignore_index) : std::string("unset"));
        w = weight ? weight[t] : Acc(1);
        loss = -logp[(n * s.c + t) * s.d + d] * w;
      }
      if (unreduced) unreduced[i] = loss;
      total += loss;
      weight_sum += w;
    }
  if (reduction == Reduction::Mean) return total / weight_sum;  // all ignored: 0 / 0, NaN as in onnxruntime
  return total;
}

}  // namespace loss
}  // namespace onnxmini
