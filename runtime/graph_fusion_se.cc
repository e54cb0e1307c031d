// Squeeze-and-excitation fusion (see graph_fusion_se.h).
#include "runtime/graph_fusion_se.h"

#include <fmt/format.h>

#include "kernels/fused_attributes.h"
#include "runtime/graph_pass.h"

namespace onnxmini {
namespace {

struct SqueezeExcitePass : FusionPass {
  explicit SqueezeExcitePass(RuleContext& c) : FusionPass(c) {}
  ~SqueezeExcitePass() { compact(); }

  static std::string label(const GraphNode& n) { return fmt::format("{} '{}'", n.op_type, n.name); }

  static bool all_equal(const GraphNode& n, const char* attr, int64_t v) {
    if (!n.attrs.has(attr)) return true;
    for (int64_t x : n.attrs.get_ints(attr))
      if (x != v) return false;
    return true;
  }

  // A 1x1 Conv over the squeezed [N, C, 1, ..] value: the filter (M x C x 1 ..) when it
  // qualifies (see graph_fusion_se.h), else nullptr.
  const Tensor* pointwise_conv(const GraphNode& n, int input) const {
    if (!n.domain.empty() || n.op_type != "Conv" || n.outputs.size() != 1 || n.outputs[0] < 0 || n.inputs.size() < 2 ||
        n.inputs.size() > 3 || n.inputs[0] != input)
      return nullptr;
    if (n.attrs.has(fused_attr::kResidual) || n.attrs.has(fused_attr::kInputScale) ||
        n.attrs.has(fused_attr::kInputShift))
      return nullptr;
    const Tensor* w = constant_f32(n.inputs[1]);
    if (!w || w->rank() < 3) return nullptr;
    for (size_t d = 2; d < w->rank(); ++d)
      if (w->dim(d) != 1) return nullptr;
    const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
    if (n.attrs.get_int("group", 1) != 1 || (auto_pad != "NOTSET" && auto_pad != "VALID") ||
        !all_equal(n, "strides", 1) || !all_equal(n, "pads", 0) || !all_equal(n, "kernel_shape", 1))
      return nullptr;
    if (n.inputs.size() == 3 && n.inputs[2] >= 0) {
      const Tensor* b = constant_f32(n.inputs[2]);
      if (!b || b->numel() != w->dim(0)) return nullptr;
    }
    return w;
  }

  // Mul(a, b) or Add(a, b) (numpy broadcasting, opset >= 7) of exactly {p, q} in either order.
  static bool binary_of(const GraphNode& n, const char* op, int p, int q) {
    if (!n.domain.empty() || n.op_type != op || n.opset < 7 || n.inputs.size() != 2 || n.outputs.size() != 1 ||
        n.outputs[0] < 0)
      return false;
    return (n.inputs[0] == p && n.inputs[1] == q) || (n.inputs[0] == q && n.inputs[1] == p);
  }

  // Copies a Conv's fused activation (if any) to SqueezeExcite's attribute `name`.
  static void copy_activation(const GraphNode& conv, GraphNode& se, const std::string& name) {
    if (!conv.attrs.has(fused_attr::kActivation)) return;
    se.attrs.set(name, conv.attrs.get_string(fused_attr::kActivation));
    if (conv.attrs.has(fused_attr::kActivationParams))
      se.attrs.set(name + "_params", conv.attrs.get_floats(fused_attr::kActivationParams));
  }

  void run() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const GraphNode& gap = g.nodes[i];
      if (removed[i] || !gap.domain.empty() || gap.op_type != "GlobalAveragePool" || gap.inputs.size() != 1 ||
          gap.inputs[0] < 0 || gap.outputs.size() != 1)
        continue;
      const int x = gap.inputs[0];
      const int c1 = sole_consumer(gap.outputs[0]);
      const Tensor* w1 = c1 >= 0 ? pointwise_conv(g.nodes[c1], gap.outputs[0]) : nullptr;
      if (!w1) continue;
      const int c2 = sole_consumer(g.nodes[c1].outputs[0]);
      const Tensor* w2 = c2 >= 0 ? pointwise_conv(g.nodes[c2], g.nodes[c1].outputs[0]) : nullptr;
      if (!w2 || w2->rank() != w1->rank() || w2->dim(0) != w1->dim(1) || w2->dim(1) != w1->dim(0)) continue;
      const int gate = g.nodes[c2].outputs[0];
      const int mul = sole_consumer(gate);
      if (mul < 0 || !binary_of(g.nodes[mul], "Mul", x, gate)) continue;
      // Add(X, X * gate) = X * (1 + gate): the Add's pass over X and the product goes too.
      const int add = sole_consumer(g.nodes[mul].outputs[0]);
      const bool residual = add >= 0 && binary_of(g.nodes[add], "Add", x, g.nodes[mul].outputs[0]);
      const int last = residual ? add : mul;

      GraphNode se = onnxmini_node(gap, "SqueezeExcite");
      auto bias = [&](int c) { return g.nodes[c].inputs.size() == 3 ? g.nodes[c].inputs[2] : -1; };
      se.inputs = {x, g.nodes[c1].inputs[1], bias(c1), g.nodes[c2].inputs[1], bias(c2)};
      se.outputs = {g.nodes[last].outputs[0]};
      copy_activation(g.nodes[c1], se, "activation1");
      copy_activation(g.nodes[c2], se, "activation2");
      se.attrs.set("residual", static_cast<int64_t>(residual));
      std::string what = label(gap) + " + " + label(g.nodes[c1]) + " + " + label(g.nodes[c2]) + " + " + label(g.nodes[mul]);
      if (residual) what += " + " + label(g.nodes[add]);
      ctx.applied("squeeze_excite", what + " (one SqueezeExcite)");
      removed[i] = removed[c1] = removed[c2] = true;
      if (residual) removed[mul] = true;
      g.nodes[last] = std::move(se);  // X and the weights exist here; its readers come later
      count_uses();
    }
  }
};

}  // namespace

void fuse_squeeze_excite(RuleContext& ctx) { SqueezeExcitePass(ctx).run(); }

}  // namespace onnxmini
