// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim features
// of every head by the angles of its token's position (RoPE), float32 /
// float16 / bfloat16 / float64.
//
// Layout: X is 4-D [B, heads, S, head_size] or 3-D [B, S, heads * head_size]
// (num_heads given); a token row of one head is head_size contiguous values.
// cos / sin are [max_pos, rd / 2] indexed by position_ids [B, S], or
// [B, S, rd / 2] without position_ids. Pairs are (k, k + rd/2) (halves) or
// (2k, 2k + 1) (interleaved):
//   y1 = x1 * cos - x2 * sin,  y2 = x1 * sin + x2 * cos;
// features past rd are copied.
// The fast path works on float32 rows (threads over batch x positions); the
// reference path in double, one thread.
// com.microsoft RotaryEmbedding (onnxruntime's contrib op) is the same rotation with
// inputs ordered (input, position_ids, cos_cache, sin_cache), position_ids required:
// [B, S] positions, or one value [1] giving the first position (token s at start + s).
#include <cmath>
#include <vector>

#include "core/aligned_vector.h"
#include "core/thread_pool.h"
#include "kernels/attention/float_rows.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace attention {
namespace {

class RotaryEmbeddingKernel : public Kernel {
 public:
  RotaryEmbeddingKernel(const KernelInfo& info, bool microsoft)
      : interleaved_(info.attrs.get_int("interleaved", 0) != 0),
        rotary_dim_(info.attrs.get_int("rotary_embedding_dim", 0)),
        num_heads_(info.attrs.get_int("num_heads", 0)),
        ms_(microsoft),
        cos_(microsoft ? 2 : 1),
        sin_(microsoft ? 3 : 2),
        pos_(microsoft ? 1 : 3) {
    if (ms_ && info.attrs.get_int("is_packed_batching", 0) != 0) info.unsupported("is_packed_batching = 1 is not supported");
  }

  struct Geometry {
    int64_t batch, seq, heads, head_size, rd;
    bool rank3;
    int64_t row(int64_t b, int64_t s, int64_t h) const {
      return rank3 ? (b * seq + s) * heads * head_size + h * head_size : ((b * heads + h) * seq + s) * head_size;
    }
  };

  Geometry geometry(KernelContext& ctx) const {
    const Tensor &x = ctx.input(0), &cs = ctx.input(cos_), &sn = ctx.input(sin_);
    if (!is_attention_float(x.dtype()))
      ctx.unsupported("X has dtype {} (float, float16, bfloat16, double)", dtype_name(x.dtype()));
    if (cs.dtype() != x.dtype() || sn.dtype() != x.dtype())
      ctx.fail("cos_cache / sin_cache have dtypes {} / {}, X has {}", dtype_name(cs.dtype()), dtype_name(sn.dtype()),
               dtype_name(x.dtype()));
    Geometry g{};
    if (x.rank() == 4) {
      g = {x.dim(0), x.dim(2), x.dim(1), x.dim(3), 0, false};
    } else if (x.rank() == 3 && ms_ && num_heads_ <= 0 && rotary_dim_ <= 0) {
      // onnxruntime's rule: without num_heads the head size is the caches' width x 2.
      const int64_t head = cs.rank() == 2 ? 2 * cs.dim(1) : 0;
      if (head <= 0 || x.dim(2) % head)
        ctx.fail("3-D input of shape {} without num_heads: the head size {} (2 x cos_cache's width) must divide the "
                 "hidden size", shape_to_string(x.shape()), head);
      g = {x.dim(0), x.dim(1), x.dim(2) / head, head, 0, true};
    } else if (x.rank() == 3) {
      if (num_heads_ <= 0 || x.dim(2) % num_heads_)
        ctx.fail("3-D X of shape {} needs num_heads > 0 dividing the hidden size (num_heads = {})",
                 shape_to_string(x.shape()), num_heads_);
      g = {x.dim(0), x.dim(1), num_heads_, x.dim(2) / num_heads_, 0, true};
    } else {
      ctx.fail("X has shape {}, expected 3-D or 4-D", shape_to_string(x.shape()));
    }
    g.rd = rotary_dim_ > 0 ? rotary_dim_ : g.head_size;
    if (g.rd > g.head_size || g.rd % 2)
      ctx.fail("rotary_embedding_dim {} must be even and <= head size {}", g.rd, g.head_size);
    const bool pos = ctx.has_input(pos_);
    if (ms_ && !pos) ctx.fail("position_ids (input 1) is required");
    const Shape want = pos ? Shape{-1, g.rd / 2} : Shape{g.batch, g.seq, g.rd / 2};
    for (const Tensor* t : {&cs, &sn}) {
      bool ok = t->rank() == want.size();
      for (size_t d = 0; ok && d < want.size(); ++d) ok = want[d] < 0 || t->dim(d) == want[d];
      if (!ok)
        ctx.fail("cos_cache / sin_cache have shapes {} / {}, expected {} ({} position_ids)", shape_to_string(cs.shape()),
                 shape_to_string(sn.shape()), pos ? fmt::format("[max_pos, {}]", g.rd / 2) : shape_to_string(want),
                 pos ? "with" : "without");
    }
    if (pos && cs.dim(0) != sn.dim(0)) ctx.fail("cos_cache has {} positions, sin_cache {}", cs.dim(0), sn.dim(0));
    if (pos) {
      const Tensor& p = ctx.input(pos_);
      const bool start_only = ms_ && p.numel() == 1 && p.rank() <= 1;
      if (p.dtype() != DType::Int64 || (!start_only && (p.rank() != 2 || p.dim(0) != g.batch || p.dim(1) != g.seq)))
        ctx.fail("position_ids has dtype {} and shape {}, expected int64 [{}, {}]{}", dtype_name(p.dtype()),
                 shape_to_string(p.shape()), g.batch, g.seq, ms_ ? " or [1] (the first position)" : "");
      const int64_t* ids = p.data<int64_t>();
      if (start_only) {
        if (ids[0] < 0 || ids[0] > cs.dim(0) - g.seq)
          ctx.fail("position_ids = {}: positions {}..{} are outside the caches' [0, {})", ids[0], ids[0],
                   ids[0] + g.seq - 1, cs.dim(0));
      } else {
        for (int64_t k = 0; k < p.numel(); ++k)
          if (ids[k] < 0 || ids[k] >= cs.dim(0))
            ctx.fail("position_ids[{}] = {} is outside the caches' [0, {})", k, ids[k], cs.dim(0));
      }
    }
    return g;
  }

  void prepare(KernelContext& ctx) override {
    geometry(ctx);
    ctx.allocate_output(0, ctx.input(0).dtype(), ctx.input(0).shape());
  }

  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    const DType dt = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    if (dt == DType::Undefined) return KernelPlan::at_run_time();
    if (dt == DType::Float64) return KernelPlan{"rotary_reference", "portable", ""};
    return KernelPlan{interleaved_ ? "rotary_rows_interleaved" : "rotary_rows",
                      cpu::isa_name(attention_lanes_for(attention_isa()).isa), ""};
  }

  void compute(KernelContext& ctx) override {
    const Geometry g = geometry(ctx);
    const Tensor &x = ctx.input(0), &cs = ctx.input(cos_), &sn = ctx.input(sin_);
    Tensor& y = ctx.output(0);
    const int64_t* ids = ctx.has_input(pos_) ? ctx.input(pos_).data<int64_t>() : nullptr;
    const bool start_only = ids && ctx.input(pos_).numel() == 1 && ms_;
    const int64_t half = g.rd / 2;
    // Offset of the cos / sin row of token (b, s).
    auto cache_row = [&](int64_t b, int64_t s) {
      return (start_only ? ids[0] + s : ids ? ids[b * g.seq + s] : b * g.seq + s) * half;
    };
    const DType t = x.dtype();
    ctx.stats().flops = 6.0 * g.batch * g.seq * g.heads * half;
    // Index of the pair partner: halves (k, k + half) or interleaved (2k, 2k + 1).
    auto first = [&](int64_t k) { return interleaved_ ? 2 * k : k; };
    auto second = [&](int64_t k) { return interleaved_ ? 2 * k + 1 : k + half; };
    if (ctx.reference_mode() || t == DType::Float64) {
      ctx.stats().variant = "rotary_reference";
      for (int64_t b = 0; b < g.batch; ++b)
        for (int64_t s = 0; s < g.seq; ++s)
          for (int64_t h = 0; h < g.heads; ++h) {
            const int64_t xr = g.row(b, s, h), cr = cache_row(b, s);
            for (int64_t c = g.rd; c < g.head_size; ++c) write_double(t, y.raw_mut(), xr + c, read_double(t, x.raw(), xr + c));
            for (int64_t k = 0; k < half; ++k) {
              const double c = read_double(t, cs.raw(), cr + k), sv = read_double(t, sn.raw(), cr + k);
              const double x1 = read_double(t, x.raw(), xr + first(k)), x2 = read_double(t, x.raw(), xr + second(k));
              write_double(t, y.raw_mut(), xr + first(k), x1 * c - x2 * sv);
              write_double(t, y.raw_mut(), xr + second(k), x1 * sv + x2 * c);
            }
          }
      return;
    }
    ctx.stats().variant = interleaved_ ? "rotary_rows_interleaved" : "rotary_rows";
    const AttentionLanes& lanes = attention_lanes_for(attention_isa());
    ctx.stats().isa = cpu::isa_name(lanes.isa);
    parallel_for(ctx.threads(), g.batch * g.seq, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.heads * g.head_size)),
                 [&](int64_t t0, int64_t t1) {
      thread_local AlignedVector<float> buf;
      buf.resize(2 * half + 2 * g.head_size);
      float *cv = buf.data(), *sv = cv + half, *in = sv + half, *out = in + g.head_size;
      for (int64_t bs = t0; bs < t1; ++bs) {
        const int64_t b = bs / g.seq, s = bs % g.seq;
        read_floats(t, cs.raw(), cache_row(b, s), half, cv, lanes);
        read_floats(t, sn.raw(), cache_row(b, s), half, sv, lanes);
        for (int64_t h = 0; h < g.heads; ++h) {
          const int64_t xr = g.row(b, s, h);
          read_floats(t, x.raw(), xr, g.head_size, in, lanes);
          if (interleaved_) {
            for (int64_t k = 0; k < half; ++k) {
              const float x1 = in[2 * k], x2 = in[2 * k + 1];
              out[2 * k] = x1 * cv[k] - x2 * sv[k];
              out[2 * k + 1] = x1 * sv[k] + x2 * cv[k];
            }
          } else {
            for (int64_t k = 0; k < half; ++k) {
              const float x1 = in[k], x2 = in[k + half];
              out[k] = x1 * cv[k] - x2 * sv[k];
              out[k + half] = x1 * sv[k] + x2 * cv[k];
            }
          }
          for (int64_t c = g.rd; c < g.head_size; ++c) out[c] = in[c];
          write_floats(t, y.raw_mut(), xr, g.head_size, out, lanes);
        }
      }
    });
  }

 private:
  bool interleaved_;
  int64_t rotary_dim_, num_heads_;
  bool ms_;
  size_t cos_, sin_, pos_;  // input indices
};

template <bool Microsoft>
std::unique_ptr<Kernel> make_rotary(const KernelInfo& info) {
  return std::make_unique<RotaryEmbeddingKernel>(info, Microsoft);
}

}  // namespace

ONNXMINI_REGISTER_KERNEL("rotary_embedding", "", "RotaryEmbedding", 23, INT_MAX, make_rotary<false>);
ONNXMINI_REGISTER_KERNEL("rotary_embedding", "com.microsoft", "RotaryEmbedding", 1, INT_MAX, make_rotary<true>);

}  // namespace attention
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(attention_rotary_embedding);
