// The matching helpers the normalization fusions share (graph_fusion_norm.cc,
// graph_fusion_norm_exports.cc): constants checked by value, sole readers, the
// last-axis ReduceMean, the 0.5 * x * (..) tail of both Gelu forms.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "runtime/graph_pass.h"

namespace onnxmini {

struct NormPass : FusionPass {
  explicit NormPass(RuleContext& c) : FusionPass(c) {}


  // A float32 constant holding one value (any shape of one element).
  bool scalar_f32(int id, float& v) const {
    const Tensor* t = constant_f32(id);
    if (!t || t->numel() != 1) return false;
    v = t->data<float>()[0];
    return true;
  }

  // The live nodes reading `id` (a node reading it twice is listed once).
  std::vector<int> readers(int id) const {
    std::vector<int> out;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (removed[i]) continue;
      for (int in : g.nodes[i].inputs)
        if (in == id) {
          out.push_back(static_cast<int>(i));
          break;
        }
    }
    return out;
  }
  // The one reader of `id` when its `expected_uses` uses all come from that node (no graph output).
  int sole_reader(int id, int expected_uses = 1) const {
    if (id < 0 || uses[id] != expected_uses) return -1;
    std::vector<int> r = readers(id);
    return r.size() == 1 ? r[0] : -1;
  }

  static bool plain(const GraphNode& n, const char* op, size_t n_inputs) {
    if (!n.domain.empty() || n.op_type != op || n.inputs.size() != n_inputs || n.outputs.size() != 1 ||
        n.outputs[0] < 0)
      return false;
    for (int id : n.inputs)
      if (id < 0) return false;
    return true;
  }
  // The other input of a two-input node, when one of them is `id`.
  static int other_input(const GraphNode& n, int id) {
    if (n.inputs[0] == id) return n.inputs[1];
    if (n.inputs[1] == id) return n.inputs[0];
    return -1;
  }

  // A ReduceMean over exactly the last axis (axes as attribute before opset 18, as a constant
  // input from 18), keepdims 1: the broadcasting Sub / Div of the pattern need the kept axis.
  bool mean_over_last_axis(const GraphNode& n, int rank) const {
    if (!n.domain.empty() || n.op_type != "ReduceMean" || n.outputs.size() != 1 || n.inputs.empty() ||
        n.inputs[0] < 0 || n.attrs.get_int("keepdims", 1) != 1 || n.attrs.get_int("noop_with_empty_axes", 0) != 0)
      return false;
    std::vector<int64_t> axes;
    if (n.attrs.has("axes")) {
      axes = n.attrs.get_ints("axes");
    } else if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
      auto c = g.constants.find(n.inputs[1]);
      if (c == g.constants.end() || g.overridable.count(n.inputs[1]) || c->second.dtype() != DType::Int64) return false;
      axes.assign(c->second.data<int64_t>(), c->second.data<int64_t>() + c->second.numel());
    }
    if (axes.size() != 1) return false;
    return axes[0] == -1 || (rank > 0 && axes[0] == rank - 1);
  }

  // The declared size of `id`'s last axis (graph input or value_info), or -1 when unknown.
  int64_t known_last_dim(int id) const {
    const ValueInfo* info = nullptr;
    for (size_t k = 0; k < g.input_ids.size(); ++k)
      if (g.input_ids[k] == id) info = &g.inputs[k];
    if (auto v = g.value_infos.find(id); !info && v != g.value_infos.end()) info = &v->second;
    if (!info || !info->has_shape || info->shape.empty()) return -1;
    return info->shape.back().value > 0 ? info->shape.back().value : -1;
  }

  // A new float32 constant of `n` ones (the scale of a normalization written without its
  // gamma Mul: LayerNormalization's and RMSNormalization's scale input is not optional).
  int add_ones(const std::string& base, int64_t n) {
    Tensor t(DType::Float32, {n});
    float* d = t.mutable_data<float>();
    for (int64_t i = 0; i < n; ++i) d[i] = 1.0f;
    return add_constant(base, std::move(t));
  }

  int64_t known_rank(int id) const {
    for (size_t k = 0; k < g.input_ids.size(); ++k)
      if (g.input_ids[k] == id && g.inputs[k].has_shape) return static_cast<int64_t>(g.inputs[k].shape.size());
    if (auto v = g.value_infos.find(id); v != g.value_infos.end() && v->second.has_shape)
      return static_cast<int64_t>(v->second.shape.size());
    return -1;
  }
  bool declared_float32(int id) const {
    auto dt = g.known_dtypes.find(id);
    return dt == g.known_dtypes.end() || dt->second == DType::Float32;  // unknown: the kernel checks at run time
  }

  // A float32 one-element constant equal to `want` within float32 rounding (2 ulps).
  bool constant_near(int id, double want) const {
    float v = 0;
    return scalar_f32(id, v) && std::fabs(v - want) <= 2 * 1.1920929e-7 * std::fabs(want);
  }
  // The live Mul reading `id` with a constant near `c` as its other input (either order).
  int mul_by_constant(int id, double c) const {
    const int k = sole_reader(id);
    if (k < 0 || !plain(g.nodes[k], "Mul", 2)) return -1;
    return constant_near(other_input(g.nodes[k], id), c) ? k : -1;
  }
  // A Mul reading `a` and `b` (either order), the only reader of `a`.
  int mul_of(int a, int b) const {
    const int k = sole_reader(a);
    if (k < 0 || !plain(g.nodes[k], "Mul", 2) || other_input(g.nodes[k], a) != b) return -1;
    return k;
  }

  // The product 0.5 * x * a that closes both Gelu forms, in the exporters' three groupings:
  // ((x * a) * 0.5), (x * (a * 0.5)), ((x * 0.5) * a), every Mul in either order, `a` read
  // by the first Mul only. Appends the matched Muls but the last to `matched`; returns the
  // last Mul (whose output the fused node takes over), or -1.
  int half_x_times(int a, int x, std::vector<int>& matched) const {
    if (int m = mul_of(a, x); m >= 0) {  // (x * a) * 0.5
      const int last = mul_by_constant(g.nodes[m].outputs[0], 0.5);
      if (last >= 0) matched.push_back(m);
      return last;
    }
    if (int h = mul_by_constant(a, 0.5); h >= 0) {  // x * (a * 0.5)
      const int last = mul_of(g.nodes[h].outputs[0], x);
      if (last >= 0) matched.push_back(h);
      return last;
    }
    // (x * 0.5) * a: the half is another reader of x
    const int i_last = sole_reader(a);
    if (i_last < 0 || !plain(g.nodes[i_last], "Mul", 2)) return -1;
    const int hx = other_input(g.nodes[i_last], a);
    if (sole_reader(hx) != i_last) return -1;
    for (size_t k = 0; k < g.nodes.size(); ++k)
      if (!removed[k] && plain(g.nodes[k], "Mul", 2) && g.nodes[k].outputs[0] == hx && other_input(g.nodes[k], x) >= 0 &&
          constant_near(other_input(g.nodes[k], x), 0.5)) {
        matched.push_back(static_cast<int>(k));
        return i_last;
      }
    return -1;
  }
};

}  // namespace onnxmini
