// Conv + Add residual fusion (see graph_fusion_residual.h).
#include "runtime/graph_fusion_residual.h"

#include <fmt/format.h>

#include <optional>
#include <unordered_map>

#include "kernels/fused_attributes.h"
#include "runtime/graph_pass.h"

namespace onnxmini {
namespace {

struct ResidualPass : FusionPass {
  explicit ResidualPass(RuleContext& c) : FusionPass(c) {}
  ~ResidualPass() { compact(); }

  static std::string label(const GraphNode& n) { return fmt::format("{} '{}'", n.op_type, n.name); }

  // Shape class of a value: its shape is root's shape with axis 1 replaced by `channels`
  // (-1: root's own channel count) and, when spatial_one, every spatial axis 1 (a global
  // pool's output, as in a squeeze-and-excitation branch).
  struct ShapeClass {
    int root = -1;
    int64_t channels = -1;
    bool spatial_one = false;
    int64_t rank = -1;  // known from a Conv's filter on the way, else -1
  };

  // A Conv node with a float32 constant filter, no fusion yet, one output.
  bool plain_conv(const GraphNode& n) const {
    if (!n.domain.empty() || n.op_type != "Conv" || n.outputs.size() != 1 || n.inputs.size() < 2 || n.inputs.size() > 3)
      return false;
    const Tensor* w = constant_f32(n.inputs[1]);
    return w && w->rank() >= 3 && n.inputs[0] >= 0;
  }

  // Whether Conv `n` keeps the spatial size of its input on every axis.
  bool keeps_spatial_size(const GraphNode& n) const {
    const Tensor& w = *constant_f32(n.inputs[1]);
    const size_t rank = w.rank() - 2;
    auto ints = [&](const char* name, int64_t fill, size_t count) {
      std::vector<int64_t> v = n.attrs.has(name) ? n.attrs.get_ints(name) : std::vector<int64_t>(count, fill);
      return v;
    };
    const std::vector<int64_t> strides = ints("strides", 1, rank), dil = ints("dilations", 1, rank);
    const std::vector<int64_t> pads = ints("pads", 0, 2 * rank);
    const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
    if (strides.size() != rank || dil.size() != rank || pads.size() != 2 * rank) return false;
    if (n.attrs.has("kernel_shape")) {
      const std::vector<int64_t> k = n.attrs.get_ints("kernel_shape");
      for (size_t d = 0; d < rank; ++d)
        if (k.size() != rank || k[d] != w.dim(d + 2)) return false;
    }
    for (size_t d = 0; d < rank; ++d) {
      if (strides[d] != 1) return false;
      const int64_t span = dil[d] * (w.dim(d + 2) - 1);
      if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") continue;
      if (auto_pad == "VALID" ? span != 0 : pads[d] + pads[d + rank] != span) return false;
    }
    return true;
  }

  // A 1x1 (x 1 ..) kernel without padding.
  bool pointwise_unpadded(const GraphNode& n) const {
    const Tensor& w = *constant_f32(n.inputs[1]);
    for (size_t d = 2; d < w.rank(); ++d)
      if (w.dim(d) != 1) return false;
    const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
    if (n.attrs.has("pads"))
      for (int64_t p : n.attrs.get_ints("pads"))
        if (p != 0) return false;
    return true;
  }

  static bool shape_preserving_unary(const GraphNode& n) {
    static const char* const kOps[] = {"Relu",        "Sigmoid",   "Tanh",   "Clip",     "LeakyRelu", "HardSigmoid",
                                       "HardSwish",   "Elu",       "Selu",   "Softplus", "Identity",  "Neg",
                                       "Abs",         "Exp",       "Erf",    "Mish",     "Gelu",      "Sqrt",
                                       "BatchNormalization", "PRelu"};  // PRelu's slope never expands X
    if (!n.domain.empty() || n.inputs.empty() || n.outputs.empty()) return false;
    for (const char* op : kOps)
      if (n.op_type == op) return true;
    return false;
  }

  // ShapeClass of value `id`, walking back through shape-keeping producers (memoized: a
  // residual network's Adds would otherwise be walked once per path; depth-limited).
  ShapeClass shape_class(int id, int depth = 0) const {
    if (auto m = memo_.find(id); m != memo_.end()) return m->second;
    const ShapeClass c = walk_shape_class(id, depth);
    memo_[id] = c;
    return c;
  }
  ShapeClass walk_shape_class(int id, int depth) const {
    const int p = depth < 256 ? producer(id) : -1;
    if (p < 0) return {id, -1};
    const GraphNode& n = g.nodes[p];
    if (n.outputs[0] != id) return {id, -1};
    const Tensor* w = n.domain.empty() && n.op_type == "Conv" && n.inputs.size() >= 2 ? constant_f32(n.inputs[1]) : nullptr;
    if (w && w->rank() >= 3 && n.inputs[0] >= 0) {  // any Conv, fused ones too (the fusions keep Y's shape)
      const ShapeClass in = shape_class(n.inputs[0], depth + 1);
      // On a 1 x 1 x .. input, a Conv keeping the size or a 1x1 unpadded one (any stride) gives 1 x 1 x ..
      if (keeps_spatial_size(n) || (in.spatial_one && pointwise_unpadded(n)))
        return {in.root, w->dim(0), in.spatial_one, static_cast<int64_t>(w->rank())};
      return {id, -1, false, static_cast<int64_t>(w->rank())};
    }
    if (n.domain.empty() && (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool")) {
      const ShapeClass in = shape_class(n.inputs[0], depth + 1);
      return {in.root, in.channels, true, in.rank};
    }
    if (shape_preserving_unary(n)) return shape_class(n.inputs[0], depth + 1);
    const bool binary = n.domain.empty() && n.inputs.size() == 2 && n.inputs[0] >= 0 && n.inputs[1] >= 0 &&
                        (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div");
    if (binary) {
      // A one-element constant of rank <= 1 never changes the other operand's shape (rank >= 1).
      auto scalar = [&](int v) {
        const Tensor* t = constant(v);
        return t && t->numel() == 1 && t->rank() <= 1;
      };
      if (scalar(n.inputs[1])) return shape_class(n.inputs[0], depth + 1);
      if (scalar(n.inputs[0])) return shape_class(n.inputs[1], depth + 1);
      const ShapeClass a = shape_class(n.inputs[0], depth + 1), b = shape_class(n.inputs[1], depth + 1);
      if (per_channel_constant(n.inputs[1], a)) return a;
      if (per_channel_constant(n.inputs[0], b)) return b;
      if (same(a, b)) return a;
      // x [N, C, H, W] (op) s [N, C, 1, 1] of the same root and channels: x's shape.
      if (a.spatial_one != b.spatial_one) {
        ShapeClass a1 = a, b1 = b;
        a1.spatial_one = b1.spatial_one = false;
        if (same(a1, b1)) return a.spatial_one ? b : a;
      }
    }
    return {id, -1};
  }

  // The channel count of a root value when a plain Conv reads it as X (C = W's dim 1 x group).
  std::optional<int64_t> root_channels(int root) const {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const GraphNode& n = g.nodes[i];
      if (removed[i] || !n.domain.empty() || n.op_type != "Conv" || n.inputs.size() < 2 || n.inputs[0] != root)
        continue;
      if (const Tensor* w = constant_f32(n.inputs[1]); w && w->rank() >= 3)
        return w->dim(1) * n.attrs.get_int("group", 1);
    }
    return std::nullopt;
  }

  // A constant that broadcasts onto a value of class `c` without changing its shape: at most
  // c's rank, every dimension 1 except the one facing the channel axis, which may be c's
  // channel count (a [1, C, 1, 1] bias or scale).
  bool per_channel_constant(int id, const ShapeClass& c) const {
    const Tensor* t = constant(id);
    if (!t || c.rank < 2 || static_cast<int64_t>(t->rank()) > c.rank) return false;
    const int64_t channels = c.channels >= 0 ? c.channels : root_channels(c.root).value_or(-1);
    const int64_t offset = c.rank - static_cast<int64_t>(t->rank());
    for (size_t d = 0; d < t->rank(); ++d) {
      const bool channel_axis = offset + static_cast<int64_t>(d) == 1;
      if (t->dim(d) != 1 && !(channel_axis && t->dim(d) == channels)) return false;
    }
    return true;
  }

  bool same(const ShapeClass& a, const ShapeClass& b) const {
    if (a.root != b.root || a.spatial_one != b.spatial_one) return false;
    if (a.channels == b.channels) return true;
    const auto c = root_channels(a.root);  // one side kept the root's channels
    return c && (a.channels == -1 ? *c == b.channels : b.channels == -1 && *c == a.channels);
  }

  // The fixed declared shape of `id`, when it has one.
  const ValueInfo* fixed_shape(int id) const {
    const ValueInfo* info = nullptr;
    for (size_t k = 0; k < g.input_ids.size(); ++k)
      if (g.input_ids[k] == id) info = &g.inputs[k];
    if (auto v = g.value_infos.find(id); !info && v != g.value_infos.end()) info = &v->second;
    if (!info || !info->has_shape) return nullptr;
    for (const Dim& d : info->shape)
      if (d.value < 0) return nullptr;
    return info;
  }

  bool same_shape(int a, int b) const {
    const ValueInfo *sa = fixed_shape(a), *sb = fixed_shape(b);
    if (sa && sb) {
      if (sa->shape.size() != sb->shape.size()) return false;
      for (size_t d = 0; d < sa->shape.size(); ++d)
        if (sa->shape[d].value != sb->shape[d].value) return false;
      return true;
    }
    if (constant(b)) return false;  // a constant: only a declared fixed shape of Y says it matches
    return same(shape_class(a), shape_class(b));
  }

  mutable std::unordered_map<int, ShapeClass> memo_;

  // Conv -> Add(bias-like constant): the constant folds into B (plain ONNX); true when done.
  bool fold_bias(size_t i, int j, int c_id) {
    GraphNode& conv = g.nodes[i];
    const Tensor& w = *constant_f32(conv.inputs[1]);
    const int64_t M = w.dim(0);
    std::vector<float> c;  // one value per output channel, without changing the output's shape
    if (!per_channel_values(c_id, w.rank(), M, c)) return false;
    const bool has_b = conv.inputs.size() > 2 && conv.inputs[2] >= 0;
    const Tensor* b = has_b ? constant_f32(conv.inputs[2]) : nullptr;
    if (has_b && (!b || b->numel() != M)) return false;
    Tensor folded(DType::Float32, {M});
    float* f = folded.mutable_data<float>();
    for (int64_t m = 0; m < M; ++m) f[m] = (b ? b->data<float>()[m] : 0.0f) + c[m];
    ctx.applied("conv_add", label(conv) + " + " + label(g.nodes[j]) + " (constant folded into the bias)");
    conv.inputs.resize(3, -1);
    conv.inputs[2] = add_constant(conv.name + "_add_folded_B", std::move(folded));
    conv.outputs[0] = g.nodes[j].outputs[0];
    removed[j] = true;
    count_uses();
    return true;
  }

  static bool plain_add(const GraphNode& n) {
    return n.domain.empty() && n.op_type == "Add" && n.opset >= 7 && n.inputs.size() == 2 && n.outputs.size() == 1 &&
           n.inputs[0] >= 0 && n.inputs[1] >= 0;
  }

  void conv_add() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const GraphNode& conv = g.nodes[i];
      if (removed[i] || !plain_conv(conv)) continue;
      bool fused_already = false;  // any private attribute: an activation, an input affine, a residual
      for (const auto& [name, item] : conv.attrs.items()) fused_already = fused_already || name.rfind('_', 0) == 0;
      if (fused_already) continue;
      const int y = conv.outputs[0];
      const int j = sole_consumer(y);
      if (j < 0 || !plain_add(g.nodes[j])) continue;
      const GraphNode& add = g.nodes[j];
      const int z = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
      if (z != y && fold_bias(i, j, z)) continue;
      if (z == y || !same_shape(y, z)) continue;
      ctx.applied("conv_add", label(conv) + " + " + label(add) + " (residual in the epilogue)");
      GraphNode fused = conv;
      removed[i] = true;
      fused.inputs.resize(3, -1);  // B stays input 2 (maybe absent)
      fused.inputs.push_back(z);
      fused.attrs.set(fused_attr::kResidual, int64_t{1});
      fused.outputs[0] = add.outputs[0];
      g.nodes[j] = std::move(fused);  // at the Add's place: Z exists there
      count_uses();
    }
  }
};

}  // namespace

void fuse_conv_add(RuleContext& ctx) { ResidualPass(ctx).conv_add(); }

}  // namespace onnxmini
