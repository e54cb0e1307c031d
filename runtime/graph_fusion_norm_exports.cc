// Normalization fusions for the forms other exporters write (see graph_fusion_norm.h):
// TensorFlow / Keras LayerNorm, the RMSNorm of PyTorch / Hugging Face Llama-style models, and
// Gelu's tanh approximation. As in graph_fusion_norm.cc, matching walks from one anchor node
// through sole readers, fused-away nodes are marked and dropped at the end, and the fused node
// takes the last matched node's place (where all of its inputs exist).
#include <fmt/format.h>

#include <cmath>

#include "runtime/graph_fusion_norm.h"
#include "runtime/graph_norm_pass.h"

namespace onnxmini {
namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluCubic = 0.044715;

struct ExportedNormFusions : NormPass {
  explicit ExportedNormFusions(RuleContext& c) : NormPass(c) {}

  // The node list of one match, for the log line and the removal.
  void replace(const char* rule, const std::vector<int>& matched, int last, GraphNode fused, const std::string& first) {
    ctx.applied(rule, fmt::format("{} .. {} '{}' ({} nodes)", first, g.nodes[last].op_type, g.nodes[last].name,
                                  matched.size()));
    for (int k : matched) removed[k] = true;
    removed[last] = false;
    fused.index = g.nodes[last].index;
    fused.outputs = {g.nodes[last].outputs[0]};
    g.nodes[last] = std::move(fused);
    count_uses();
  }

  // The square of `d`: Pow(d, 2) (d read once) or Mul(d, d) (d read twice by it). Returns the
  // node, -1 when d has another reader.
  int square_of(int d) const {
    if (int k = sole_reader(d, 2); k >= 0 && plain(g.nodes[k], "Mul", 2) && g.nodes[k].inputs[0] == d &&
                                  g.nodes[k].inputs[1] == d)
      return k;
    float e = 0;
    if (int k = sole_reader(d); k >= 0 && plain(g.nodes[k], "Pow", 2) && g.nodes[k].inputs[0] == d &&
                                scalar_f32(g.nodes[k].inputs[1], e) && e == 2.0f)
      return k;
    return -1;
  }
  // 1 / s as Reciprocal(s) or Div(1, s), the only reader of s; -1 otherwise.
  int reciprocal_of(int s) const {
    const int k = sole_reader(s);
    if (k < 0) return -1;
    const GraphNode& n = g.nodes[k];
    if (plain(n, "Reciprocal", 1)) return k;
    if (plain(n, "Div", 2) && n.inputs[1] == s && constant_near(n.inputs[0], 1.0)) return k;
    return -1;
  }
  // Add(v, eps) -> Sqrt, each the only reader of the previous value, eps a float32 constant > 0.
  // Returns the Sqrt (its Add in `i_add`, eps in `eps`), or -1.
  int sqrt_of_plus_eps(int v, int& i_add, float& eps) const {
    i_add = sole_reader(v);
    if (i_add < 0 || !plain(g.nodes[i_add], "Add", 2) || !scalar_f32(other_input(g.nodes[i_add], v), eps) ||
        !(eps > 0.0f))
      return -1;
    const int k = sole_reader(g.nodes[i_add].outputs[0]);
    return k >= 0 && plain(g.nodes[k], "Sqrt", 1) ? k : -1;
  }
  // A float32 constant of shape [C], C >= 2: the per-channel gamma / beta the fused
  // kernels check against X's last dimension (a one-element one broadcasts in the unfused
  // graph but is not that shape).
  const Tensor* channel_vector(int id) const {
    const Tensor* t = constant_f32(id);
    return t && t->rank() == 1 && t->numel() >= 2 ? t : nullptr;
  }

  // ---- layer_norm_tf ----------------------------------------------------------------------
  // The mean of the TF pattern: GlobalAveragePool (the mean over axes 2.., which is the last
  // axis of the [batch, seq, C] tensors it is used on) or ReduceMean over the last axis.
  // `axis` receives LayerNormalization's axis computing the same statistics: 2 for the pool
  // (its axes 2..r-1 whatever the rank, so a rank-4 input is never silently normalized over the
  // last axis only), -1 for ReduceMean. A pool over a known rank other than 3 is not the
  // pattern (gamma [C] would not be the normalized shape).
  bool tf_mean(const GraphNode& n, int rank, bool pool, int64_t& axis) const {
    if (pool) {
      if (!plain(n, "GlobalAveragePool", 1) || (rank >= 0 && rank != 3)) return false;
      axis = 2;
      return true;
    }
    axis = -1;
    return mean_over_last_axis(n, rank);
  }

  // mean = GlobalAveragePool(X) | ReduceMean(X, last axis); d = Sub(X, mean) (either order);
  // var = mean of Mul(d, d) | Pow(d, 2) (the same kind of mean); s = Reciprocal | Div(1, .) of
  // Sqrt(var + eps); sg = Mul(s, gamma [C]); Y = Mul(X, sg) + Sub(beta [C], Mul(mean, sg)),
  // every Mul / Add in either order. Keras scale=False: sg = s (no gamma Mul), the scale a new
  // constant of ones; center=False: Y = Mul(X, sg) + Mul(Neg(mean), sg), no beta. The ones'
  // size comes from beta, else X's declared last axis (unknown: left alone).
  // `before_opset17` as layer_norm.
  void layer_norm_tf(bool before_opset17) {
    for (size_t i0 = 0; i0 < g.nodes.size(); ++i0) {
      const GraphNode& mean = g.nodes[i0];
      if (removed[i0] || mean.domain.size() || mean.outputs.size() != 1 || mean.inputs.empty() || mean.inputs[0] < 0 ||
          (mean.opset < 17) != before_opset17)
        continue;
      const bool pool = mean.op_type == "GlobalAveragePool";
      const int x = mean.inputs[0], m = mean.outputs[0];
      const int rank = static_cast<int>(known_rank(x));
      int64_t axis = -1, var_axis = -1;
      if (!tf_mean(mean, rank, pool, axis) || !declared_float32(x)) continue;
      // mean is read by the Sub and by Mul(mean, sg) (center=False: Neg(mean), then
      // Mul(Neg(mean), sg) as tf.nn.batch_normalization writes -mean * inv), once each.
      if (uses[m] != 2) continue;
      std::vector<int> m_readers = readers(m);
      if (m_readers.size() != 2) continue;
      int i_sub = -1, i_mm = -1, i_neg = -1;
      for (int r : m_readers) {
        const GraphNode& n = g.nodes[r];
        if (plain(n, "Sub", 2) && other_input(n, m) == x) i_sub = r;
        else if (plain(n, "Mul", 2) && other_input(n, m) != m) i_mm = r;
        else if (plain(n, "Neg", 1)) i_neg = r;
      }
      if (i_neg >= 0 && i_mm < 0) {
        const int k = sole_reader(g.nodes[i_neg].outputs[0]);
        if (k >= 0 && plain(g.nodes[k], "Mul", 2) && other_input(g.nodes[k], g.nodes[i_neg].outputs[0]) != g.nodes[i_neg].outputs[0])
          i_mm = k;
      } else {
        i_neg = -1;
      }
      if (i_sub < 0 || i_mm < 0) continue;
      const int mm_in = i_neg >= 0 ? g.nodes[i_neg].outputs[0] : m;  // what Mul(., sg) reads
      // The variance: the same mean of the square of d, plus eps, Sqrt, reciprocal.
      const int i_sq = square_of(g.nodes[i_sub].outputs[0]);
      if (i_sq < 0) continue;
      const int i_var = sole_reader(g.nodes[i_sq].outputs[0]);
      if (i_var < 0 || g.nodes[i_var].inputs[0] != g.nodes[i_sq].outputs[0] ||
          !tf_mean(g.nodes[i_var], rank, pool, var_axis))
        continue;
      int i_add = -1;
      float eps = 0;
      const int i_sqrt = sqrt_of_plus_eps(g.nodes[i_var].outputs[0], i_add, eps);
      if (i_sqrt < 0) continue;
      const int i_rec = reciprocal_of(g.nodes[i_sqrt].outputs[0]);
      if (i_rec < 0) continue;
      // sg = s * gamma, read by Mul(mean, sg) and Mul(X, sg); scale=False: sg = s itself.
      const int s = g.nodes[i_rec].outputs[0];
      int i_sg = -1, gamma_id = -1, sg = s;
      if (uses[s] == 1) {
        i_sg = sole_reader(s);
        if (i_sg < 0 || !plain(g.nodes[i_sg], "Mul", 2)) continue;
        gamma_id = other_input(g.nodes[i_sg], s);
        if (!channel_vector(gamma_id)) continue;
        sg = g.nodes[i_sg].outputs[0];
      }
      if (uses[sg] != 2 || other_input(g.nodes[i_mm], mm_in) != sg) continue;
      int i_xs = -1;
      for (int r : readers(sg))
        if (r != i_mm && plain(g.nodes[r], "Mul", 2) && other_input(g.nodes[r], sg) == x) i_xs = r;
      if (i_xs < 0) continue;
      // Sub(beta, mean * sg), then Add(X * sg, that); center=False: Add(X * sg, -mean * sg).
      int i_shift = -1, beta_id = -1;
      if (i_neg < 0) {
        i_shift = sole_reader(g.nodes[i_mm].outputs[0]);
        if (i_shift < 0 || !plain(g.nodes[i_shift], "Sub", 2) || g.nodes[i_shift].inputs[1] != g.nodes[i_mm].outputs[0])
          continue;
        beta_id = g.nodes[i_shift].inputs[0];
        const Tensor* beta = channel_vector(beta_id);
        if (!beta || (gamma_id >= 0 && beta->numel() != constant_f32(gamma_id)->numel())) continue;
      }
      const int shift = i_shift >= 0 ? g.nodes[i_shift].outputs[0] : g.nodes[i_mm].outputs[0];
      const int i_out = sole_reader(g.nodes[i_xs].outputs[0]);
      if (i_out < 0 || !plain(g.nodes[i_out], "Add", 2) || other_input(g.nodes[i_out], g.nodes[i_xs].outputs[0]) != shift ||
          sole_reader(shift) != i_out)
        continue;
      if (gamma_id < 0) {  // ones of beta's size, else of X's declared last axis; unknown: left alone
        const int64_t n = beta_id >= 0 ? constant_f32(beta_id)->numel() : known_last_dim(x);
        const int64_t declared = known_last_dim(x);
        if (n < 1 || (declared > 0 && declared != n)) continue;
        gamma_id = add_ones(mean.name + "_scale_ones", n);
      }
      std::vector<int> matched = {static_cast<int>(i0), i_sub, i_sq, i_var, i_add, i_sqrt, i_rec, i_mm, i_xs, i_out};
      if (i_sg >= 0) matched.push_back(i_sg);
      if (i_neg >= 0) matched.push_back(i_neg);
      if (i_shift >= 0) matched.push_back(i_shift);
      GraphNode fused;
      fused.name = mean.name.empty() ? g.nodes[i_out].name : mean.name;
      fused.op_type = "LayerNormalization";
      fused.opset = before_opset17 ? 17 : mean.opset;
      fused.inputs = {x, gamma_id};
      if (beta_id >= 0) fused.inputs.push_back(beta_id);
      fused.attrs.set("axis", axis);
      fused.attrs.set("epsilon", eps);
      replace(before_opset17 ? "layer_norm_tf_before_opset17" : "layer_norm_tf", matched, i_out, std::move(fused),
              fmt::format("{} '{}'", mean.op_type, mean.name));
    }
  }

  // ---- rms_norm ---------------------------------------------------------------------------
  // A Cast to float32 of a float16 / bfloat16 value (as Llama-style models upcast before the
  // statistics): the Cast's input, or -1.
  int upcast_source(int id) const {
    const int k = producer(id);
    if (k < 0 || !plain(g.nodes[k], "Cast", 1) ||
        g.nodes[k].attrs.get_int("to", 0) != static_cast<int64_t>(DType::Float32))
      return -1;
    auto dt = g.known_dtypes.find(g.nodes[k].inputs[0]);
    if (dt == g.known_dtypes.end() || (dt->second != DType::Float16 && dt->second != DType::BFloat16)) return -1;
    return g.nodes[k].inputs[0];
  }

  // sq = Pow(x, 2) | Mul(x, x); ms = ReduceMean(sq, last axis); r = Sqrt(ms + eps);
  // n = Mul(x, Reciprocal(r) | Div(1, r)) | Div(x, r); Y = Mul(n, gamma [C]) (either order).
  // Optional casts around it: x = Cast(X float16 / bfloat16 -> float32), read only by the
  // pattern, with n cast back to X's type before the gamma Mul (gamma then of X's type).
  void rms_norm(bool before_opset23) {
    for (size_t iq = 0; iq < g.nodes.size(); ++iq) {
      const GraphNode& sq = g.nodes[iq];
      if (removed[iq] || (sq.opset < 23) != before_opset23 || sq.inputs.empty()) continue;
      const int x = sq.inputs[0];
      if (x < 0) continue;
      float e = 0;
      const bool by_mul = plain(sq, "Mul", 2) && sq.inputs[1] == x;
      const bool by_pow = plain(sq, "Pow", 2) && scalar_f32(sq.inputs[1], e) && e == 2.0f;
      if (!by_mul && !by_pow) continue;
      const int rank = static_cast<int>(known_rank(x));
      const int i_mean = sole_reader(sq.outputs[0]);
      if (i_mean < 0 || !mean_over_last_axis(g.nodes[i_mean], rank) || g.nodes[i_mean].inputs[0] != sq.outputs[0])
        continue;
      int i_add = -1;
      float eps = 0;
      const int i_sqrt = sqrt_of_plus_eps(g.nodes[i_mean].outputs[0], i_add, eps);
      if (i_sqrt < 0) continue;
      const int r = g.nodes[i_sqrt].outputs[0];
      std::vector<int> matched = {static_cast<int>(iq), i_mean, i_add, i_sqrt};
      int i_norm = -1;
      if (const int i_rec = reciprocal_of(r); i_rec >= 0) {
        const int k = sole_reader(g.nodes[i_rec].outputs[0]);
        if (k >= 0 && plain(g.nodes[k], "Mul", 2) && other_input(g.nodes[k], g.nodes[i_rec].outputs[0]) == x) {
          matched.push_back(i_rec);
          i_norm = k;
        }
      } else if (const int k = sole_reader(r); k >= 0 && plain(g.nodes[k], "Div", 2) && g.nodes[k].inputs[0] == x &&
                                                g.nodes[k].inputs[1] == r) {
        i_norm = k;
      }
      if (i_norm < 0) continue;
      matched.push_back(i_norm);
      // x read by the square and the normalizing node only when it is a Cast to be absorbed.
      // The casts are absorbed when x is an upcast read only by the pattern and n is cast back
      // to the source's type before the gamma Mul; otherwise the pattern is fused on float32 x
      // (the casts, if any, stay around the fused node).
      const int source = upcast_source(x);
      const int i_down = sole_reader(g.nodes[i_norm].outputs[0]);
      const bool absorb_casts = source >= 0 && uses[x] == (by_mul ? 3 : 2) && i_down >= 0 &&
                                plain(g.nodes[i_down], "Cast", 1) &&
                                g.nodes[i_down].attrs.get_int("to", 0) == static_cast<int64_t>(g.known_dtypes.at(source));
      int n = g.nodes[i_norm].outputs[0];
      int in = x;
      DType gamma_type = DType::Float32;
      if (absorb_casts) {
        matched.push_back(producer(x));
        matched.push_back(i_down);
        n = g.nodes[i_down].outputs[0];
        in = source;
        gamma_type = g.known_dtypes.at(source);
      } else if (!declared_float32(x)) {
        continue;
      }
      // Mul(n, gamma [C]). Without it (n read by no Mul: scale=False) the scale is a new
      // constant of ones over X's declared last axis (RMSNormalization's scale is not
      // optional); unknown size, or the float16 / bfloat16 form with its casts: left alone.
      int i_gamma = sole_reader(n), gamma_id = -1;
      if (i_gamma >= 0 && plain(g.nodes[i_gamma], "Mul", 2)) {
        gamma_id = other_input(g.nodes[i_gamma], n);
        const Tensor* gamma = constant(gamma_id);
        if (!gamma || gamma->dtype() != gamma_type || gamma->rank() != 1 || gamma->numel() < 2) continue;
        matched.push_back(i_gamma);
      } else {
        const int64_t C = known_last_dim(in);
        if (absorb_casts || C < 1) continue;
        i_gamma = matched.back();  // the last matched node: the normalizing Mul / Div
        gamma_id = add_ones(g.nodes[i_gamma].name + "_scale_ones", C);
      }
      GraphNode fused;
      fused.name = g.nodes[i_gamma].name;
      fused.op_type = "RMSNormalization";
      fused.opset = before_opset23 ? 23 : sq.opset;
      fused.inputs = {in, gamma_id};
      fused.attrs.set("axis", int64_t{-1});
      fused.attrs.set("epsilon", eps);
      replace(before_opset23 ? "rms_norm_before_opset23" : "rms_norm", matched, i_gamma, std::move(fused),
              fmt::format("{} '{}'", sq.op_type, sq.name));
    }
  }

  // ---- gelu_tanh --------------------------------------------------------------------------
  // The factors of the product `v` as a tree of Muls (exporters group 0.044715 * x^3 every
  // way: Mul(Pow(x, 3), c), c * (x * (x * x)), x * (x * (c * x)) as JAX writes it): x counts
  // once, Pow(x, 2 | 3) two or three times, a float32 one-element constant goes to `constants`.
  // Every opened node's output is read only by the node above it; the opened nodes are
  // appended to `nodes`. False when a factor is anything else.
  bool product_factors(int v, int x, bool top, int& x_power, std::vector<int>& constants, std::vector<int>& nodes) const {
    float e = 0;
    if (v == x) return ++x_power, true;
    if (scalar_f32(v, e)) return constants.push_back(v), true;
    const int k = producer(v);
    if (k < 0 || (!top && uses[v] != 1) || nodes.size() > 4) return false;
    const GraphNode& n = g.nodes[k];
    if (plain(n, "Pow", 2) && n.inputs[0] == x && scalar_f32(n.inputs[1], e) && (e == 2.0f || e == 3.0f)) {
      x_power += static_cast<int>(e);
      nodes.push_back(k);
      return true;
    }
    if (!plain(n, "Mul", 2)) return false;
    nodes.push_back(k);
    return product_factors(n.inputs[0], x, false, x_power, constants, nodes) &&
           product_factors(n.inputs[1], x, false, x_power, constants, nodes);
  }

  // 0.5 * x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))): the Tanh's input a Mul by
  // sqrt(2 / pi), of Add(x, 0.044715 * x^3) with the cubic term's Muls grouped any way
  // (product_factors), every Mul / Add in either order, the closing product in any grouping
  // (half_x_times); constants within 2 float32 ulps.
  void gelu_tanh(bool before_opset20) {
    for (size_t it = 0; it < g.nodes.size(); ++it) {
      const GraphNode& tanh = g.nodes[it];
      if (removed[it] || !plain(tanh, "Tanh", 1) || (tanh.opset < 20) != before_opset20) continue;
      const int i_k = producer(tanh.inputs[0]);
      if (i_k < 0 || !plain(g.nodes[i_k], "Mul", 2) || sole_reader(tanh.inputs[0]) != static_cast<int>(it)) continue;
      const GraphNode& km = g.nodes[i_k];
      const int inner = constant_near(km.inputs[0], kSqrt2OverPi)   ? km.inputs[1]
                        : constant_near(km.inputs[1], kSqrt2OverPi) ? km.inputs[0]
                                                                     : -1;
      const int i_inner = producer(inner);
      if (i_inner < 0 || !plain(g.nodes[i_inner], "Add", 2) || sole_reader(inner) != i_k) continue;
      // One operand of the Add is x, the other 0.044715 * x^3 (read by the Add only).
      std::vector<int> matched;
      int x = -1;
      for (int side = 0; side < 2 && x < 0; ++side) {
        const int c = g.nodes[i_inner].inputs[side], cand = g.nodes[i_inner].inputs[1 - side];
        int x_power = 0;
        std::vector<int> constants, nodes;
        if (sole_reader(c) == i_inner && product_factors(c, cand, true, x_power, constants, nodes) && x_power == 3 &&
            constants.size() == 1 && constant_near(constants[0], kGeluCubic)) {
          matched = nodes;
          x = cand;
        }
      }
      if (x < 0 || !declared_float32(x)) continue;
      // 1 + tanh
      const int i_one = sole_reader(tanh.outputs[0]);
      if (i_one < 0 || !plain(g.nodes[i_one], "Add", 2) ||
          !constant_near(other_input(g.nodes[i_one], tanh.outputs[0]), 1.0))
        continue;
      for (int k : {i_inner, i_k, static_cast<int>(it), i_one}) matched.push_back(k);
      const int last = half_x_times(g.nodes[i_one].outputs[0], x, matched);
      if (last < 0) continue;
      matched.push_back(last);
      GraphNode fused;
      fused.name = g.nodes[last].name;
      fused.op_type = "Gelu";
      fused.opset = before_opset20 ? 20 : tanh.opset;
      fused.inputs = {x};
      fused.attrs.set("approximate", std::string("tanh"));
      replace(before_opset20 ? "gelu_tanh_before_opset20" : "gelu_tanh", matched, last, std::move(fused),
              fmt::format("Tanh '{}'", tanh.name));
    }
  }
};

template <void (ExportedNormFusions::*Rule)(bool), bool Before>
void run_rule(RuleContext& ctx) {
  ExportedNormFusions p(ctx);
  (p.*Rule)(Before);
  p.compact();
}

}  // namespace

void fuse_layer_norm_tf(RuleContext& ctx) { run_rule<&ExportedNormFusions::layer_norm_tf, false>(ctx); }
void fuse_layer_norm_tf_before_opset17(RuleContext& ctx) { run_rule<&ExportedNormFusions::layer_norm_tf, true>(ctx); }
void fuse_rms_norm(RuleContext& ctx) { run_rule<&ExportedNormFusions::rms_norm, false>(ctx); }
void fuse_rms_norm_before_opset23(RuleContext& ctx) { run_rule<&ExportedNormFusions::rms_norm, true>(ctx); }
void fuse_gelu_tanh(RuleContext& ctx) { run_rule<&ExportedNormFusions::gelu_tanh, false>(ctx); }
void fuse_gelu_tanh_before_opset20(RuleContext& ctx) { run_rule<&ExportedNormFusions::gelu_tanh, true>(ctx); }

}  // namespace onnxmini
