// LinearAttention (opset 27): recurrent linear attention (linear, gated, delta and
// gated-delta rules, GQA) for prefill (T > 1) and decode (T = 1).
//
// Layout: query (B, T, Hq*dk), key (B, T, Hkv*dk), value (B, T, Hkv*dv), heads packed in
// the last axis; decay (B, T, Hkv) per head or (B, T, Hkv*dk) per key dim; beta (B, T, Hkv)
// or (B, T, 1); past_state / present_state (B, Hkv, dk, dv). float32 / float16 / bfloat16,
// computed in float32 (the reference mode accumulates the dot products in double).
//
// One task per (batch, kv head) holds its state S (dk x dv floats) and walks the tokens in
// order, as the recurrence requires: per token, S *= exp(g) (gated), v <- beta * (v - S^T k)
// (delta), S += k v^T, then each of the group's query heads reads o = scale * q^T S.
// chunk_size is a tuning hint for chunked algorithms and does not change the result.
#include <cmath>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/attention/float_rows.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace attention {
namespace {

class LinearAttentionKernel : public Kernel {
 public:
  explicit LinearAttentionKernel(const KernelInfo& info) {
    if (!info.attrs.has("q_num_heads") || !info.attrs.has("kv_num_heads"))
      info.fail("q_num_heads and kv_num_heads are required");
    hq_ = info.attrs.get_int("q_num_heads");
    hkv_ = info.attrs.get_int("kv_num_heads");
    if (hq_ <= 0 || hkv_ <= 0 || hq_ % hkv_ != 0)
      info.fail("q_num_heads {} must be a positive multiple of kv_num_heads {}", hq_, hkv_);
    scale_attr_ = info.attrs.get_float("scale", 0.f);
    const std::string rule = info.attrs.get_string("update_rule", "gated_delta");
    if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
      info.fail("update_rule must be linear, gated, delta or gated_delta, got '{}'", rule);
    gated_ = rule == "gated" || rule == "gated_delta";
    delta_ = rule == "delta" || rule == "gated_delta";
    rule_ = rule;
  }

  void prepare(KernelContext& ctx) override {
    const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
    const DType t = q.dtype();
    if (t != DType::Float32 && t != DType::Float16 && t != DType::BFloat16)
      ctx.unsupported("dtype {} is not supported (float, float16, bfloat16)", dtype_name(t));
    for (const Tensor* x : {&q, &k, &v})
      if (x->rank() != 3 || x->dtype() != t)
        ctx.fail("query / key / value must be {} of rank 3 (B, T, H*D), got {} / {} / {}", dtype_name(t),
                 shape_to_string(q.shape()), shape_to_string(k.shape()), shape_to_string(v.shape()));
    B_ = q.dim(0);
    T_ = q.dim(1);
    if (k.dim(0) != B_ || v.dim(0) != B_ || k.dim(1) != T_ || v.dim(1) != T_)
      ctx.fail("query {}, key {}, value {} differ in batch or sequence length", shape_to_string(q.shape()),
               shape_to_string(k.shape()), shape_to_string(v.shape()));
    if (q.dim(2) % hq_ != 0 || k.dim(2) % hkv_ != 0 || v.dim(2) % hkv_ != 0)
      ctx.fail("query's last dim {} / key's {} / value's {} are not multiples of q_num_heads {} / kv_num_heads {}",
               q.dim(2), k.dim(2), v.dim(2), hq_, hkv_);
    dk_ = q.dim(2) / hq_;
    dv_ = v.dim(2) / hkv_;
    if (k.dim(2) / hkv_ != dk_) ctx.fail("key head size {} differs from query head size {}", k.dim(2) / hkv_, dk_);
    DType state_type = t;
    if (ctx.has_input(3)) {
      const Tensor& p = ctx.input(3);
      if (p.shape() != Shape{B_, hkv_, dk_, dv_} ||
          (p.dtype() != DType::Float32 && p.dtype() != DType::Float16 && p.dtype() != DType::BFloat16))
        ctx.fail("past_state is {} {}, expected a float type of shape ({}, {}, {}, {})", dtype_name(p.dtype()),
                 shape_to_string(p.shape()), B_, hkv_, dk_, dv_);
      state_type = p.dtype();
    }
    if (gated_ != ctx.has_input(4))
      ctx.fail("update_rule '{}' {} the decay input", rule_, gated_ ? "requires" : "forbids");
    if (delta_ != ctx.has_input(5))
      ctx.fail("update_rule '{}' {} the beta input", rule_, delta_ ? "requires" : "forbids");
    for (size_t i : {4, 5})
      if (ctx.has_input(i) && !is_attention_float(ctx.input(i).dtype()))
        ctx.fail("{} has dtype {}, expected a float type", i == 4 ? "decay" : "beta", dtype_name(ctx.input(i).dtype()));
    if (gated_) {
      const Tensor& g = ctx.input(4);
      if (g.rank() != 3 || g.dim(0) != B_ || g.dim(1) != T_ || (g.dim(2) != hkv_ && g.dim(2) != hkv_ * dk_))
        ctx.fail("decay has shape {}, expected ({}, {}, {}) or ({}, {}, {})", shape_to_string(g.shape()), B_, T_, hkv_,
                 B_, T_, hkv_ * dk_);
    }
    if (delta_) {
      const Tensor& b = ctx.input(5);
      if (b.rank() != 3 || b.dim(0) != B_ || b.dim(1) != T_ || (b.dim(2) != hkv_ && b.dim(2) != 1))
        ctx.fail("beta has shape {}, expected ({}, {}, {}) or ({}, {}, 1)", shape_to_string(b.shape()), B_, T_, hkv_,
                 B_, T_);
    }
    ctx.allocate_output(0, t, {B_, T_, hq_ * dv_});
    if (ctx.output_wanted(1)) ctx.allocate_output(1, state_type, {B_, hkv_, dk_, dv_});
  }

  void compute(KernelContext& ctx) override {
    const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
    const DType t = q.dtype();
    const bool reference = ctx.reference_mode();
    const AttentionLanes& lanes = attention_lanes_for(reference ? cpu::Isa::Portable : attention_isa());
    const float scale = scale_attr_ != 0.f ? scale_attr_ : 1.f / std::sqrt(static_cast<float>(dk_));
    const int64_t group = hq_ / hkv_;
    const int64_t decay_width = gated_ ? ctx.input(4).dim(2) : 0, beta_width = delta_ ? ctx.input(5).dim(2) : 0;
    ctx.stats().flops = static_cast<double>(B_) * T_ * (hkv_ * dk_ * dv_ * (delta_ ? 6.0 : 3.0) + hq_ * 2.0 * dk_ * dv_);
    ctx.stats().variant = reference ? "linear_attention_reference" : "linear_attention_recurrent";
    Tensor& out = ctx.output(0);
    parallel_for(reference ? nullptr : ctx.threads(), B_ * hkv_, 1, [&](int64_t r0, int64_t r1) {
      std::vector<float> S(dk_ * dv_), kt(dk_), vt(dv_), qt(dk_), ot(dv_), g(dk_), beta(1), decay_row(decay_width);
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / hkv_, h = r % hkv_;
        if (ctx.has_input(3))
          read_floats(ctx.input(3).dtype(), ctx.input(3).raw(), r * dk_ * dv_, dk_ * dv_, S.data(), lanes);
        else
          std::fill(S.begin(), S.end(), 0.f);
        for (int64_t i = 0; i < T_; ++i) {
          const int64_t bt = b * T_ + i;
          read_floats(t, k.raw(), (bt * hkv_ + h) * dk_, dk_, kt.data(), lanes);
          read_floats(t, v.raw(), (bt * hkv_ + h) * dv_, dv_, vt.data(), lanes);
          if (gated_) {  // S *= exp(g), g per head or per key dim (rows of S)
            const Tensor& dg = ctx.input(4);
            if (decay_width == hkv_) {
              read_floats(dg.dtype(), dg.raw(), bt * hkv_ + h, 1, g.data(), lanes);
              std::fill(g.begin() + 1, g.end(), g[0]);
            } else {
              read_floats(dg.dtype(), dg.raw(), (bt * hkv_ + h) * dk_, dk_, g.data(), lanes);
            }
            for (int64_t d = 0; d < dk_; ++d) {
              const float e = std::exp(g[d]);
              for (int64_t m = 0; m < dv_; ++m) S[d * dv_ + m] *= e;
            }
          }
          if (delta_) {  // v <- beta * (v - S^T k)
            const Tensor& bb = ctx.input(5);
            read_floats(bb.dtype(), bb.raw(), bt * beta_width + (beta_width == 1 ? 0 : h), 1, beta.data(), lanes);
            for (int64_t m = 0; m < dv_; ++m) {
              double acc = 0;
              for (int64_t d = 0; d < dk_; ++d) acc += static_cast<double>(S[d * dv_ + m]) * kt[d];
              vt[m] = beta[0] * (vt[m] - static_cast<float>(acc));
            }
          }
          for (int64_t d = 0; d < dk_; ++d)  // S += k v^T
            for (int64_t m = 0; m < dv_; ++m) S[d * dv_ + m] += kt[d] * vt[m];
          for (int64_t hq = h * group; hq < (h + 1) * group; ++hq) {  // o = scale * q^T S
            read_floats(t, q.raw(), (bt * hq_ + hq) * dk_, dk_, qt.data(), lanes);
            if (reference) {
              for (int64_t m = 0; m < dv_; ++m) {
                double acc = 0;
                for (int64_t d = 0; d < dk_; ++d) acc += static_cast<double>(qt[d]) * S[d * dv_ + m];
                ot[m] = static_cast<float>(scale * acc);
              }
            } else {
              std::fill(ot.begin(), ot.end(), 0.f);
              for (int64_t d = 0; d < dk_; ++d) {
                const float qd = qt[d] * scale;
                const float* Sd = &S[d * dv_];
                for (int64_t m = 0; m < dv_; ++m) ot[m] += qd * Sd[m];
              }
            }
            write_floats(t, out.raw_mut(), (bt * hq_ + hq) * dv_, dv_, ot.data(), lanes);
          }
        }
        if (ctx.output_wanted(1))
          write_floats(ctx.output(1).dtype(), ctx.output(1).raw_mut(), r * dk_ * dv_, dk_ * dv_, S.data(), lanes);
      }
    });
  }

 private:
  int64_t hq_ = 0, hkv_ = 0, B_ = 0, T_ = 0, dk_ = 0, dv_ = 0;
  float scale_attr_ = 0.f;
  bool gated_ = false, delta_ = false;
  std::string rule_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("linear_attention", "", "LinearAttention", 27, INT_MAX, make_kernel<LinearAttentionKernel>);

}  // namespace attention
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(attention_linear_attention);
