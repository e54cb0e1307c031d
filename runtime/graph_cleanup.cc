// Basic (level 1) rules: eliminations that keep every value bit for bit (graph_cleanup.h).
#include "runtime/graph_cleanup.h"

#include <fmt/format.h>

#include <algorithm>

namespace onnxmini {
namespace {

std::string label(const GraphNode& n) { return fmt::format("{} '{}'", n.op_type, n.name); }

bool onnx_op(const GraphNode& n, const char* op) { return n.domain.empty() && n.op_type == op; }

// Uses of each value, producers, and the rewiring every elimination needs.
struct Rewirer {
  Graph& g;
  std::vector<bool> removed;
  std::vector<int> uses;       // node inputs + implicit inputs + graph outputs
  std::vector<bool> implicit;  // read by a subgraph (by name: cannot be renamed)
  std::vector<bool> output;    // a graph output
  std::vector<int> producer;   // node index or -1

  explicit Rewirer(Graph& graph) : g(graph), removed(graph.nodes.size(), false) { recount(); }

  void recount() {
    const size_t nv = g.value_names.size();
    uses.assign(nv, 0), implicit.assign(nv, false), output.assign(nv, false), producer.assign(nv, -1);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (removed[i]) continue;
      for (int id : g.nodes[i].inputs)
        if (id >= 0) ++uses[id];
      for (int id : g.nodes[i].implicit_inputs) ++uses[id], implicit[id] = true;
      for (int id : g.nodes[i].outputs)
        if (id >= 0) producer[id] = static_cast<int>(i);
    }
    for (int id : g.output_ids) ++uses[id], output[id] = true;
  }

  bool is_graph_input(int id) const { return std::find(g.input_ids.begin(), g.input_ids.end(), id) != g.input_ids.end(); }

  // Removes node `i`, whose output `out` equals its input `in`: readers of `out` read
  // `in` instead, or, when `out` is a graph output, the producer of `in` writes `out`.
  // False (nothing changed) when neither is safe.
  bool bypass(size_t i, int in, int out) {
    if (in < 0 || out < 0 || implicit[out]) return false;
    if (output[out]) {
      const int p = producer[in];
      if (p < 0 || output[in] || implicit[in] || uses[in] != 1) return false;
      for (int& id : g.nodes[p].outputs)
        if (id == in) id = out;
    } else {
      for (size_t k = 0; k < g.nodes.size(); ++k)
        if (!removed[k])
          for (int& id : g.nodes[k].inputs)
            if (id == out) id = in;
    }
    removed[i] = true;
    recount();
    return true;
  }

  ~Rewirer() {
    std::vector<GraphNode> kept;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!removed[i]) kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
  }

  // The value's type when the graph knows it.
  DType dtype(int id) const {
    auto it = g.known_dtypes.find(id);
    return it == g.known_dtypes.end() ? DType::Undefined : it->second;
  }

  // The declared shape of `id` when every dimension is a number (graph input or value_info).
  bool fixed_shape(int id, Shape& shape) const {
    const ValueInfo* info = nullptr;
    for (size_t k = 0; k < g.input_ids.size(); ++k)
      if (g.input_ids[k] == id) info = &g.inputs[k];
    if (auto v = g.value_infos.find(id); !info && v != g.value_infos.end()) info = &v->second;
    if (auto c = g.constants.find(id); !info && c != g.constants.end() && !g.overridable.count(id)) {
      shape = c->second.shape();
      return true;
    }
    if (!info || !info->has_shape) return false;
    shape.clear();
    for (const Dim& d : info->shape) {
      if (d.value < 0) return false;
      shape.push_back(d.value);
    }
    return true;
  }

  // A constant int64 vector (not an overridable initializer).
  const Tensor* const_ints(int id) const {
    if (id < 0 || g.overridable.count(id)) return nullptr;
    auto it = g.constants.find(id);
    return it != g.constants.end() && it->second.dtype() == DType::Int64 && it->second.rank() == 1 ? &it->second
                                                                                                    : nullptr;
  }
};

// Eliminates every node `op` for which `single_input` gives the value it passes through (or -1).
template <typename F>
void eliminate(RuleContext& ctx, const char* rule, F passthrough) {
  Rewirer r(ctx.g);
  for (size_t i = 0; i < ctx.g.nodes.size(); ++i) {
    if (r.removed[i]) continue;
    const GraphNode& n = ctx.g.nodes[i];
    const int in = passthrough(r, n);
    if (in < 0 || n.outputs.empty()) continue;
    const std::string what = label(n);
    if (r.bypass(i, in, n.outputs[0])) ctx.applied(rule, what);
  }
}

}  // namespace

void eliminate_identity(RuleContext& ctx) {
  eliminate(ctx, "eliminate_identity", [](const Rewirer&, const GraphNode& n) {
    return onnx_op(n, "Identity") && n.inputs.size() == 1 && n.outputs.size() == 1 ? n.inputs[0] : -1;
  });
}

void eliminate_dropout(RuleContext& ctx) {
  eliminate(ctx, "eliminate_dropout", [](const Rewirer& r, const GraphNode& n) {
    if (!onnx_op(n, "Dropout") || n.inputs.empty() || n.outputs.empty()) return -1;
    if (n.outputs.size() > 1 && n.outputs[1] >= 0 && r.uses[n.outputs[1]] > 0) return -1;  // the mask is read
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {  // training_mode (opset 12): must be a constant false
      auto it = r.g.constants.find(n.inputs[2]);
      if (it == r.g.constants.end() || r.g.overridable.count(n.inputs[2]) || it->second.dtype() != DType::Bool ||
          it->second.numel() != 1 || it->second.data<bool>()[0])
        return -1;
    }
    return n.inputs[0];
  });
}

void eliminate_noop_cast(RuleContext& ctx) {
  eliminate(ctx, "eliminate_noop_cast", [](const Rewirer& r, const GraphNode& n) {
    if (!onnx_op(n, "Cast") || n.inputs.size() != 1 || n.outputs.size() != 1) return -1;
    auto to = n.attrs.items().find("to");
    const int64_t* code = to == n.attrs.items().end() ? nullptr : std::get_if<int64_t>(&to->second);
    if (!code) return -1;  // absent, or a type name (opset < 6): left to the kernel, which checks it
    const DType from = r.dtype(n.inputs[0]);
    return from != DType::Undefined && static_cast<int64_t>(from) == *code ? n.inputs[0] : -1;
  });
}

void eliminate_noop_reshape(RuleContext& ctx) {
  eliminate(ctx, "eliminate_noop_reshape", [](const Rewirer& r, const GraphNode& n) {
    if (!onnx_op(n, "Reshape") || n.inputs.size() != 2 || n.outputs.size() != 1) return -1;
    const Tensor* s = r.const_ints(n.inputs[1]);
    Shape x;
    if (!s || !r.fixed_shape(n.inputs[0], x) || static_cast<size_t>(s->numel()) != x.size()) return -1;
    const bool allowzero = n.attrs.get_int("allowzero", 0) != 0;
    for (size_t d = 0; d < x.size(); ++d) {
      const int64_t v = s->data<int64_t>()[d];
      if (v != x[d] && !(v == 0 && !allowzero)) return -1;  // 0 copies x's dimension; -1 is left alone
    }
    return n.inputs[0];
  });
}

void collapse_reshapes(RuleContext& ctx) {
  Rewirer r(ctx.g);
  for (GraphNode& outer : ctx.g.nodes) {
    if (!onnx_op(outer, "Reshape") || outer.inputs.size() != 2) continue;
    const int mid = outer.inputs[0];
    const int p = mid >= 0 ? r.producer[mid] : -1;
    if (p < 0 || !onnx_op(ctx.g.nodes[p], "Reshape") || ctx.g.nodes[p].inputs.size() != 2) continue;
    // A 0 in the outer shape copies a dimension of the intermediate: only safe without it.
    const Tensor* s = r.const_ints(outer.inputs[1]);
    if (!s) continue;
    const bool allowzero = outer.attrs.get_int("allowzero", 0) != 0;
    const auto* v = s->data<int64_t>();
    if (!allowzero && std::find(v, v + s->numel(), 0) != v + s->numel()) continue;
    outer.inputs[0] = ctx.g.nodes[p].inputs[0];
    ctx.applied("collapse_reshapes", label(ctx.g.nodes[p]) + " + " + label(outer));
    r.recount();
  }
  // The inner Reshape, when nothing else read it, is now dead (eliminate_dead_nodes removes it).
}

void cancel_transposes(RuleContext& ctx) {
  Rewirer r(ctx.g);
  for (size_t i = 0; i < ctx.g.nodes.size(); ++i) {
    if (r.removed[i]) continue;
    GraphNode& t = ctx.g.nodes[i];
    if (!onnx_op(t, "Transpose") || t.inputs.size() != 1 || t.outputs.size() != 1 || !t.attrs.has("perm")) continue;
    std::vector<int64_t> perm = t.attrs.get_ints("perm");
    const int mid = t.inputs[0];
    const int p = mid >= 0 ? r.producer[mid] : -1;
    std::string what = label(t);
    if (p >= 0 && onnx_op(ctx.g.nodes[p], "Transpose") && ctx.g.nodes[p].attrs.has("perm")) {
      // y = T2(T1(x)): y[.., i, ..] takes axis p2[i] of T1's output, which is axis p1[p2[i]] of x.
      const std::vector<int64_t> p1 = ctx.g.nodes[p].attrs.get_ints("perm");
      if (p1.size() != perm.size()) continue;
      std::vector<int64_t> composed(perm.size());
      bool valid = true;
      for (size_t k = 0; k < perm.size() && valid; ++k) {
        valid = perm[k] >= 0 && perm[k] < static_cast<int64_t>(p1.size());
        if (valid) composed[k] = p1[perm[k]];
      }
      if (!valid) continue;
      what = label(ctx.g.nodes[p]) + " + " + what;
      t.inputs[0] = ctx.g.nodes[p].inputs[0];
      t.attrs.set("perm", composed);
      perm = composed;
      r.recount();
      ctx.applied("cancel_transposes", what + " (composed)");
    }
    bool identity = true;
    for (size_t k = 0; k < perm.size(); ++k) identity = identity && perm[k] == static_cast<int64_t>(k);
    if (identity && r.bypass(i, t.inputs[0], t.outputs[0])) ctx.applied("cancel_transposes", what + " (identity)");
  }
}

void fold_known_shapes(RuleContext& ctx) {
  Rewirer r(ctx.g);
  for (size_t i = 0; i < ctx.g.nodes.size(); ++i) {
    const GraphNode& n = ctx.g.nodes[i];
    const bool shape_op = onnx_op(n, "Shape"), size_op = onnx_op(n, "Size");
    if ((!shape_op && !size_op) || n.inputs.size() != 1 || n.outputs.size() != 1 || n.outputs[0] < 0) continue;
    Shape x;
    if (!r.fixed_shape(n.inputs[0], x)) continue;
    const int out = n.outputs[0];
    if (r.output[out] || r.implicit[out]) continue;  // kept as a node: its value is also a graph output
    Tensor value;
    if (size_op) {
      int64_t count = 1;
      for (int64_t d : x) count *= d;
      value = Tensor::scalar<int64_t>(count);
    } else {
      // Shape-15's start / end: clamped, negative counting from the back.
      const int64_t rank = static_cast<int64_t>(x.size());
      auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
      const int64_t start = clamp(n.attrs.get_int("start", 0)), end = clamp(n.attrs.get_int("end", rank));
      std::vector<int64_t> dims(x.begin() + start, x.begin() + std::max(start, end));
      value = Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims);
    }
    ctx.g.constants[out] = std::move(value);
    ctx.g.known_dtypes[out] = DType::Int64;
    ctx.applied("fold_known_shapes", label(n) + " of '" + ctx.g.value_names[n.inputs[0]] + "'");
    r.removed[i] = true;
  }
}

void eliminate_dead_nodes(RuleContext& ctx) {
  Rewirer r(ctx.g);
  for (bool changed = true; changed;) {  // removing a reader may leave its producers dead
    changed = false;
    for (size_t i = ctx.g.nodes.size(); i-- > 0;) {
      if (r.removed[i]) continue;
      const GraphNode& n = ctx.g.nodes[i];
      bool read = false;
      for (int id : n.outputs) read = read || (id >= 0 && r.uses[id] > 0);
      if (read || n.outputs.empty()) continue;
      r.removed[i] = true;
      ctx.applied("eliminate_dead_nodes", label(n));
      r.recount();
      changed = true;
    }
  }
}

}  // namespace onnxmini
