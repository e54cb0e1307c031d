// Normalization fusions (see graph_fusion_norm.h). Matching walks forward from the first
// ReduceMean through sole consumers; fused-away nodes are marked and removed at the end, so
// the remaining nodes keep their order (the fused node sits at the last matched node's place,
// where all of its inputs exist).
#include "runtime/graph_fusion_norm.h"

#include <fmt/format.h>

#include <cmath>

#include "runtime/graph_norm_pass.h"

namespace onnxmini {
namespace {

struct NormFusions : NormPass {
  explicit NormFusions(RuleContext& c) : NormPass(c) {}

  // `before_opset17`: the model imports an opset without LayerNormalization; the fused node
  // asks for the opset-17 kernel (onnxmini-only: such a graph is not saved as ONNX).
  void layer_norm(bool before_opset17) {
    for (size_t i0 = 0; i0 < g.nodes.size(); ++i0) {
      const GraphNode& mean = g.nodes[i0];
      if (removed[i0] || (mean.opset < 17) != before_opset17 || mean.inputs.empty() || mean.inputs[0] < 0) continue;
      const int x = mean.inputs[0];
      const int rank = static_cast<int>(known_rank(x));
      if (!mean_over_last_axis(mean, rank) || !declared_float32(x)) continue;
      // Sub(X, mean)
      const int i_sub = sole_reader(mean.outputs[0]);
      if (i_sub < 0 || !plain(g.nodes[i_sub], "Sub", 2) || g.nodes[i_sub].inputs[0] != x ||
          g.nodes[i_sub].inputs[1] != mean.outputs[0])
        continue;
      const int d = g.nodes[i_sub].outputs[0];
      // d is read by the square (once as Pow's base, twice as Mul(d, d)) and by the Div.
      std::vector<int> d_readers = readers(d);
      if (d_readers.size() != 2) continue;
      int i_sq = -1, i_div = -1;
      for (int r : d_readers) {
        const GraphNode& n = g.nodes[r];
        float e = 0;
        if (plain(n, "Pow", 2) && n.inputs[0] == d && scalar_f32(n.inputs[1], e) && e == 2.0f) i_sq = r;
        else if (plain(n, "Mul", 2) && n.inputs[0] == d && n.inputs[1] == d) i_sq = r;
        else if (plain(n, "Div", 2) && n.inputs[0] == d && n.inputs[1] != d) i_div = r;
      }
      if (i_sq < 0 || i_div < 0) continue;
      const int d_uses = g.nodes[i_sq].op_type == "Mul" ? 3 : 2;
      if (uses[d] != d_uses) continue;
      // ReduceMean(square) -> Add(eps) -> Sqrt -> the Div's divisor
      const int i_var = sole_reader(g.nodes[i_sq].outputs[0]);
      if (i_var < 0 || !mean_over_last_axis(g.nodes[i_var], rank) ||
          g.nodes[i_var].inputs[0] != g.nodes[i_sq].outputs[0])
        continue;
      const int i_add = sole_reader(g.nodes[i_var].outputs[0]);
      float eps = 0;
      if (i_add < 0 || !plain(g.nodes[i_add], "Add", 2) ||
          !scalar_f32(other_input(g.nodes[i_add], g.nodes[i_var].outputs[0]), eps) || !(eps > 0.0f))
        continue;
      const int i_sqrt = sole_reader(g.nodes[i_add].outputs[0]);
      if (i_sqrt < 0 || !plain(g.nodes[i_sqrt], "Sqrt", 1) || sole_reader(g.nodes[i_sqrt].outputs[0]) != i_div ||
          g.nodes[i_div].inputs[1] != g.nodes[i_sqrt].outputs[0])
        continue;
      // Mul(gamma [C]) [-> Add(beta [C])]. Without the gamma Mul (Keras / torch scale=False:
      // the Div's reader is no Mul) the scale is a new constant of ones [C], C from beta or
      // X's declared last axis (LayerNormalization's Scale is not optional); neither known:
      // left alone. A Mul by anything but a [C] constant is left alone too.
      const int normed = g.nodes[i_div].outputs[0];
      int i_mul = sole_reader(normed), gamma_id = -1;
      if (i_mul >= 0 && plain(g.nodes[i_mul], "Mul", 2)) {
        // One gamma per element of the last axis; a one-element gamma would broadcast in the
        // unfused graph but is not the [C] scale the kernel checks against X's last dim.
        gamma_id = other_input(g.nodes[i_mul], normed);
        const Tensor* gamma = constant_f32(gamma_id);
        if (!gamma || gamma->rank() != 1 || gamma->numel() < 2) continue;
      } else {
        i_mul = -1;
      }
      int last = i_mul >= 0 ? i_mul : i_div, beta_id = -1;
      const int scaled = g.nodes[last].outputs[0];
      const int64_t C = gamma_id >= 0 ? constant_f32(gamma_id)->numel() : -1;
      const int i_beta = sole_reader(scaled);
      if (i_beta >= 0 && plain(g.nodes[i_beta], "Add", 2)) {
        const int b = other_input(g.nodes[i_beta], scaled);
        const Tensor* beta = constant_f32(b);
        if (beta && beta->rank() == 1 && beta->numel() >= 2 && (C < 0 || beta->numel() == C)) beta_id = b, last = i_beta;
      }
      if (gamma_id < 0) {
        const int64_t n = beta_id >= 0 ? constant_f32(beta_id)->numel() : known_last_dim(x);
        const int64_t declared = known_last_dim(x);
        if (n < 1 || (declared > 0 && declared != n)) continue;
        gamma_id = add_ones(mean.name + "_scale_ones", n);
      }
      GraphNode fused;
      fused.name = mean.name.empty() ? g.nodes[last].name : mean.name;
      fused.op_type = "LayerNormalization";
      fused.opset = before_opset17 ? 17 : mean.opset;
      fused.index = g.nodes[last].index;
      fused.inputs = {x, gamma_id};
      if (beta_id >= 0) fused.inputs.push_back(beta_id);
      fused.outputs = {g.nodes[last].outputs[0]};
      fused.attrs.set("axis", int64_t{-1});
      fused.attrs.set("epsilon", eps);
      std::vector<int> matched = {static_cast<int>(i0), i_sub, i_sq, i_var, i_add, i_sqrt, i_div};
      if (i_mul >= 0) matched.push_back(i_mul);
      if (beta_id >= 0) matched.push_back(i_beta);
      const int n_matched = static_cast<int>(matched.size());
      ctx.applied(before_opset17 ? "layer_norm_before_opset17" : "layer_norm", fmt::format("ReduceMean '{}' .. {} '{}' ({} nodes)", mean.name,
                                            g.nodes[last].op_type, g.nodes[last].name, n_matched));
      for (int k : matched) removed[k] = true;
      removed[last] = false;
      g.nodes[last] = std::move(fused);
      count_uses();
    }
  }


  // 0.5 * x * (1 + Erf(x / sqrt 2)) in the exporters' three groupings (half_x_times),
  // x / sqrt 2 written as Div(x, 1.41421..) or Mul(x, 0.70710..); every Mul / Add in either order.
  void gelu(bool before_opset20) {
    for (size_t ie = 0; ie < g.nodes.size(); ++ie) {
      const GraphNode& erf = g.nodes[ie];
      if (removed[ie] || !plain(erf, "Erf", 1) || (erf.opset < 20) != before_opset20) continue;
      // x / sqrt 2, the Erf its only reader
      int i_scale = -1, x = -1;
      for (size_t k = 0; k < g.nodes.size() && i_scale < 0; ++k) {
        const GraphNode& n = g.nodes[k];
        if (removed[k] || n.outputs.empty() || n.outputs[0] != erf.inputs[0]) continue;
        if (plain(n, "Div", 2) && constant_near(n.inputs[1], std::sqrt(2.0))) x = n.inputs[0];
        else if (plain(n, "Mul", 2) && constant_near(n.inputs[1], std::sqrt(0.5))) x = n.inputs[0];
        else if (plain(n, "Mul", 2) && constant_near(n.inputs[0], std::sqrt(0.5))) x = n.inputs[1];
        i_scale = static_cast<int>(k);
      }
      if (x < 0 || sole_reader(erf.inputs[0]) != static_cast<int>(ie) || !declared_float32(x)) continue;
      // 1 + erf
      const int i_one = sole_reader(erf.outputs[0]);
      if (i_one < 0 || !plain(g.nodes[i_one], "Add", 2) || !constant_near(other_input(g.nodes[i_one], erf.outputs[0]), 1.0))
        continue;
      const int a = g.nodes[i_one].outputs[0];
      std::vector<int> matched = {i_scale, static_cast<int>(ie), i_one};
      const int last = half_x_times(a, x, matched);
      if (last < 0) continue;
      GraphNode fused;
      fused.name = g.nodes[last].name;
      fused.op_type = "Gelu";
      fused.opset = before_opset20 ? 20 : erf.opset;
      fused.index = g.nodes[last].index;
      fused.inputs = {x};
      fused.outputs = {g.nodes[last].outputs[0]};
      fused.attrs.set("approximate", std::string("none"));
      ctx.applied(before_opset20 ? "gelu_before_opset20" : "gelu",
                  fmt::format("Erf '{}' .. Mul '{}' ({} nodes)", erf.name, g.nodes[last].name, matched.size() + 1));
      for (int k : matched) removed[k] = true;
      g.nodes[last] = std::move(fused);
      count_uses();
    }
  }

};

}  // namespace

void fuse_layer_norm(RuleContext& ctx) {
  NormFusions p(ctx);
  p.layer_norm(false);
  p.compact();
}

void fuse_layer_norm_before_opset17(RuleContext& ctx) {
  NormFusions p(ctx);
  p.layer_norm(true);
  p.compact();
}

void fuse_gelu(RuleContext& ctx) {
  NormFusions p(ctx);
  p.gelu(false);
  p.compact();
}

void fuse_gelu_before_opset20(RuleContext& ctx) {
  NormFusions p(ctx);
  p.gelu(true);
  p.compact();
}

}  // namespace onnxmini
