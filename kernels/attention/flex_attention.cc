// FlexAttention (ai.onnx.preview 1): scaled dot-product attention over rank-4
// Q (B, Hq, L, E), K (B, Hkv, S, E), V (B, Hkv, S, Ev) with user subgraphs at two
// stages: scores = score_mod(Q K^T * scale), probs = prob_mod(Softmax(scores)),
// Y = probs V. Query head h uses K/V head h / (Hq / Hkv) (GQA).
//
// The modifiers see the whole (B, Hq, L, S) tensor, so this kernel materialises the
// scores (no blocking: a mask written by score_mod may depend on any index) in the
// softmax precision - float32, or double for double inputs or softmax_precision = 11 -
// runs each subgraph through its Subgraph handle, and rounds Y once to Q's type
// (float, double, float16, bfloat16). Threads split (batch, head) pairs.
#include <cmath>
#include <limits>
#include <vector>

#include "core/float16.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace attention {
namespace {

template <typename C>
std::vector<C> widen(const Tensor& t) {
  std::vector<C> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype()) {
      case DType::Float32: out[i] = static_cast<C>(t.data<float>()[i]); break;
      case DType::Float64: out[i] = static_cast<C>(t.data<double>()[i]); break;
      case DType::Float16: out[i] = static_cast<C>(half_to_float(static_cast<const uint16_t*>(t.raw())[i])); break;
      default: out[i] = static_cast<C>(bfloat16_to_float(static_cast<const uint16_t*>(t.raw())[i])); break;
    }
  }
  return out;
}

template <typename C>
void narrow(const std::vector<C>& v, Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype()) {
      case DType::Float32: t.mutable_data<float>()[i] = static_cast<float>(v[i]); break;
      case DType::Float64: t.mutable_data<double>()[i] = static_cast<double>(v[i]); break;
      case DType::Float16: static_cast<uint16_t*>(t.raw_mut())[i] = float_to_half(static_cast<float>(v[i])); break;
      default: static_cast<uint16_t*>(t.raw_mut())[i] = float_to_bfloat16(static_cast<float>(v[i])); break;
    }
  }
}

bool is_float_type(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}

class FlexAttentionKernel : public Kernel {
 public:
  explicit FlexAttentionKernel(const KernelInfo& info) : scale_attr_(info.attrs.get_float("scale", 0.f)) {
    for (const auto& [name, graph] : info.subgraphs) {
      if (name == "score_mod") score_mod_ = graph;
      if (name == "prob_mod") prob_mod_ = graph;
    }
    for (const Subgraph* g : {score_mod_, prob_mod_})
      if (g && (g->num_inputs() != 1 || g->num_outputs() != 1))
        info.fail("{} must have one input and one output, has {} and {}", g == score_mod_ ? "score_mod" : "prob_mod",
                  g->num_inputs(), g->num_outputs());
    precision_ = info.attrs.get_int("softmax_precision", 0);
    if (precision_ != 0 && precision_ != 1 && precision_ != 11)
      info.unsupported("softmax_precision {} is not supported (1: float32, 11: double)", precision_);
  }

  void prepare(KernelContext& ctx) override {
    const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
    if (!is_float_type(q.dtype())) ctx.unsupported("dtype {} is not supported (float, double, float16, bfloat16)", dtype_name(q.dtype()));
    for (const Tensor* t : {&q, &k, &v})
      if (t->rank() != 4 || t->dtype() != q.dtype())
        ctx.fail("Q, K, V must be rank-4 tensors of one type, got {} {} / {} {} / {} {}", dtype_name(q.dtype()),
                 shape_to_string(q.shape()), dtype_name(k.dtype()), shape_to_string(k.shape()), dtype_name(v.dtype()),
                 shape_to_string(v.shape()));
    if (k.dim(0) != q.dim(0) || v.dim(0) != q.dim(0) || k.dim(1) != v.dim(1) || k.dim(2) != v.dim(2) ||
        k.dim(3) != q.dim(3) || k.dim(1) == 0 || q.dim(1) % k.dim(1) != 0)
      ctx.fail("shapes Q {}, K {}, V {} do not fit (B, Hq, L, E), (B, Hkv, S, E), (B, Hkv, S, Ev) with Hq a multiple of Hkv",
               shape_to_string(q.shape()), shape_to_string(k.shape()), shape_to_string(v.shape()));
    ctx.allocate_output(0, q.dtype(), {q.dim(0), q.dim(1), q.dim(2), v.dim(3)});
  }

  void compute(KernelContext& ctx) override {
    const bool use_double = precision_ == 11 || (precision_ == 0 && ctx.input(0).dtype() == DType::Float64);
    ctx.stats().variant = "flex_attention_materialized";
    if (use_double) run<double>(ctx);
    else run<float>(ctx);
  }

 private:
  // Runs a modifier on `t` (B, Hq, L, S) and checks its result keeps shape and type.
  Tensor modify(KernelContext& ctx, const Subgraph* g, const char* what, Tensor t) const {
    if (!g) return t;
    std::vector<Value> outs;
    g->run(ctx, {Value(t)}, outs);
    if (outs.size() != 1 || !outs[0].is_tensor()) ctx.fail("{} must return one tensor", what);
    Tensor r = outs[0].tensor();
    if (r.shape() != t.shape() || r.dtype() != t.dtype())
      ctx.fail("{} returned {} {}, expected {} {}", what, dtype_name(r.dtype()), shape_to_string(r.shape()),
               dtype_name(t.dtype()), shape_to_string(t.shape()));
    return r;
  }

  template <typename C>
  void run(KernelContext& ctx) {
    const Tensor &qt = ctx.input(0), &kt = ctx.input(1), &vt = ctx.input(2);
    const int64_t B = qt.dim(0), Hq = qt.dim(1), L = qt.dim(2), E = qt.dim(3), Hkv = kt.dim(1), S = kt.dim(2),
                  Ev = vt.dim(3), group = Hq / Hkv;
    const std::vector<C> q = widen<C>(qt), k = widen<C>(kt), v = widen<C>(vt);
    const C scale = scale_attr_ != 0.f ? static_cast<C>(scale_attr_) : C(1) / std::sqrt(static_cast<C>(E));
    ctx.stats().flops = 2.0 * B * Hq * L * S * (E + Ev);
    Tensor scores = ctx.scratch(dtype_of<C>::value, {B, Hq, L, S});
    C* sc = scores.mutable_data<C>();
    parallel_for(ctx.threads(), B * Hq, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t b = p / Hq, h = p % Hq, kvh = b * Hkv + h / group;
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < S; ++j) {
            C acc = 0;
            for (int64_t e = 0; e < E; ++e) acc += q[(p * L + i) * E + e] * k[(kvh * S + j) * E + e];
            sc[(p * L + i) * S + j] = acc * scale;
          }
      }
    });
    Tensor probs = modify(ctx, score_mod_, "score_mod", scores);
    if (probs.raw() == scores.raw()) probs = scores;  // no modifier: softmax in place
    else probs = probs.clone();
    C* pr = probs.mutable_data<C>();
    parallel_for(ctx.threads(), B * Hq * L, std::max<int64_t>(1, 1024 / std::max<int64_t>(1, S)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {  // softmax of one row (an all -inf row gives NaN, as Softmax does)
        C* row = pr + r * S;
        C mx = -std::numeric_limits<C>::infinity();
        for (int64_t j = 0; j < S; ++j) mx = std::max(mx, row[j]);
        C sum = 0;
        for (int64_t j = 0; j < S; ++j) sum += (row[j] = std::exp(row[j] - mx));
        for (int64_t j = 0; j < S; ++j) row[j] /= sum;
      }
    });
    const Tensor final_probs = modify(ctx, prob_mod_, "prob_mod", probs);
    const C* fp = final_probs.data<C>();
    std::vector<C> y(static_cast<size_t>(B * Hq * L * Ev));
    parallel_for(ctx.threads(), B * Hq, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t b = p / Hq, h = p % Hq, kvh = b * Hkv + h / group;
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < S; ++j) {
            const C w = fp[(p * L + i) * S + j];
            for (int64_t e = 0; e < Ev; ++e) y[(p * L + i) * Ev + e] += w * v[(kvh * S + j) * Ev + e];
          }
      }
    });
    narrow(y, ctx.output(0));
  }

  float scale_attr_;
  int64_t precision_ = 0;
  const Subgraph* score_mod_ = nullptr;
  const Subgraph* prob_mod_ = nullptr;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("flex_attention", "ai.onnx.preview", "FlexAttention", 1, INT_MAX,
                         make_kernel<FlexAttentionKernel>);

}  // namespace attention
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(attention_flex_attention);
