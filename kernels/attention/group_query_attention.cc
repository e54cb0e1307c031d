// com.microsoft GroupQueryAttention (onnxruntime's contrib op in LLM exports: Llama, Phi,
// Qwen, Mistral...), on the fused Attention kernel.
//
// Inputs: query (B, S, N*H), or packed (B, S, (N + 2*Nkv)*H) when key / value are absent;
// key / value (B, S, Nkv*H); past_key / past_value (B, Nkv, P_buf, H); seqlens_k int32 (B)
// = valid keys - 1 per batch entry; total_sequence_length int32 scalar; cos_cache /
// sin_cache (max_pos, rd/2) with do_rotary; position_ids (B, S) optional.
// Per batch entry b: total_b = seqlens_k[b] + 1 keys are valid and the past holds
// past_b = total_b - S of them (0 for a first prompt, whose padded rows see keys < total_b).
// New keys / values (rotated with positions past_b + i, or position_ids, when do_rotary)
// are written after the past in present_key / present_value (B, Nkv, max(P_buf, total
// sequence length), H; the rest zero), and query i attends keys j <= past_b + i, j < total_b
// (local_window_size W: the last W positions, j > past_b + i - W), with softcap and scale as given.
//
// Per-batch past lengths do not fit one AttentionPlan, so the kernel runs one plan per batch
// entry over the present buffers. smooth_softmax, head_sink, attention_bias and the qk
// output are reported as not implemented.
#include <cmath>
#include <vector>

#include "kernels/attention/attention_plan.h"
#include "kernels/attention/float_rows.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace attention {
namespace {

enum Input { kQ, kK, kV, kPastK, kPastV, kSeqLens, kTotalLen, kCos, kSin, kPositionIds, kAttnBias, kHeadSink };

class GroupQueryAttentionKernel : public Kernel {
 public:
  explicit GroupQueryAttentionKernel(const KernelInfo& info)
      : heads_(info.attrs.get_int("num_heads", 0)),
        kv_heads_(info.attrs.get_int("kv_num_heads", 0)),
        scale_(info.attrs.get_float("scale", 0.f)),
        softcap_(info.attrs.get_float("softcap", 0.f)),
        window_(info.attrs.get_int("local_window_size", -1)),
        rotary_(info.attrs.get_int("do_rotary", 0) != 0),
        interleaved_(info.attrs.get_int("rotary_interleaved", 0) != 0) {
    if (heads_ <= 0 || kv_heads_ <= 0 || heads_ % kv_heads_ != 0)
      info.fail("num_heads {} must be a positive multiple of kv_num_heads {}", heads_, kv_heads_);
    if (window_ == 0 || window_ < -1) info.fail("local_window_size {} must be -1 (off) or >= 1", window_);
    if (info.attrs.get_int("smooth_softmax", 0) != 0) info.unsupported("smooth_softmax = 1 is not supported");
    if (info.attrs.get_int("qk_output", 0) != 0) info.unsupported("qk_output is not supported");
    if (info.has_input(kAttnBias) || info.has_input(kHeadSink))
      info.unsupported("attention_bias / head_sink inputs are not supported");
    if (info.has_input(kK) != info.has_input(kV)) info.fail("key and value must be given together");
    if (info.has_input(kPastK) != info.has_input(kPastV)) info.fail("past_key and past_value must be given together");
    if (rotary_ && (!info.has_input(kCos) || !info.has_input(kSin))) info.fail("do_rotary = 1 needs cos_cache and sin_cache");
  }

  struct Shapes {
    int64_t B, S, H, past_buf, present_len;
    bool packed;
  };

  Shapes shapes(KernelContext& ctx) const {
    const Tensor& q = ctx.input(kQ);
    const DType t = q.dtype();
    if (t != DType::Float32 && t != DType::Float16 && t != DType::BFloat16)
      ctx.unsupported("dtype {} is not supported (float, float16, bfloat16)", dtype_name(t));
    Shapes s{};
    s.packed = !ctx.has_input(kK);
    const int64_t width_heads = s.packed ? heads_ + 2 * kv_heads_ : heads_;
    if (q.rank() != 3 || q.dim(2) % width_heads != 0)
      ctx.fail("query has shape {}, expected (B, S, {} x head_size)", shape_to_string(q.shape()), width_heads);
    s.B = q.dim(0), s.S = q.dim(1), s.H = q.dim(2) / width_heads;
    if (!s.packed)
      for (size_t i : {kK, kV}) {
        const Tensor& x = ctx.input(i);
        if (x.dtype() != t || x.shape() != Shape{s.B, s.S, kv_heads_ * s.H})
          ctx.fail("{} is {} {}, expected {} ({}, {}, {})", i == kK ? "key" : "value", dtype_name(x.dtype()),
                   shape_to_string(x.shape()), dtype_name(t), s.B, s.S, kv_heads_ * s.H);
      }
    if (ctx.has_input(kPastK)) {
      const Tensor &pk = ctx.input(kPastK), &pv = ctx.input(kPastV);
      if (pk.dtype() != t || pk.rank() != 4 || pk.dim(0) != s.B || pk.dim(1) != kv_heads_ || pk.dim(3) != s.H ||
          pv.shape() != pk.shape() || pv.dtype() != t)
        ctx.fail("past_key {} / past_value {} do not fit ({}, {}, P, {})", shape_to_string(pk.shape()),
                 shape_to_string(pv.shape()), s.B, kv_heads_, s.H);
      s.past_buf = pk.dim(2);
    }
    const Tensor &sl = ctx.input(kSeqLens), &tl = ctx.input(kTotalLen);
    if (sl.dtype() != DType::Int32 || sl.numel() != s.B)
      ctx.fail("seqlens_k is {} {}, expected int32 ({})", dtype_name(sl.dtype()), shape_to_string(sl.shape()), s.B);
    if (tl.dtype() != DType::Int32 || tl.numel() != 1)
      ctx.fail("total_sequence_length is {} {}, expected an int32 scalar", dtype_name(tl.dtype()), shape_to_string(tl.shape()));
    const int64_t total = tl.data<int32_t>()[0];
    if (total < s.S || total > (int64_t{1} << 31)) ctx.fail("total_sequence_length {} is below the sequence length {}", total, s.S);
    s.present_len = std::max(s.past_buf, total);
    for (int64_t b = 0; b < s.B; ++b) {
      const int64_t tb = static_cast<int64_t>(sl.data<int32_t>()[b]) + 1;
      const bool prompt = s.past_buf == 0 || tb <= s.S;
      if (tb < 1 || tb > s.present_len || (!prompt && tb - s.S > s.past_buf))
        ctx.fail("seqlens_k[{}] = {} does not fit: {} keys with a sequence of {}, a past buffer of {} and "
                 "total_sequence_length {}", b, tb - 1, tb, s.S, s.past_buf, total);
    }
    if (rotary_) {
      const Tensor &c = ctx.input(kCos), &sn = ctx.input(kSin);
      if (c.dtype() != t || sn.shape() != c.shape() || c.rank() != 2 || 2 * c.dim(1) > s.H)
        ctx.fail("cos_cache {} / sin_cache {} must be {} (max_pos, rotary_dim / 2) with rotary_dim <= head size {}",
                 shape_to_string(c.shape()), shape_to_string(sn.shape()), dtype_name(t), s.H);
    }
    if (ctx.has_input(kPositionIds)) {
      const Tensor& p = ctx.input(kPositionIds);
      if (p.dtype() != DType::Int64 || p.shape() != Shape{s.B, s.S})
        ctx.fail("position_ids is {} {}, expected int64 ({}, {})", dtype_name(p.dtype()), shape_to_string(p.shape()), s.B, s.S);
    }
    return s;
  }

  void prepare(KernelContext& ctx) override {
    const Shapes s = shapes(ctx);
    const DType t = ctx.input(kQ).dtype();
    ctx.allocate_output(0, t, {s.B, s.S, heads_ * s.H});
    for (size_t o : {1, 2})
      if (ctx.output_wanted(o)) ctx.allocate_output(o, t, {s.B, kv_heads_, s.present_len, s.H});
  }

  void compute(KernelContext& ctx) override {
    const Shapes s = shapes(ctx);
    const DType t = ctx.input(kQ).dtype();
    const size_t es = dtype_size(t);
    const AttentionLanes& lanes = attention_lanes_for(ctx.reference_mode() ? cpu::Isa::Portable : attention_isa());
    const int32_t* seqlens = ctx.input(kSeqLens).data<int32_t>();
    auto total_of = [&](int64_t b) { return static_cast<int64_t>(seqlens[b]) + 1; };
    auto past_of = [&](int64_t b) { return s.past_buf == 0 || total_of(b) <= s.S ? int64_t{0} : total_of(b) - s.S; };
    // Q (B, S, N*H) and the new K, V (B, S, Nkv*H) as float32 rows, rotated when asked.
    const int64_t qw = heads_ * s.H, kw = kv_heads_ * s.H, in_w = s.packed ? qw + 2 * kw : qw;
    std::vector<float> q(s.B * s.S * qw), k(s.B * s.S * kw), v(s.B * s.S * kw);
    for (int64_t r = 0; r < s.B * s.S; ++r) {
      read_floats(t, ctx.input(kQ).raw(), r * in_w, qw, &q[r * qw], lanes);
      if (s.packed) {
        read_floats(t, ctx.input(kQ).raw(), r * in_w + qw, kw, &k[r * kw], lanes);
        read_floats(t, ctx.input(kQ).raw(), r * in_w + qw + kw, kw, &v[r * kw], lanes);
      } else {
        read_floats(t, ctx.input(kK).raw(), r * kw, kw, &k[r * kw], lanes);
        read_floats(t, ctx.input(kV).raw(), r * kw, kw, &v[r * kw], lanes);
      }
    }
    if (rotary_) {
      const int64_t* pos_ids = ctx.has_input(kPositionIds) ? ctx.input(kPositionIds).data<int64_t>() : nullptr;
      const Tensor &cs = ctx.input(kCos), &sn = ctx.input(kSin);
      const int64_t half = cs.dim(1);
      std::vector<float> c(half), sv(half);
      for (int64_t b = 0; b < s.B; ++b)
        for (int64_t i = 0; i < s.S; ++i) {
          const int64_t pos = pos_ids ? pos_ids[b * s.S + i] : past_of(b) + i;
          if (pos < 0 || pos >= cs.dim(0)) ctx.fail("position {} (batch {}, token {}) is outside the caches' [0, {})", pos, b, i, cs.dim(0));
          read_floats(t, cs.raw(), pos * half, half, c.data(), lanes);
          read_floats(t, sn.raw(), pos * half, half, sv.data(), lanes);
          for (int64_t h = 0; h < heads_; ++h) rotate(&q[(b * s.S + i) * qw + h * s.H], c, sv);
          for (int64_t h = 0; h < kv_heads_; ++h) rotate(&k[(b * s.S + i) * kw + h * s.H], c, sv);
        }
    }
    // Present buffers (B, Nkv, present_len, H): past_b past rows, then the S new rows, zeros after.
    Tensor pk = ctx.output_wanted(1) ? ctx.output(1) : ctx.scratch(t, {s.B, kv_heads_, s.present_len, s.H});
    Tensor pv = ctx.output_wanted(2) ? ctx.output(2) : ctx.scratch(t, {s.B, kv_heads_, s.present_len, s.H});
    std::vector<float> zeros(s.H, 0.f);
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t g = 0; g < kv_heads_; ++g) {
        const int64_t base = (b * kv_heads_ + g) * s.present_len, past_b = past_of(b);
        for (int w = 0; w < 2; ++w) {
          Tensor& dst = w == 0 ? pk : pv;
          const std::vector<float>& cur = w == 0 ? k : v;
          char* d = static_cast<char*>(dst.raw_mut());
          if (past_b > 0) {
            const char* src = static_cast<const char*>(ctx.input(w == 0 ? kPastK : kPastV).raw());
            std::memcpy(d + base * s.H * es, src + (b * kv_heads_ + g) * s.past_buf * s.H * es, past_b * s.H * es);
          }
          for (int64_t i = 0; i < s.S; ++i)
            write_floats(t, d, (base + past_b + i) * s.H, s.H, &cur[(b * s.S + i) * kw + g * s.H], lanes);
          for (int64_t j = past_b + s.S; j < s.present_len; ++j) write_floats(t, d, (base + j) * s.H, s.H, zeros.data(), lanes);
        }
      }
    // One plan per batch entry: Q rows in float32, keys / values from the present buffers.
    ctx.stats().flops = 0;
    std::vector<float> y(s.S * qw);
    for (int64_t b = 0; b < s.B; ++b) {
      const int64_t total_b = total_of(b), past_b = past_of(b);
      AttentionPlan p;
      p.batch = 1, p.q_heads = heads_, p.kv_heads = kv_heads_, p.q_len = s.S, p.head_size = p.v_head_size = s.H;
      p.q = {heads_, s.S, s.H, true};
      p.y = {heads_, s.S, s.H, true};
      p.k = p.v = {kv_heads_, s.present_len, s.H, false};
      p.kv_len = p.total_len = past_b == 0 ? std::min(s.S, total_b) : total_b;
      p.causal = true;
      // With a past, query i sits at position total_b - S + i = past_b + i (nonpad's offset);
      // a first prompt has only its total_b valid keys (padded rows see all of them).
      int64_t nonpad = total_b;
      if (past_b > 0) p.nonpad = &nonpad;
      p.left_window = window_ > 0 ? window_ - 1 : -1;  // a window of W keys ends at the query's position
      p.softcap = softcap_;
      p.scale = scale_ != 0.f ? scale_ : static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.H)));
      AttentionIo io;
      io.qk_type = io.v_type = DType::Float32;
      io.q = &q[b * s.S * qw];
      io.y = y.data();
      // Keys / values: the present rows of this batch entry, read through a float32 copy.
      std::vector<float> kb(kv_heads_ * s.present_len * s.H), vb(kb.size());
      read_floats(t, pk.raw(), b * kv_heads_ * s.present_len * s.H, kb.size(), kb.data(), lanes);
      read_floats(t, pv.raw(), b * kv_heads_ * s.present_len * s.H, vb.size(), vb.data(), lanes);
      io.k = kb.data(), io.v = vb.data();
      ctx.stats().flops += 4.0 * heads_ * s.S * p.total_len * s.H;
      if (ctx.reference_mode()) {
        ctx.stats().variant = "gqa_reference";
        run_attention_reference(p, io);
      } else {
        ctx.stats().variant = run_attention_fused(p, io, ctx.threads());
      }
      write_floats(t, ctx.output(0).raw_mut(), b * s.S * qw, s.S * qw, y.data(), lanes);
    }
  }

 private:
  // Rotates the first 2 * c.size() features of one head row (halves or interleaved pairs).
  void rotate(float* x, const std::vector<float>& c, const std::vector<float>& s) const {
    const int64_t half = static_cast<int64_t>(c.size());
    for (int64_t k = 0; k < half; ++k) {
      const int64_t i1 = interleaved_ ? 2 * k : k, i2 = interleaved_ ? 2 * k + 1 : k + half;
      const float x1 = x[i1], x2 = x[i2];
      x[i1] = x1 * c[k] - x2 * s[k];
      x[i2] = x1 * s[k] + x2 * c[k];
    }
  }

  int64_t heads_, kv_heads_;
  float scale_, softcap_;
  int64_t window_;
  bool rotary_, interleaved_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("group_query_attention", "com.microsoft", "GroupQueryAttention", 1, INT_MAX,
                         make_kernel<GroupQueryAttentionKernel>);

}  // namespace attention
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(attention_group_query_attention);
