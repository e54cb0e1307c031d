// Graph fusions (see graph_fusion.h). Each pattern is one short function over
// the node list; fused-away nodes are marked and removed at the end, so the
// execution order of the remaining nodes is unchanged (a fused node produces
// its final value earlier than before, never later, so the order stays valid).
#include "runtime/graph_fusion.h"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>

namespace onnxmini {
namespace {

struct Pass {
  Graph& g;
  std::vector<bool> removed;
  std::vector<int> uses;  // per value id: node-input uses + 1 per graph output
  FusionReport report;

  explicit Pass(Graph& graph) : g(graph), removed(graph.nodes.size(), false) { count_uses(); }

  void count_uses() {
    uses.assign(g.value_names.size(), 0);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!removed[i])
        for (int id : g.nodes[i].inputs)
          if (id >= 0) ++uses[id];
    for (int id : g.output_ids) ++uses[id];
  }

  // The float32 constant behind value id, or nullptr (overridable initializers are not constant).
  const Tensor* constant_f32(int id) const {
    if (id < 0 || g.overridable.count(id)) return nullptr;
    auto it = g.constants.find(id);
    return it != g.constants.end() && it->second.dtype() == DType::Float32 ? &it->second : nullptr;
  }

  // The one live node reading `id` as an input, when `id` has exactly that use.
  int sole_consumer(int id) const {
    if (id < 0 || uses[id] != 1) return -1;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!removed[i])
        for (int in : g.nodes[i].inputs)
          if (in == id) return static_cast<int>(i);
    return -1;  // the one use is a graph output
  }

  static std::string label(const GraphNode& n) { return fmt::format("{} '{}'", n.op_type, n.name); }

  bool is_conv(const GraphNode& n) const {
    return n.domain.empty() && n.op_type == "Conv" && n.outputs.size() == 1 && constant_f32(n.inputs.at(1));
  }
  static bool plain_bn(const GraphNode& n) {
    if (!n.domain.empty() || n.op_type != "BatchNormalization" || n.inputs.size() != 5) return false;
    if (n.attrs.get_int("training_mode", 0) != 0) return false;
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i] >= 0) return false;  // running mean / var requested
    return true;
  }

  // BN's per-channel scale = gamma / sqrt(var + eps) and shift = beta - mean * scale.
  bool bn_affine(const GraphNode& bn, std::vector<float>& scale, std::vector<float>& shift) const {
    const Tensor *gamma = constant_f32(bn.inputs[1]), *beta = constant_f32(bn.inputs[2]);
    const Tensor *mean = constant_f32(bn.inputs[3]), *var = constant_f32(bn.inputs[4]);
    if (!gamma || !beta || !mean || !var) return false;
    const int64_t C = gamma->numel();
    if (gamma->rank() != 1 || beta->numel() != C || mean->numel() != C || var->numel() != C) return false;
    const double eps = bn.attrs.get_float("epsilon", 1e-5f);
    scale.resize(C), shift.resize(C);
    for (int64_t c = 0; c < C; ++c) {
      const double s = gamma->data<float>()[c] / std::sqrt(static_cast<double>(var->data<float>()[c]) + eps);
      scale[c] = static_cast<float>(s);
      shift[c] = static_cast<float>(beta->data<float>()[c] - mean->data<float>()[c] * s);
    }
    return true;
  }

  int add_constant(const std::string& base, Tensor t) {
    std::string name = base;
    for (int i = 1; g.value_ids.count(name); ++i) name = fmt::format("{}_{}", base, i);
    const int id = static_cast<int>(g.value_names.size());
    g.value_names.push_back(name);
    g.value_ids[name] = id;
    g.known_dtypes[id] = t.dtype();
    g.constants[id] = std::move(t);
    uses.push_back(0);
    return id;
  }

  // Conv -> BN: W'[m] = W[m] * s[m], B'[m] = (B[m] - mean[m]) * s[m] + beta[m].
  void conv_bn() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      GraphNode& conv = g.nodes[i];
      if (removed[i] || !is_conv(conv) || conv.attrs.has("_fused_activation")) continue;
      const int j = sole_consumer(conv.outputs[0]);
      if (j < 0 || !plain_bn(g.nodes[j]) || g.nodes[j].inputs[0] != conv.outputs[0]) continue;
      std::vector<float> s, t;
      const Tensor& w = *constant_f32(conv.inputs[1]);
      const int64_t M = w.dim(0);
      if (!bn_affine(g.nodes[j], s, t) || static_cast<int64_t>(s.size()) != M) continue;
      const Tensor* b = conv.inputs.size() > 2 ? constant_f32(conv.inputs[2]) : nullptr;
      if (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && (!b || b->numel() != M)) continue;
      Tensor w2 = w.clone(), b2(DType::Float32, {M});
      const int64_t per = w.numel() / M;
      float* wd = w2.mutable_data<float>();
      for (int64_t m = 0; m < M; ++m) {
        for (int64_t k = 0; k < per; ++k) wd[m * per + k] *= s[m];
        b2.mutable_data<float>()[m] = (b ? b->data<float>()[m] : 0.0f) * s[m] + t[m];
      }
      conv.inputs.resize(3);
      conv.inputs[1] = add_constant(conv.name + "_bn_folded_W", std::move(w2));
      conv.inputs[2] = add_constant(conv.name + "_bn_folded_B", std::move(b2));
      conv.outputs[0] = g.nodes[j].outputs[0];
      removed[j] = true;
      report.applied.push_back(label(conv) + " + " + label(g.nodes[j]) + " (folded into weights)");
      count_uses();
    }
  }

  // BN -> Conv: the Conv applies BN's affine to each input channel while copying X.
  void bn_conv() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const GraphNode& bn = g.nodes[i];
      if (removed[i] || !plain_bn(bn) || bn.outputs.empty()) continue;
      const int j = sole_consumer(bn.outputs[0]);
      if (j < 0) continue;
      GraphNode& conv = g.nodes[j];
      if (!is_conv(conv) || conv.inputs[0] != bn.outputs[0] || conv.attrs.has("_fused_input_scale")) continue;
      std::vector<float> s, t;
      const Tensor& w = *constant_f32(conv.inputs[1]);
      const int64_t group = conv.attrs.get_int("group", 1);
      if (!bn_affine(bn, s, t) || w.rank() < 3 || static_cast<int64_t>(s.size()) != w.dim(1) * group) continue;
      conv.attrs.set("_fused_input_scale", s);
      conv.attrs.set("_fused_input_shift", t);
      conv.inputs[0] = bn.inputs[0];
      removed[i] = true;
      report.applied.push_back(label(bn) + " + " + label(conv) + " (input affine)");
      count_uses();
    }
  }

  // The activation node's parameters as (name, params) for a producer with
  // `channels` output channels (PRelu only for Conv: channel = axis 1 of a rank-`rank` output).
  bool activation(const GraphNode& a, int64_t channels, size_t rank, std::string& name, std::vector<float>& params) {
    if (!a.domain.empty() || a.outputs.size() != 1) return false;
    name = a.op_type;
    params.clear();
    if (name == "Relu" || name == "Sigmoid") return a.inputs.size() == 1;
    if (name == "Clip") {
      float lo = -FLT_MAX, hi = FLT_MAX;
      if (a.opset < 11) {
        lo = a.attrs.get_float("min", lo), hi = a.attrs.get_float("max", hi);
      } else {
        for (size_t k = 1; k < a.inputs.size() && k < 3; ++k) {
          if (a.inputs[k] < 0) continue;
          const Tensor* v = constant_f32(a.inputs[k]);
          if (!v || v->numel() != 1) return false;
          (k == 1 ? lo : hi) = v->data<float>()[0];
        }
      }
      params = {lo, hi};
      return true;
    }
    if (name == "PRelu" && channels > 0 && a.inputs.size() == 2) {
      const Tensor* slope = constant_f32(a.inputs[1]);
      if (!slope || slope->rank() > rank) return false;
      // Right-aligned broadcasting: only the dimension facing the channel axis may differ from 1.
      const int64_t ch_axis = 1 - static_cast<int64_t>(rank - slope->rank());
      for (size_t d = 0; d < slope->rank(); ++d)
        if (static_cast<int64_t>(d) != ch_axis && slope->dim(d) != 1) return false;
      const int64_t n = slope->numel();
      if (n != 1 && n != channels) return false;
      params.resize(channels);
      for (int64_t m = 0; m < channels; ++m) params[m] = slope->data<float>()[n == 1 ? 0 : m];
      return true;
    }
    return false;
  }

  // Conv / Gemm -> activation: the activation goes into the producer's epilogue.
  void producer_activation() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      GraphNode& p = g.nodes[i];
      if (removed[i] || p.attrs.has("_fused_activation") || p.outputs.size() != 1) continue;
      int64_t channels = -1;
      size_t rank = 0;
      if (is_conv(p)) {
        const Tensor& w = *constant_f32(p.inputs[1]);
        channels = w.dim(0), rank = w.rank();
      } else if (!(p.domain.empty() && p.op_type == "Gemm" && p.inputs.size() >= 2 &&
                   (constant_f32(p.inputs[1]) || (g.known_dtypes.count(p.inputs[0]) &&
                                                  g.known_dtypes.at(p.inputs[0]) == DType::Float32)))) {
        continue;
      }
      const int j = sole_consumer(p.outputs[0]);
      if (j < 0 || g.nodes[j].inputs.empty() || g.nodes[j].inputs[0] != p.outputs[0]) continue;
      std::string name;
      std::vector<float> params;
      if (!activation(g.nodes[j], channels, rank, name, params)) continue;
      p.attrs.set("_fused_activation", name);
      if (!params.empty()) p.attrs.set("_fused_activation_params", params);
      p.outputs[0] = g.nodes[j].outputs[0];
      removed[j] = true;
      report.applied.push_back(label(p) + " + " + label(g.nodes[j]));
      count_uses();
    }
  }

  void compact() {
    std::vector<GraphNode> kept;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!removed[i]) kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
  }
};

}  // namespace

FusionReport fuse_graph(Graph& g, int level) {
  if (level <= 0) return {};
  Pass pass(g);
  pass.conv_bn();
  pass.bn_conv();
  pass.producer_activation();
  pass.compact();
  return pass.report;
}

}  // namespace onnxmini
