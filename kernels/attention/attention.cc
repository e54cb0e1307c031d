// Attention (ai.onnx opset 23-25): scaled dot-product attention with MHA /
// GQA / MQA heads, 3-D or 4-D inputs, attn_mask (bool or float, broadcast),
// is_causal (bottom-right aligned), past / present key-value cache,
// nonpad_kv_seqlen (24+), softcap, qk_matmul_output (modes 0-3) and the
// opset-25 sliding window. float32 / float16 / bfloat16 run the fused kernel
// (attention_fused.cc, float32 math), or for up to kShortMaxKeys keys the
// short path (attention_short.cc: two GEMM calls); float64 and KernelMode::Reference run
// attention_reference.cc. attention_plan.h says how the bias is composed.
//
// This op is also the target of the graph fusion of
// MatMul -> Mul/Div (scale) -> Add (mask) -> Softmax -> MatMul
// (runtime/graph_fusion_attention.h): 4-D Q [B, H, Lq, D], K [B, H, Lkv, D]
// (K^T's transpose undone), V [B, H, Lkv, Dv], the additive mask as attn_mask.
#include <cmath>
#include <cstring>

#include "core/shape_util.h"
#include "kernels/attention/attention_plan.h"
#include "kernels/attention/attention_short.h"
#include "kernels/attention/float_rows.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace attention {
namespace {

enum Input { kQ = 0, kK, kV, kMask, kPastKey, kPastValue, kNonpad };
enum Output { kY = 0, kPresentKey, kPresentValue, kQk };

class AttentionKernel : public Kernel {
 public:
  explicit AttentionKernel(const KernelInfo& info)
      : q_heads_attr_(info.attrs.get_int("q_num_heads", 0)),
        kv_heads_attr_(info.attrs.get_int("kv_num_heads", 0)),
        has_scale_(info.attrs.has("scale")),
        scale_(info.attrs.get_float("scale", 0.f)),
        softcap_(info.attrs.get_float("softcap", 0.f)),
        causal_(info.attrs.get_int("is_causal", 0) != 0),
        qk_mode_(info.attrs.get_int("qk_matmul_output_mode", 0)),
        left_window_(info.attrs.get_int("left_window_size", -1)),
        right_window_(info.attrs.get_int("right_window_size", -1)),
        gemm_(&gemm::engine(info.gemm, info.mode)) {
    if (qk_mode_ < 0 || qk_mode_ > 3) info.fail("qk_matmul_output_mode {} is not one of 0, 1, 2, 3", qk_mode_);
    if (left_window_ < -1 || right_window_ < -1)
      info.fail("left_window_size {} / right_window_size {} must be -1 or >= 0", left_window_, right_window_);
    if (info.has_input(kPastKey) != info.has_input(kPastValue))
      info.fail("past_key and past_value must be given together");
    if (info.has_input(kNonpad) && info.has_input(kPastKey))
      info.fail("nonpad_kv_seqlen cannot be combined with past_key / past_value");
  }

  // prepare() validates and allocates; compute() rebuilds the (cheap) plan, so
  // the kernel object keeps no per-run state.
  void prepare(KernelContext& ctx) override {
    const AttentionPlan p = make_plan(ctx);
    const Tensor& q = ctx.input(kQ);
    const Tensor& v = ctx.input(kV);
    ctx.allocate_output(kY, q.dtype(),
                        p.y.rank3 ? Shape{p.batch, p.q_len, p.q_heads * p.v_head_size}
                                  : Shape{p.batch, p.q_heads, p.q_len, p.v_head_size});
    if (ctx.output_wanted(kPresentKey))
      ctx.allocate_output(kPresentKey, q.dtype(), {p.batch, p.kv_heads, p.total_len, p.head_size});
    if (ctx.output_wanted(kPresentValue))
      ctx.allocate_output(kPresentValue, v.dtype(), {p.batch, p.kv_heads, p.total_len, p.v_head_size});
    if (ctx.output_wanted(kQk)) ctx.allocate_output(kQk, q.dtype(), {p.batch, p.q_heads, p.q_len, p.total_len});
  }

  void compute(KernelContext& ctx) override {
    AttentionPlan p = make_plan(ctx);
    AttentionIo io;
    io.qk_type = ctx.input(kQ).dtype();
    io.v_type = ctx.input(kV).dtype();
    io.q = ctx.input(kQ).raw();
    io.k = ctx.input(kK).raw();
    io.v = ctx.input(kV).raw();
    if (ctx.has_input(kPastKey)) {
      io.past_k = ctx.input(kPastKey).raw();
      io.past_v = ctx.input(kPastValue).raw();
    }
    io.y = ctx.output(kY).raw_mut();
    if (ctx.output_wanted(kQk)) io.qk = ctx.output(kQk).raw_mut();
    if (ctx.output_wanted(kPresentKey)) io.present_k = ctx.output(kPresentKey).raw_mut();
    if (ctx.output_wanted(kPresentValue)) io.present_v = ctx.output(kPresentValue).raw_mut();
    write_present(ctx, p, io);
    ctx.stats().flops = 2.0 * p.batch * p.q_heads * p.q_len * p.total_len * (p.head_size + p.v_head_size);
    if (ctx.reference_mode() || io.qk_type == DType::Float64 || io.v_type == DType::Float64) {
      ctx.stats().variant = "attention_reference";
      run_attention_reference(p, io);
    } else if (attention_short_chosen(p, io)) {
      ctx.stats().variant = run_attention_short(p, io, *gemm_, ctx.threads());
      ctx.stats().isa = cpu::isa_name(attention_lanes_for(attention_isa()).isa);
    } else {
      ctx.stats().variant = run_attention_fused(p, io, ctx.threads());
      ctx.stats().isa = cpu::isa_name(attention_lanes_for(attention_isa()).isa);
    }
  }

  // The fused kernel for float32 / float16 / bfloat16, the double loops for float64;
  // whether it also writes the scores (attention_fused_with_scores) is known here.
  // The short path when float32 without past / scores and the key length is
  // known and <= kShortMaxKeys (attention_short_chosen's rule).
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& shapes) const override {
    bool all_f32 = true;
    for (size_t i = 0; i < info.input_dtypes.size() && i <= kV; ++i) {
      if (info.input_dtypes[i] == DType::Float64) return KernelPlan{"attention_reference", "portable", ""};
      if (info.input_dtypes[i] == DType::Undefined) return KernelPlan::at_run_time();
      all_f32 = all_f32 && info.input_dtypes[i] == DType::Float32;
    }
    const char* isa = cpu::isa_name(attention_lanes_for(attention_isa()).isa);
    const bool scores = kQk < info.output_present.size() && info.output_present[kQk];
    const KernelPlan flash{scores ? "attention_fused_with_scores" : "attention_fused", isa, "64-key blocks"};
    if (scores || !all_f32 || info.has_input(kPastKey) || attention_path_override() == AttentionPath::Flash)
      return flash;
    const KernelPlan short_plan{"attention_short", isa, "scores of a (batch, head, row block) in one GEMM"};
    if (attention_path_override() == AttentionPath::Short) return short_plan;
    const Shape* k = kK < shapes.size() ? shapes[kK] : nullptr;
    if (!k || (k->size() != 3 && k->size() != 4)) return KernelPlan::at_run_time();
    const int64_t keys = (*k)[k->size() - 2];
    if (keys < 0) return KernelPlan::at_run_time();
    return keys <= kShortMaxKeys ? short_plan : flash;
  }

 private:
  AttentionPlan make_plan(KernelContext& ctx) const {
    const Tensor &q = ctx.input(kQ), &k = ctx.input(kK), &v = ctx.input(kV);
    for (auto [t, name] : {std::pair{&q, "Q"}, {&k, "K"}, {&v, "V"}})
      if (!is_attention_float(t->dtype()))
        ctx.unsupported("{} has dtype {} (float, float16, bfloat16, double)", name, dtype_name(t->dtype()));
    if (k.dtype() != q.dtype()) ctx.fail("K has dtype {}, Q has {}", dtype_name(k.dtype()), dtype_name(q.dtype()));
    const size_t rank = q.rank();
    if ((rank != 3 && rank != 4) || k.rank() != rank || v.rank() != rank)
      ctx.fail("Q, K, V have shapes {}, {}, {}: expected all 3-D or all 4-D", shape_to_string(q.shape()),
               shape_to_string(k.shape()), shape_to_string(v.shape()));
    AttentionPlan p;
    p.batch = q.dim(0);
    if (k.dim(0) != p.batch || v.dim(0) != p.batch)
      ctx.fail("batch sizes differ: Q {}, K {}, V {}", shape_to_string(q.shape()), shape_to_string(k.shape()),
               shape_to_string(v.shape()));
    if (rank == 3) {
      if (q_heads_attr_ <= 0 || kv_heads_attr_ <= 0)
        ctx.fail("3-D inputs need q_num_heads and kv_num_heads > 0 (got {}, {})", q_heads_attr_, kv_heads_attr_);
      p.q_heads = q_heads_attr_, p.kv_heads = kv_heads_attr_;
      if (q.dim(2) % p.q_heads || k.dim(2) % p.kv_heads || v.dim(2) % p.kv_heads)
        ctx.fail("hidden sizes Q {}, K {}, V {} are not multiples of q_num_heads {} / kv_num_heads {}", q.dim(2),
                 k.dim(2), v.dim(2), p.q_heads, p.kv_heads);
      p.q_len = q.dim(1), p.kv_len = k.dim(1);
      p.head_size = q.dim(2) / p.q_heads;
      p.v_head_size = v.dim(2) / p.kv_heads;
      if (k.dim(2) / p.kv_heads != p.head_size)
        ctx.fail("K head size {} differs from Q head size {}", k.dim(2) / p.kv_heads, p.head_size);
      if (v.dim(1) != p.kv_len) ctx.fail("K has {} positions, V has {}", p.kv_len, v.dim(1));
    } else {
      p.q_heads = q.dim(1), p.kv_heads = k.dim(1);
      p.q_len = q.dim(2), p.kv_len = k.dim(2);
      p.head_size = q.dim(3), p.v_head_size = v.dim(3);
      if (k.dim(3) != p.head_size) ctx.fail("K head size {} differs from Q head size {}", k.dim(3), p.head_size);
      if (v.dim(1) != p.kv_heads || v.dim(2) != p.kv_len)
        ctx.fail("V has shape {}, K has {}: heads and positions must match", shape_to_string(v.shape()),
                 shape_to_string(k.shape()));
    }
    if (p.kv_heads <= 0 || p.q_heads % p.kv_heads)
      ctx.fail("q heads {} is not a multiple of kv heads {}", p.q_heads, p.kv_heads);
    const bool r3 = rank == 3;
    p.q = {p.q_heads, p.q_len, p.head_size, r3};
    p.k = {p.kv_heads, p.kv_len, p.head_size, r3};
    p.v = {p.kv_heads, p.kv_len, p.v_head_size, r3};
    p.y = {p.q_heads, p.q_len, p.v_head_size, r3};

    if (ctx.has_input(kPastKey) != ctx.has_input(kPastValue)) ctx.fail("past_key and past_value must be given together");
    if (ctx.has_input(kPastKey)) {
      const Tensor &pk = ctx.input(kPastKey), &pv = ctx.input(kPastValue);
      if (pk.rank() != 4 || pk.dim(0) != p.batch || pk.dim(1) != p.kv_heads || pk.dim(3) != p.head_size)
        ctx.fail("past_key has shape {}, expected [{}, {}, past, {}]", shape_to_string(pk.shape()), p.batch,
                 p.kv_heads, p.head_size);
      p.past_len = pk.dim(2);
      if (pv.rank() != 4 || pv.dim(0) != p.batch || pv.dim(1) != p.kv_heads || pv.dim(2) != p.past_len ||
          pv.dim(3) != p.v_head_size)
        ctx.fail("past_value has shape {}, expected [{}, {}, {}, {}]", shape_to_string(pv.shape()), p.batch,
                 p.kv_heads, p.past_len, p.v_head_size);
      if (pk.dtype() != q.dtype() || pv.dtype() != v.dtype())
        ctx.fail("past_key / past_value have dtypes {} / {}, expected {} / {}", dtype_name(pk.dtype()),
                 dtype_name(pv.dtype()), dtype_name(q.dtype()), dtype_name(v.dtype()));
    }
    p.total_len = p.past_len + p.kv_len;

    if (ctx.has_input(kNonpad)) {
      const Tensor& np = ctx.input(kNonpad);
      if (np.dtype() != DType::Int64 || np.numel() != p.batch)
        ctx.fail("nonpad_kv_seqlen has dtype {} and shape {}, expected int64 [{}]", dtype_name(np.dtype()),
                 shape_to_string(np.shape()), p.batch);
      p.nonpad = np.data<int64_t>();
      for (int64_t b = 0; b < p.batch; ++b)
        if (p.nonpad[b] < 0 || p.nonpad[b] > p.total_len)
          ctx.fail("nonpad_kv_seqlen[{}] = {} is outside [0, {}]", b, p.nonpad[b], p.total_len);
    }

    if (ctx.has_input(kMask)) {
      const Tensor& m = ctx.input(kMask);
      if (m.dtype() != DType::Bool && !is_attention_float(m.dtype()))
        ctx.unsupported("attn_mask has dtype {} (bool or a float type)", dtype_name(m.dtype()));
      if (m.rank() < 1 || m.rank() > 4 || m.shape().back() > p.total_len)
        ctx.fail("attn_mask has shape {}: expected rank 1-4 broadcasting to [{}, {}, {}, <= {}]",
                 shape_to_string(m.shape()), p.batch, p.q_heads, p.q_len, p.total_len);
      const int64_t target[3] = {p.batch, p.q_heads, p.q_len};  // dims before the key axis
      const std::vector<int64_t> strides = row_major_strides(m.shape());
      int64_t* out[3] = {&p.mask_b, &p.mask_h, &p.mask_i};
      for (int a = 0; a < 3; ++a) {
        const int md = static_cast<int>(m.rank()) - 4 + a;  // the mask axis aligned with target[a]
        *out[a] = 0;
        if (md < 0) continue;
        if (m.dim(md) != 1 && m.dim(md) != target[a])
          ctx.fail("attn_mask has shape {}: axis {} is {}, expected 1 or {}", shape_to_string(m.shape()), md,
                   m.dim(md), target[a]);
        if (m.dim(md) != 1) *out[a] = strides[md];
      }
      p.mask = &m;
      p.mask_len = m.shape().back();
    }

    p.scale = has_scale_ ? scale_ : static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_size)));
    p.softcap = softcap_;
    p.causal = causal_;
    p.left_window = left_window_, p.right_window = right_window_;
    p.qk_mode = static_cast<int>(qk_mode_);
    p.want_qk = ctx.output_wanted(kQk);
    return p;
  }

  // present = concat(past, new) along the sequence, in the inputs' own type.
  static void write_present(KernelContext& ctx, const AttentionPlan& p, const AttentionIo& io) {
    if (ctx.output_wanted(kPresentKey)) copy_present(p, io, true, ctx.output(kPresentKey).raw_mut());
    if (ctx.output_wanted(kPresentValue)) copy_present(p, io, false, ctx.output(kPresentValue).raw_mut());
  }

  int64_t q_heads_attr_, kv_heads_attr_;
  bool has_scale_;
  float scale_, softcap_;
  bool causal_;
  int64_t qk_mode_, left_window_, right_window_;
  const gemm::GemmEngine* gemm_;  // the short path's two products
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("attention", "", "Attention", 23, INT_MAX, make_kernel<AttentionKernel>);

}  // namespace attention
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(attention_attention);
