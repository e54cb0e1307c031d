// Attention fusion (see graph_fusion_attention.h). Matching starts at each Softmax and
// walks back through sole readers to the scores MatMul, then forward to the MatMul with V.
// Fused-away nodes are marked and dropped at the end; the Attention node takes the place of
// the MatMul with V (where Q, K, V and the mask all exist), and the mask's Expand nodes, when
// needed, are emitted just before it.
#include "runtime/graph_fusion_attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "runtime/graph_norm_pass.h"

namespace onnxmini {
namespace {

constexpr int kAttentionOpset = 23;
// Every key length fuses: the Attention kernel takes its short-sequence path up to 512 keys
// (kernels/attention/attention_short.cc) and the flash path beyond; measured on an Intel Xeon
// (1 thread, benchmarks/bench_attention_fusion.py --blocks, docs/optimizer.md) at least as fast
// as the unfused MatMul / Softmax / MatMul at every length from 32 to 1024 keys.

struct AttentionMatch {
  int q = -1, k = -1, v = -1, mask = -1;  // value ids
  double scale = 1.0;
  std::vector<int64_t> k_perm;  // K = Transpose(k, k_perm) unless the identity
  std::vector<int> nodes;  // matched node indices but the MatMul with V
  int softmax = -1, scores_matmul = -1, pv_matmul = -1;
};

struct AttentionFusion : NormPass {
  explicit AttentionFusion(RuleContext& c) : NormPass(c) {}

  std::map<int, std::vector<GraphNode>> emit_before;  // new nodes, by the node index they precede
  std::unordered_map<int, int> rank_memo;

  // The rank of value `id` when the graph proves it: declared shapes, constants, and the
  // producers whose output rank follows from their attributes / constant inputs and their
  // inputs' ranks. -1 when unknown.
  int rank_of(int id, int depth = 0) {
    if (id < 0 || depth > 48) return -1;
    if (auto m = rank_memo.find(id); m != rank_memo.end()) return m->second;
    int r = -1;
    if (const Tensor* c = constant(id)) r = static_cast<int>(c->rank());
    else if (int64_t known = known_rank(id); known >= 0) r = static_cast<int>(known);
    else if (int p = producer(id); p >= 0) r = producer_rank(g.nodes[p], depth + 1);
    rank_memo[id] = r;
    return r;
  }

  // The number of axes a Squeeze / Unsqueeze names (attribute before opset 13, constant input after).
  int axes_count(const GraphNode& n) const {
    if (n.attrs.has("axes")) return static_cast<int>(n.attrs.get_ints("axes").size());
    if (n.inputs.size() > 1) {
      const Tensor* a = constant(n.inputs[1]);
      if (a && a->dtype() == DType::Int64) return static_cast<int>(a->numel());
    }
    return -1;
  }

  int producer_rank(const GraphNode& n, int depth) {
    if (!n.domain.empty() || n.inputs.empty()) return -1;
    const std::string& op = n.op_type;
    auto in_rank = [&](size_t i) { return i < n.inputs.size() ? rank_of(n.inputs[i], depth) : -1; };
    static const char* const kSameRank[] = {"Slice", "Cast", "Softmax", "LogSoftmax", "Relu", "Sigmoid", "Tanh",
                                            "Erf", "Sqrt", "Neg", "Identity", "Dropout", "Gelu", "Clip", "Not",
                                            "LayerNormalization", "Split", "Exp", "Abs", "Reciprocal", "Concat"};
    for (const char* same : kSameRank)
      if (op == same) return in_rank(0);
    if (op == "Transpose") return n.attrs.has("perm") ? static_cast<int>(n.attrs.get_ints("perm").size()) : in_rank(0);
    if (op == "Squeeze" || op == "Unsqueeze") {
      const int axes = axes_count(n), r = in_rank(0);
      if (axes < 0 || r < 0) return -1;
      return op == "Squeeze" ? r - axes : r + axes;
    }
    if (op == "Reshape") {
      const Tensor* s = n.inputs.size() > 1 ? constant(n.inputs[1]) : nullptr;
      return s && s->rank() == 1 ? static_cast<int>(s->numel()) : -1;
    }
    static const char* const kBroadcasting[] = {"Add", "Sub", "Mul", "Div", "Pow", "Where",
                                                "Equal", "Less", "Greater", "And", "Or", "Max", "Min"};
    for (const char* b : kBroadcasting)
      if (op == b) {
        int r = 0;
        for (size_t i = 0; i < n.inputs.size(); ++i) {
          const int ri = in_rank(i);
          if (ri < 0) return -1;
          r = std::max(r, ri);
        }
        return r;
      }
    if (op == "MatMul") {
      const int ra = in_rank(0), rb = in_rank(1);
      if (ra < 1 || rb < 1) return -1;
      if (ra == 1) return rb - 1;
      if (rb == 1) return ra - 1;
      return std::max(ra, rb);
    }
    return -1;
  }

  // A float32 constant with one element, rank <= 4 (so it broadcasts without changing the
  // rank of a 4-D operand), finite.
  bool scale_constant(int id, double& value) const {
    const Tensor* t = constant_f32(id);
    if (!t || t->numel() != 1 || t->rank() > 4 || !std::isfinite(t->data<float>()[0])) return false;
    value = t->data<float>()[0];
    return true;
  }

  // Walks back from `id` (read once, by the pattern's next node) through Mul(x, c) /
  // Mul(c, x) / Div(x, c != 0), multiplying `scale`; returns the value under the chain.
  int strip_scales(int id, double& scale, std::vector<int>& nodes) const {
    for (;;) {
      if (uses[id] != 1) return id;
      const int p = producer(id);
      if (p < 0) return id;
      const GraphNode& n = g.nodes[p];
      double c = 0;
      if (plain(n, "Mul", 2) && scale_constant(n.inputs[1], c)) {
        scale *= c, id = n.inputs[0];
      } else if (plain(n, "Mul", 2) && scale_constant(n.inputs[0], c)) {
        scale *= c, id = n.inputs[1];
      } else if (plain(n, "Div", 2) && scale_constant(n.inputs[1], c) && c != 0) {
        scale /= c, id = n.inputs[0];
      } else {
        return id;
      }
      nodes.push_back(p);
    }
  }

  // Softmax over the last axis of a rank-4 input, in the node's own opset semantics.
  static bool softmax_over_last_axis(const GraphNode& s, int rank) {
    const int64_t default_axis = s.opset >= 13 ? -1 : 1;
    const int64_t axis = s.attrs.get_int("axis", default_axis);
    return axis == -1 || axis == rank - 1;
  }

  // The scores chain under `id` (the Softmax input or the mask Add's scores side):
  // scales, then the MatMul(Q-side, Kt-side), then Kt = scales(Transpose(scales(K))).
  bool match_scores(int id, AttentionMatch& m) {
    std::vector<int> nodes;
    const int mm = strip_scales(id, m.scale, nodes);
    const int i_mm = uses[mm] == 1 ? producer(mm) : -1;
    if (i_mm < 0 || !plain(g.nodes[i_mm], "MatMul", 2)) return false;
    nodes.push_back(i_mm);
    const int q = strip_scales(g.nodes[i_mm].inputs[0], m.scale, nodes);
    const int kt = strip_scales(g.nodes[i_mm].inputs[1], m.scale, nodes);
    const int i_t = uses[kt] == 1 ? producer(kt) : -1;
    if (i_t < 0 || !plain(g.nodes[i_t], "Transpose", 1)) return false;
    // Kt = Transpose(K0, p), so K = Kt with its last two axes swapped = Transpose(K0, p with
    // its last two entries swapped): K0 itself for p = [0, 1, 3, 2] (HF / torch / Paddle), a
    // Transpose replacing the matched one otherwise (cancel_transposes composes HF's
    // Transpose(Transpose(K [B, S, H, D], [0, 2, 1, 3]), [0, 1, 3, 2]) into [0, 2, 3, 1]).
    std::vector<int64_t> perm = g.nodes[i_t].attrs.get_ints("perm", {});
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != std::vector<int64_t>{0, 1, 2, 3}) return false;
    std::swap(perm[2], perm[3]);
    nodes.push_back(i_t);
    const int k = strip_scales(g.nodes[i_t].inputs[0], m.scale, nodes);
    if (rank_of(q) != 4 || rank_of(k) != 4 || !declared_float32(q) || !declared_float32(k)) return false;
    m.q = q, m.k = k, m.k_perm = perm, m.scores_matmul = i_mm;
    m.nodes.insert(m.nodes.end(), nodes.begin(), nodes.end());
    return true;
  }

  bool match(int i_softmax, bool before_opset23, AttentionMatch& m) {
    const GraphNode& s = g.nodes[i_softmax];
    if (!plain(s, "Softmax", 1) || (s.opset < kAttentionOpset) != before_opset23) return false;
    if (!softmax_over_last_axis(s, 4)) return false;
    // P = Softmax(..) read once, as the left operand of MatMul(P, V)
    const int p = s.outputs[0];
    const int i_pv = sole_reader(p);
    if (i_pv < 0 || !plain(g.nodes[i_pv], "MatMul", 2) || g.nodes[i_pv].inputs[0] != p) return false;
    const int v = g.nodes[i_pv].inputs[1];
    if (rank_of(v) != 4 || !declared_float32(v)) return false;
    m.v = v, m.softmax = i_softmax, m.pv_matmul = i_pv;
    m.nodes.push_back(i_softmax);
    // [Add(scores, mask)] -> Softmax
    const int x = s.inputs[0];
    if (uses[x] != 1) return false;
    const int i_add = producer(x);
    if (i_add >= 0 && plain(g.nodes[i_add], "Add", 2)) {
      const GraphNode& add = g.nodes[i_add];
      for (int side = 0; side < 2; ++side) {
        AttentionMatch trial = m;
        trial.nodes.push_back(i_add);
        const int mask = add.inputs[1 - side];
        const int mask_rank = rank_of(mask);
        if (mask_rank < 0 || mask_rank > 4 || !declared_float32(mask)) continue;
        if (match_scores(add.inputs[side], trial)) {
          trial.mask = mask;
          m = std::move(trial);
          break;
        }
      }
      if (m.mask < 0) return false;
    } else if (!match_scores(x, m)) {
      return false;
    }
    // The scores' rank is that of Q / K (4) once the mask does not add axes: Softmax's axis
    // was checked against rank 4 above.
    return std::isfinite(m.scale) && m.scale != 0;
  }

  const ValueInfo* declared(int id) const {
    for (size_t k = 0; k < g.input_ids.size(); ++k)
      if (g.input_ids[k] == id) return g.inputs[k].has_shape ? &g.inputs[k] : nullptr;
    auto vi = g.value_infos.find(id);
    return vi != g.value_infos.end() && vi->second.has_shape ? &vi->second : nullptr;
  }

  // Whether the mask's last dim is provably the key length: a fixed dim > 1 (the unfused Add
  // only runs when it equals the key length), or the symbolic dim K0 / V declare for the keys.
  bool mask_spans_keys(const AttentionMatch& m, int k0) const {
    if (const Tensor* c = constant(m.mask)) return c->rank() > 0 && c->shape().back() > 1;
    const ValueInfo* mask = declared(m.mask);
    if (!mask || mask->shape.empty()) return false;
    const Dim& last = mask->shape.back();
    if (last.value > 1) return true;
    if (last.param.empty()) return false;
    const ValueInfo* k = declared(k0);
    const ValueInfo* v = declared(m.v);
    return (k && k->shape.size() == 4 && k->shape[m.k_perm[2]].param == last.param) ||
           (v && v->shape.size() == 4 && v->shape[2].param == last.param);
  }

  // A new value; `dtype` Undefined: not known (a float input whose type is not declared).
  int add_value(const std::string& base, DType dtype) {
    std::string name = base;
    for (int i = 1; g.value_ids.count(name); ++i) name = fmt::format("{}_{}", base, i);
    const int id = static_cast<int>(g.value_names.size());
    g.value_names.push_back(name);
    g.value_ids[name] = id;
    if (dtype != DType::Undefined) g.known_dtypes[id] = dtype;
    uses.push_back(0);
    return id;
  }

  DType known_dtype(int id) const {
    auto dt = g.known_dtypes.find(id);
    return dt == g.known_dtypes.end() ? DType::Undefined : dt->second;
  }

  GraphNode new_node(const char* op, std::string name, std::vector<int> in, int out, const GraphNode& at) const {
    GraphNode n;
    n.name = std::move(name), n.op_type = op, n.opset = at.opset, n.index = at.index;
    n.inputs = std::move(in), n.outputs = {out};
    return n;
  }
  static std::string base_name(const GraphNode& at) {
    return at.name.empty() ? fmt::format("attention_{}", at.index) : at.name;
  }

  // Transpose(k, k_perm) [B, H, Sk, D], emitted just before the Attention node.
  int permuted_k(const AttentionMatch& m, const GraphNode& at) {
    const int k = add_value(base_name(at) + "/k", known_dtype(m.k));
    emit_before[m.pv_matmul].push_back(new_node("Transpose", base_name(at) + "/k", {m.k}, k, at));
    emit_before[m.pv_matmul].back().attrs.set("perm", m.k_perm);
    return k;
  }

  // Expand(mask, Shape(K)[2:3]): the mask broadcast along the key axis exactly as the
  // unfused Add broadcast it (a last dim of 1 or the key length; anything else fails in
  // Expand as it failed in the Add). The nodes run just before the Attention node.
  int mask_over_keys(const AttentionMatch& m, const GraphNode& at) {
    const std::string base = base_name(at);
    const int shape = add_value(base + "/k_shape", DType::Int64);
    const int index = add_value(base + "/key_axis", DType::Int64);
    g.constants[index] = Tensor::from_vector<int64_t>({1}, {2});
    const int key_len = add_value(base + "/key_len", DType::Int64);
    const int expanded = add_value(base + "/mask_over_keys", known_dtype(m.mask));
    std::vector<GraphNode>& out = emit_before[m.pv_matmul];
    out.push_back(new_node("Shape", base + "/k_shape", {m.k}, shape, at));
    out.push_back(new_node("Gather", base + "/key_len", {shape, index}, key_len, at));
    out.back().attrs.set("axis", int64_t{0});
    out.push_back(new_node("Expand", base + "/mask_over_keys", {m.mask, key_len}, expanded, at));
    return expanded;
  }

  void run(bool before_opset23) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      AttentionMatch m;
      if (removed[i] || !match(static_cast<int>(i), before_opset23, m)) continue;
      GraphNode& last = g.nodes[m.pv_matmul];
      const int k0 = m.k;
      if (m.k_perm != std::vector<int64_t>{0, 1, 2, 3}) m.k = permuted_k(m, last);
      int mask = m.mask;
      if (mask >= 0 && !mask_spans_keys(m, k0)) {
        if (last.opset < 8) continue;  // no Expand to broadcast it with
        mask = mask_over_keys(m, last);
      }
      GraphNode fused;
      fused.name = last.name;
      fused.op_type = "Attention";
      fused.opset = before_opset23 ? kAttentionOpset : last.opset;
      fused.index = last.index;
      fused.inputs = {m.q, m.k, m.v};
      if (mask >= 0) fused.inputs.push_back(mask);
      fused.outputs = {last.outputs[0]};
      fused.attrs.set("scale", static_cast<float>(m.scale));
      ctx.applied(before_opset23 ? "attention_before_opset23" : "attention",
                  fmt::format("MatMul '{}' .. Softmax '{}' .. MatMul '{}' ({} nodes{})", g.nodes[m.scores_matmul].name,
                              g.nodes[m.softmax].name, last.name, m.nodes.size() + 1, mask >= 0 ? ", masked" : ""));
      for (int k : m.nodes) removed[k] = true;
      last = std::move(fused);
      count_uses();
      for (const auto& [at, nodes] : emit_before)
        for (const GraphNode& n : nodes)
          for (int in : n.inputs) ++uses[in];
      rank_memo.clear();
    }
  }

  // compact(), with the new nodes emitted before the node they precede.
  void compact_with_new_nodes() {
    std::vector<GraphNode> kept;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (auto e = emit_before.find(static_cast<int>(i)); e != emit_before.end())
        for (GraphNode& n : e->second) kept.push_back(std::move(n));
      if (!removed[i]) kept.push_back(std::move(g.nodes[i]));
    }
    g.nodes = std::move(kept);
  }
};

}  // namespace

void fuse_attention(RuleContext& ctx) {
  AttentionFusion p(ctx);
  p.run(false);
  p.compact_with_new_nodes();
}

void fuse_attention_before_opset23(RuleContext& ctx) {
  AttentionFusion p(ctx);
  p.run(true);
  p.compact_with_new_nodes();
}

}  // namespace onnxmini
