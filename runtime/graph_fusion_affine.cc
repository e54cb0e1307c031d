// Affine and HardSwish fusions around convolutions (see graph_fusion_affine.h). Matching walks
// forward through sole readers; fused-away nodes are marked and removed at the end, so the
// remaining nodes keep their order.
#include "runtime/graph_fusion_affine.h"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/fused_attributes.h"
#include "runtime/graph_norm_pass.h"

namespace onnxmini {
namespace {

struct AffinePass : NormPass {
  explicit AffinePass(RuleContext& c) : NormPass(c) {}

  static std::string label(const GraphNode& n) { return fmt::format("{} '{}'", n.op_type, n.name); }

  // A Conv with a constant float32 filter of rank >= 3, a constant (or no) bias of one value
  // per output channel, no residual input and nothing fused into it yet (an activation or an
  // input affine would sit between the product and the folded scale).
  bool plain_conv(const GraphNode& n) const {
    if (!n.domain.empty() || n.op_type != "Conv" || n.outputs.size() != 1 || n.outputs[0] < 0 ||
        n.inputs.size() < 2 || n.inputs.size() > 3 || n.inputs[0] < 0)
      return false;
    const Tensor* w = constant_f32(n.inputs[1]);
    if (!w || w->rank() < 3 || w->dim(0) < 1) return false;
    if (n.inputs.size() == 3 && n.inputs[2] >= 0) {
      const Tensor* b = constant_f32(n.inputs[2]);
      if (!b || b->numel() != w->dim(0)) return false;
    }
    for (const char* a : {fused_attr::kActivation, fused_attr::kInputScale, fused_attr::kInputShift,
                          fused_attr::kResidual, fused_attr::kAddends})
      if (n.attrs.has(a)) return false;
    return true;
  }

  // Conv -> Mul(c) / Add(d) / Sub(d) ...: Y * c = (W * c) x + B * c, Y + d = W x + (B + d).
  void conv_scale_shift() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (removed[i] || !plain_conv(g.nodes[i])) continue;
      GraphNode& conv = g.nodes[i];
      const Tensor& w = *constant_f32(conv.inputs[1]);
      const int64_t M = w.dim(0), per = w.numel() / M;
      const size_t rank = w.rank();
      std::vector<double> scale(M, 1.0), shift(M, 0.0);
      if (conv.inputs.size() == 3 && conv.inputs[2] >= 0)
        for (int64_t m = 0; m < M; ++m) shift[m] = constant_f32(conv.inputs[2])->data<float>()[m];
      std::vector<int> matched;
      int y = conv.outputs[0];
      std::vector<float> c;
      for (int j = sole_reader(y); j >= 0; j = sole_reader(y)) {
        const GraphNode& n = g.nodes[j];
        const bool mul = plain(n, "Mul", 2), add = plain(n, "Add", 2), sub = plain(n, "Sub", 2);
        if (!(mul || add || (sub && n.inputs[0] == y)) || n.opset < 7) break;
        const int other = other_input(n, y);
        if (other == y || !per_channel_values(other, rank, M, c)) break;
        for (int64_t m = 0; m < M; ++m) {
          if (mul) scale[m] *= c[m], shift[m] *= c[m];
          else shift[m] += sub ? -static_cast<double>(c[m]) : c[m];
        }
        matched.push_back(j);
        y = n.outputs[0];
      }
      if (matched.empty()) continue;
      Tensor w2 = w.clone(), b2(DType::Float32, {M});
      float* wd = w2.mutable_data<float>();
      for (int64_t m = 0; m < M; ++m) {
        for (int64_t k = 0; k < per; ++k) wd[m * per + k] = static_cast<float>(wd[m * per + k] * scale[m]);
        b2.mutable_data<float>()[m] = static_cast<float>(shift[m]);
      }
      std::string nodes = label(conv);
      for (int j : matched) nodes += " + " + label(g.nodes[j]), removed[j] = true;
      conv.inputs.resize(3);
      conv.inputs[1] = add_constant(conv.name + "_scaled_W", std::move(w2));
      conv.inputs[2] = add_constant(conv.name + "_shifted_B", std::move(b2));
      conv.outputs[0] = y;
      ctx.applied("conv_scale_shift", nodes + " (folded into weights)");
      count_uses();
    }
  }

  // True when the Conv reads no padding: auto_pad NOTSET / VALID and every pad 0 (a padded
  // Conv would see zeros where the unfused graph's shifted input has d).
  static bool unpadded(const GraphNode& conv) {
    const std::string auto_pad = conv.attrs.get_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
    if (conv.attrs.has("pads"))
      for (int64_t p : conv.attrs.get_ints("pads"))
        if (p != 0) return false;
    return true;
  }

  // Mul(x, s) / Add(x, d) / Sub(x, d) ... (scalars) -> Conv without padding:
  // W (s x + d) + B = (s W) x + (B + d * sum W[m]).
  void scale_shift_conv() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (removed[i] || g.nodes[i].outputs.size() != 1) continue;
      double s = 1.0, d = 0.0;
      std::vector<int> matched;
      int x = -1, y = -1;
      for (int j = static_cast<int>(i); j >= 0; j = sole_reader(y)) {
        const GraphNode& n = g.nodes[j];
        const bool mul = plain(n, "Mul", 2), add = plain(n, "Add", 2), sub = plain(n, "Sub", 2);
        if (!(mul || add || sub) || n.opset < 7) break;
        // The chain's value: the first node's non-scalar operand (Sub's minuend), then y.
        int in = y;
        if (matched.empty()) in = scalar_operand(n, 1) ? n.inputs[0] : !sub && scalar_operand(n, 0) ? n.inputs[1] : -1;
        float c = 0;
        if (in < 0 || (sub && n.inputs[0] != in) || n.inputs[0] == n.inputs[1] || !scalar_f32(other_input(n, in), c))
          break;
        if (matched.empty()) x = in;
        if (mul) s *= c, d *= c;
        else d += sub ? -static_cast<double>(c) : c;
        matched.push_back(j);
        y = n.outputs[0];
      }
      if (matched.empty() || x < 0 || !declared_float32(x)) continue;
      const int k = sole_reader(y);
      if (k < 0 || !plain_conv(g.nodes[k]) || g.nodes[k].inputs[0] != y || !unpadded(g.nodes[k])) continue;
      GraphNode& conv = g.nodes[k];
      const Tensor& w = *constant_f32(conv.inputs[1]);
      const int64_t M = w.dim(0), per = w.numel() / M;
      const Tensor* b = conv.inputs.size() == 3 && conv.inputs[2] >= 0 ? constant_f32(conv.inputs[2]) : nullptr;
      Tensor w2 = w.clone(), b2(DType::Float32, {M});
      float* wd = w2.mutable_data<float>();
      for (int64_t m = 0; m < M; ++m) {
        double sum = 0;
        for (int64_t q = 0; q < per; ++q) sum += w.data<float>()[m * per + q], wd[m * per + q] = static_cast<float>(wd[m * per + q] * s);
        b2.mutable_data<float>()[m] = static_cast<float>((b ? b->data<float>()[m] : 0.0) + d * sum);
      }
      std::string nodes;
      for (int j : matched) nodes += label(g.nodes[j]) + " + ", removed[j] = true;
      conv.inputs.resize(3);
      conv.inputs[0] = x;
      conv.inputs[1] = add_constant(conv.name + "_input_scaled_W", std::move(w2));
      conv.inputs[2] = add_constant(conv.name + "_input_shifted_B", std::move(b2));
      ctx.applied("scale_shift_conv", nodes + label(conv) + " (folded into weights)");
      count_uses();
    }
  }

  // NchwcConv -> Mul(c) / Add(d) / Sub(y, d) [-> ..] on the blocked output, each constant of
  // one element or one value per padded channel ([1, Cb, 1, 1, 16], as nchwc_layout rewrites
  // per-channel constants) -> NchwcConv applying y * S + D after its activation.
  void nchwc_output_affine() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      GraphNode& conv = g.nodes[i];
      if (removed[i] || conv.domain != "ai.onnxmini" || conv.op_type != "NchwcConv" || conv.outputs.size() != 1 ||
          conv.outputs[0] < 0 || conv.attrs.has(fused_attr::kOutputScale) || conv.attrs.has(fused_attr::kOutputShift))
        continue;
      const int64_t padded = (conv.attrs.get_int("channels", 0) + 15) / 16 * 16;
      if (padded <= 0) continue;
      std::vector<double> scale(1, 1.0), shift(1, 0.0);  // one value until a per-channel constant
      auto widen = [&](std::vector<double>& v) {
        if (v.size() == 1) v.assign(static_cast<size_t>(padded), v[0]);
      };
      std::vector<int> matched;
      int y = conv.outputs[0];
      for (int j = sole_reader(y); j >= 0; j = sole_reader(y)) {
        const GraphNode& n = g.nodes[j];
        const bool mul = plain(n, "Mul", 2), add = plain(n, "Add", 2), sub = plain(n, "Sub", 2);
        if (!(mul || add || (sub && n.inputs[0] == y)) || n.opset < 7) break;
        const int other = other_input(n, y);
        const Tensor* c = other == y ? nullptr : constant_f32(other);
        const bool blocked_channels = c && c->rank() == 5 && c->numel() == padded && c->dim(0) == 1 &&
                                      c->dim(2) == 1 && c->dim(3) == 1 && c->dim(4) == 16;
        if (!c || (c->numel() != 1 && !blocked_channels) || c->rank() > 5) break;
        if (blocked_channels) widen(scale), widen(shift);
        for (size_t k = 0; k < scale.size(); ++k) {
          const double v = c->data<float>()[c->numel() == 1 ? 0 : k];
          if (mul) scale[k] *= v, shift[k] *= v;
          else shift[k] += sub ? -v : v;
        }
        matched.push_back(j);
        y = n.outputs[0];
      }
      if (matched.empty()) continue;
      std::string nodes = fmt::format("{} '{}'", conv.op_type, conv.name);
      for (int j : matched) nodes += " + " + label(g.nodes[j]), removed[j] = true;
      conv.attrs.set(fused_attr::kOutputScale, std::vector<float>(scale.begin(), scale.end()));
      conv.attrs.set(fused_attr::kOutputShift, std::vector<float>(shift.begin(), shift.end()));
      conv.outputs[0] = y;
      ctx.applied("nchwc_output_affine", nodes + " (after the activation)");
      count_uses();
    }
  }

  // Input `k` of a two-input node is a one-element float32 constant.
  bool scalar_operand(const GraphNode& n, size_t k) const {
    float v = 0;
    return k < n.inputs.size() && scalar_f32(n.inputs[k], v);
  }

  // Clip's bounds as constants (attributes before opset 11, inputs from 11; absent: none).
  bool clip_bounds(const GraphNode& n, float& lo, float& hi) const {
    lo = -FLT_MAX, hi = FLT_MAX;
    if (!n.domain.empty() || n.op_type != "Clip" || n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] < 0)
      return false;
    if (n.opset < 11) {
      lo = n.attrs.get_float("min", lo), hi = n.attrs.get_float("max", hi);
      return true;
    }
    for (size_t k = 1; k < n.inputs.size() && k < 3; ++k)
      if (n.inputs[k] >= 0 && !scalar_f32(n.inputs[k], k == 1 ? lo : hi)) return false;
    return true;
  }

  // x * Clip(x + 3, 0, 6) / 6 as (x * clip) / 6, (x * clip) * (1/6), x * (clip / 6) or
  // x * (clip * (1/6)), every Add / Mul in either operand order.
  void hard_swish(bool before_opset14) {
    for (size_t ic = 0; ic < g.nodes.size(); ++ic) {
      const GraphNode& clip = g.nodes[ic];
      float lo = 0, hi = 0;
      if (removed[ic] || !clip_bounds(clip, lo, hi) || lo != 0.0f || hi != 6.0f ||
          (clip.opset < 14) != before_opset14)
        continue;
      // x + 3, read by the Clip only
      const int i_add = producer(clip.inputs[0]);
      if (i_add < 0 || !plain(g.nodes[i_add], "Add", 2) || sole_reader(clip.inputs[0]) != static_cast<int>(ic)) continue;
      const GraphNode& add = g.nodes[i_add];
      const int x = constant_near(add.inputs[1], 3.0) ? add.inputs[0] : constant_near(add.inputs[0], 3.0) ? add.inputs[1] : -1;
      if (x < 0 || !declared_float32(x)) continue;
      // The two tails: the product with x first, or the division by 6 first.
      const int i1 = sole_reader(clip.outputs[0]);
      if (i1 < 0) continue;
      const GraphNode& n1 = g.nodes[i1];
      int i2 = -1;
      if (plain(n1, "Mul", 2) && other_input(n1, clip.outputs[0]) == x) {
        i2 = sole_reader(n1.outputs[0]);
        if (i2 < 0 || !divides_by_six(g.nodes[i2], n1.outputs[0])) continue;
      } else if (divides_by_six(n1, clip.outputs[0])) {
        i2 = sole_reader(n1.outputs[0]);
        if (i2 < 0 || !plain(g.nodes[i2], "Mul", 2) || other_input(g.nodes[i2], n1.outputs[0]) != x) continue;
      } else {
        continue;
      }
      GraphNode fused;
      fused.name = g.nodes[i2].name;
      fused.op_type = "HardSwish";
      fused.opset = before_opset14 ? 14 : clip.opset;
      fused.index = g.nodes[i2].index;
      fused.inputs = {x};
      fused.outputs = {g.nodes[i2].outputs[0]};
      ctx.applied(before_opset14 ? "hard_swish_before_opset14" : "hard_swish",
                  fmt::format("Add '{}' + Clip '{}' + {} + {} (4 nodes)", add.name, clip.name, label(n1), label(g.nodes[i2])));
      for (int k : {i_add, static_cast<int>(ic), i1}) removed[k] = true;
      g.nodes[i2] = std::move(fused);
      count_uses();
    }
  }

  // Div(v, 6) or Mul(v, 1/6) (either order), 6 and 1/6 within 2 float32 ulps.
  bool divides_by_six(const GraphNode& n, int v) const {
    if (plain(n, "Div", 2)) return n.inputs[0] == v && constant_near(n.inputs[1], 6.0);
    return plain(n, "Mul", 2) && constant_near(other_input(n, v), 1.0 / 6.0);
  }
};

}  // namespace

void fuse_conv_scale_shift(RuleContext& ctx) {
  AffinePass p(ctx);
  p.conv_scale_shift();
  p.compact();
}

void fuse_scale_shift_conv(RuleContext& ctx) {
  AffinePass p(ctx);
  p.scale_shift_conv();
  p.compact();
}

void fuse_nchwc_output_affine(RuleContext& ctx) {
  AffinePass p(ctx);
  p.nchwc_output_affine();
  p.compact();
}

void fuse_hard_swish(RuleContext& ctx) {
  AffinePass p(ctx);
  p.hard_swish(false);
  p.compact();
}

void fuse_hard_swish_before_opset14(RuleContext& ctx) {
  AffinePass p(ctx);
  p.hard_swish(true);
  p.compact();
}

}  // namespace onnxmini
