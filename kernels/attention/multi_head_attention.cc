// com.microsoft MultiHeadAttention (onnxruntime's contrib op, written by its transformer
// optimizer for BERT / ViT / decoder models), on the fused Attention kernel.
//
// Inputs: query (B, S, N*H); key (B, L, N*H) or (B, N, L, H); value (B, L, N*Hv) or
// (B, N, L, Hv); bias (N*H + N*H + N*Hv) added to 3-D query / key / value first;
// key_padding_mask int32 (B, T) (0 masks the key) or (B) (the valid key count);
// attention_bias (B or 1, N or 1, S, T), added to the scores; past_key / past_value
// (B, N, P, H / Hv) put before the new keys (T = P + L). Attributes: num_heads,
// scale (default 1/sqrt(H)), unidirectional (key j visible from query i iff
// j <= i + P), mask_filter_value (added where the padding mask masks, default -10000, a
// finite value as onnxruntime adds it). Outputs: output (B, S, N*Hv), present_key /
// present_value (B, N, T, H / Hv).
//
// The padding mask and attention_bias are folded into one float32 additive mask of shape
// (B or 1, N or 1, S or 1, T) per run, then the plan goes to run_attention_fused (or the
// reference loops). The packed QKV / KV layouts, past_sequence_length, cache_indirection
// and the qk output are refused.
#include <vector>

#include "kernels/attention/attention_plan.h"
#include "kernels/attention/float_rows.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace attention {
namespace {

enum Input { kQ, kK, kV, kBias, kPadMask, kAttnBias, kPastK, kPastV, kPastSeqLen, kCacheIndirection };

class MultiHeadAttentionKernel : public Kernel {
 public:
  explicit MultiHeadAttentionKernel(const KernelInfo& info)
      : heads_(info.attrs.get_int("num_heads", 0)),
        scale_(info.attrs.get_float("scale", 0.f)),
        causal_(info.attrs.get_int("unidirectional", 0) != 0),
        mask_filter_(info.attrs.get_float("mask_filter_value", -10000.f)) {
    if (heads_ <= 0) info.fail("num_heads {} must be positive", heads_);
    if (!info.has_input(kK) || !info.has_input(kV))
      info.unsupported("packed QKV / KV inputs (key or value absent) are not supported");
    if (info.has_input(kPastSeqLen) || info.has_input(kCacheIndirection))
      info.unsupported("past_sequence_length / cache_indirection (decoder-masked attention) are not supported");
    if (info.has_input(kPastK) != info.has_input(kPastV)) info.fail("past_key and past_value must be given together");
    if (info.num_outputs > 3 && info.output_present.size() > 3 && info.output_present[3])
      info.unsupported("the qk output is not supported");
  }

  void prepare(KernelContext& ctx) override {
    const AttentionPlan p = make_plan(ctx);
    const DType t = ctx.input(kQ).dtype();
    ctx.allocate_output(0, t, {p.batch, p.q_len, p.q_heads * p.v_head_size});
    if (ctx.output_wanted(1)) ctx.allocate_output(1, t, {p.batch, p.kv_heads, p.total_len, p.head_size});
    if (ctx.output_wanted(2)) ctx.allocate_output(2, t, {p.batch, p.kv_heads, p.total_len, p.v_head_size});
  }

  void compute(KernelContext& ctx) override {
    AttentionPlan p = make_plan(ctx);
    const DType t = ctx.input(kQ).dtype();
    // Q, K, V with the bias added (3-D inputs only), in the inputs' type.
    Tensor q = ctx.input(kQ), k = ctx.input(kK), v = ctx.input(kV);
    if (ctx.has_input(kBias)) {
      const Tensor& bias = ctx.input(kBias);
      const int64_t hq = p.q_heads * p.head_size, hv = p.q_heads * p.v_head_size;
      q = add_bias(ctx, q, bias, 0, hq);
      k = add_bias(ctx, k, bias, hq, hq);
      v = add_bias(ctx, v, bias, 2 * hq, hv);
    }
    Tensor mask;
    if (ctx.has_input(kPadMask) || ctx.has_input(kAttnBias)) {
      mask = build_mask(ctx, p);
      p.mask = &mask;
    }
    AttentionIo io;
    io.qk_type = io.v_type = t;
    io.q = q.raw(), io.k = k.raw(), io.v = v.raw();
    if (ctx.has_input(kPastK)) io.past_k = ctx.input(kPastK).raw(), io.past_v = ctx.input(kPastV).raw();
    io.y = ctx.output(0).raw_mut();
    if (ctx.output_wanted(1)) copy_present(p, io, true, ctx.output(1).raw_mut());
    if (ctx.output_wanted(2)) copy_present(p, io, false, ctx.output(2).raw_mut());
    ctx.stats().flops = 2.0 * p.batch * p.q_heads * p.q_len * p.total_len * (p.head_size + p.v_head_size);
    if (ctx.reference_mode()) {
      ctx.stats().variant = "mha_reference";
      run_attention_reference(p, io);
    } else {
      ctx.stats().variant = run_attention_fused(p, io, ctx.threads());
    }
  }

 private:
  AttentionPlan make_plan(KernelContext& ctx) const {
    const Tensor &q = ctx.input(kQ), &k = ctx.input(kK), &v = ctx.input(kV);
    const DType t = q.dtype();
    if (t != DType::Float32 && t != DType::Float16 && t != DType::BFloat16)
      ctx.unsupported("dtype {} is not supported (float, float16, bfloat16)", dtype_name(t));
    if (q.rank() != 3 || q.dim(2) % heads_ != 0)
      ctx.unsupported("query of shape {}: only (batch, sequence, num_heads * head_size) is supported (num_heads {})",
                      shape_to_string(q.shape()), heads_);
    AttentionPlan p;
    p.batch = q.dim(0), p.q_len = q.dim(1), p.q_heads = p.kv_heads = heads_, p.head_size = q.dim(2) / heads_;
    if (k.dtype() != t || v.dtype() != t) ctx.fail("key / value have dtypes {} / {}, query {}", dtype_name(k.dtype()), dtype_name(v.dtype()), dtype_name(t));
    if (k.rank() == 3 && v.rank() == 3) {
      if (k.dim(0) != p.batch || v.dim(0) != p.batch || k.dim(1) != v.dim(1) || k.dim(2) != q.dim(2) || v.dim(2) % heads_)
        ctx.fail("query {}, key {}, value {} do not fit (B, S, N*H), (B, L, N*H), (B, L, N*Hv)", shape_to_string(q.shape()),
                 shape_to_string(k.shape()), shape_to_string(v.shape()));
      p.kv_len = k.dim(1), p.v_head_size = v.dim(2) / heads_;
    } else if (k.rank() == 4 && v.rank() == 4) {
      if (k.dim(0) != p.batch || k.dim(1) != heads_ || k.dim(3) != p.head_size || v.dim(0) != p.batch ||
          v.dim(1) != heads_ || v.dim(2) != k.dim(2))
        ctx.fail("key {} / value {} do not fit (B, N, L, H) with B = {}, N = {}, H = {}", shape_to_string(k.shape()),
                 shape_to_string(v.shape()), p.batch, heads_, p.head_size);
      p.kv_len = k.dim(2), p.v_head_size = v.dim(3);
      if (ctx.has_input(kBias)) ctx.unsupported("bias with 4-D key / value is not supported");
    } else {
      ctx.fail("key {} and value {} must both be 3-D or both 4-D", shape_to_string(k.shape()), shape_to_string(v.shape()));
    }
    p.q = {heads_, p.q_len, p.head_size, true};
    p.k = {heads_, p.kv_len, p.head_size, k.rank() == 3};
    p.v = {heads_, p.kv_len, p.v_head_size, v.rank() == 3};
    p.y = {heads_, p.q_len, p.v_head_size, true};
    if (ctx.has_input(kPastK)) {
      const Tensor &pk = ctx.input(kPastK), &pv = ctx.input(kPastV);
      if (pk.rank() != 4 || pk.dim(0) != p.batch || pk.dim(1) != heads_ || pk.dim(3) != p.head_size || pv.rank() != 4 ||
          pv.dim(0) != p.batch || pv.dim(1) != heads_ || pv.dim(2) != pk.dim(2) || pv.dim(3) != p.v_head_size ||
          pk.dtype() != t || pv.dtype() != t)
        ctx.fail("past_key {} / past_value {} do not fit (B, N, P, H) / (B, N, P, Hv)", shape_to_string(pk.shape()),
                 shape_to_string(pv.shape()));
      p.past_len = pk.dim(2);
    }
    p.total_len = p.past_len + p.kv_len;
    if (ctx.has_input(kBias)) {
      const Tensor& b = ctx.input(kBias);
      if (b.dtype() != t || b.numel() != 2 * q.dim(2) + heads_ * p.v_head_size)
        ctx.fail("bias has shape {}, expected ({})", shape_to_string(b.shape()), 2 * q.dim(2) + heads_ * p.v_head_size);
    }
    if (ctx.has_input(kPadMask)) {
      const Tensor& m = ctx.input(kPadMask);
      const bool lengths = m.rank() == 1 && m.dim(0) == p.batch;
      if (m.dtype() != DType::Int32 || !(lengths || (m.rank() == 2 && m.dim(0) == p.batch && m.dim(1) == p.total_len)))
        ctx.unsupported("key_padding_mask {} {}: supported forms are int32 ({}, {}) and ({})", dtype_name(m.dtype()),
                        shape_to_string(m.shape()), p.batch, p.total_len, p.batch);
    }
    if (ctx.has_input(kAttnBias)) {
      const Tensor& ab = ctx.input(kAttnBias);
      if (!is_attention_float(ab.dtype()) || ab.rank() != 4 || (ab.dim(0) != 1 && ab.dim(0) != p.batch) ||
          (ab.dim(1) != 1 && ab.dim(1) != heads_) || ab.dim(2) != p.q_len || ab.dim(3) != p.total_len)
        ctx.fail("attention_bias has shape {}, expected (1 or {}, 1 or {}, {}, {})", shape_to_string(ab.shape()), p.batch,
                 heads_, p.q_len, p.total_len);
    }
    p.scale = scale_ != 0.f ? scale_ : static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_size)));
    p.causal = causal_;
    return p;
  }

  // x (B, seq, width) with bias[offset : offset + width] added to every row.
  Tensor add_bias(KernelContext& ctx, const Tensor& x, const Tensor& bias, int64_t offset, int64_t width) const {
    const AttentionLanes& lanes = attention_lanes_for(cpu::Isa::Portable);
    Tensor out = ctx.scratch(x.dtype(), x.shape());
    std::vector<float> b(width), row(width);
    read_floats(bias.dtype(), bias.raw(), offset, width, b.data(), lanes);
    for (int64_t r = 0; r < x.numel() / width; ++r) {
      read_floats(x.dtype(), x.raw(), r * width, width, row.data(), lanes);
      for (int64_t c = 0; c < width; ++c) row[c] += b[c];
      write_floats(x.dtype(), out.raw_mut(), r * width, width, row.data(), lanes);
    }
    return out;
  }

  // attention_bias + mask_filter_value where key_padding_mask masks, as one float32
  // tensor (B or 1, N or 1, S or 1, T) with the plan's broadcast strides.
  Tensor build_mask(KernelContext& ctx, AttentionPlan& p) const {
    const bool has_ab = ctx.has_input(kAttnBias), has_pm = ctx.has_input(kPadMask);
    const Tensor* ab = has_ab ? &ctx.input(kAttnBias) : nullptr;
    const int64_t mb = (has_pm || (ab && ab->dim(0) != 1)) ? p.batch : 1, mh = ab && ab->dim(1) != 1 ? heads_ : 1,
                  ms = ab ? p.q_len : 1, T = p.total_len;
    Tensor m = ctx.scratch(DType::Float32, {mb, mh, ms, T});
    float* md = m.mutable_data<float>();
    const AttentionLanes& lanes = attention_lanes_for(cpu::Isa::Portable);
    for (int64_t b = 0; b < mb; ++b)
      for (int64_t h = 0; h < mh; ++h)
        for (int64_t i = 0; i < ms; ++i) {
          float* row = md + ((b * mh + h) * ms + i) * T;
          if (ab) {
            const int64_t src = (((ab->dim(0) == 1 ? 0 : b) * ab->dim(1) + (ab->dim(1) == 1 ? 0 : h)) * p.q_len + i) * T;
            read_floats(ab->dtype(), ab->raw(), src, T, row, lanes);
          } else {
            std::fill(row, row + T, 0.f);
          }
          if (has_pm) {
            const Tensor& pm = ctx.input(kPadMask);
            const int32_t* pd = pm.data<int32_t>();
            for (int64_t j = 0; j < T; ++j) {
              const bool keep = pm.rank() == 1 ? j < pd[b] : pd[b * T + j] != 0;
              if (!keep) row[j] += mask_filter_;
            }
          }
        }
    p.mask_b = mb == 1 ? 0 : mh * ms * T;
    p.mask_h = mh == 1 ? 0 : ms * T;
    p.mask_i = ms == 1 ? 0 : T;
    p.mask_len = T;
    return m;
  }

  int64_t heads_;
  float scale_;
  bool causal_;
  float mask_filter_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("multi_head_attention", "com.microsoft", "MultiHeadAttention", 1, INT_MAX,
                         make_kernel<MultiHeadAttentionKernel>);

}  // namespace attention
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(attention_multi_head_attention);
