// One-hot embedding fusion (see graph_fusion_one_hot.h).
#include "runtime/graph_fusion_one_hot.h"

#include <cmath>

#include <fmt/format.h>

#include "kernels/fused_attributes.h"
#include "runtime/graph_pass.h"

namespace onnxmini {
namespace {

constexpr int64_t kCastToFloat = 1;  // TensorProto.FLOAT

struct OneHotMatMulPass : FusionPass {
  explicit OneHotMatMulPass(RuleContext& c) : FusionPass(c) {}
  ~OneHotMatMulPass() { compact(); }

  static std::string label(const GraphNode& n) { return fmt::format("{} '{}'", n.op_type, n.name); }

  // An int32 / int64 constant of shape [N] or [1, .., 1, N].
  const Tensor* one_hot_values(int id) const {
    const Tensor* t = constant(id);
    if (!t || (t->dtype() != DType::Int32 && t->dtype() != DType::Int64) || t->rank() == 0) return nullptr;
    return t->numel() == t->shape().back() && t->numel() > 0 ? t : nullptr;
  }

  static bool all_finite(const Tensor& w) {
    const float* p = w.data<float>();
    for (int64_t i = 0; i < w.numel(); ++i)
      if (!std::isfinite(p[i])) return false;
    return true;
  }

  void run() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const GraphNode& mm = g.nodes[i];
      if (removed[i] || !mm.domain.empty() || mm.op_type != "MatMul" || mm.outputs.size() != 1 ||
          mm.inputs.size() < 2 || mm.inputs.size() > 3 ||
          mm.attrs.get_string(fused_attr::kActivation, "") == fused_activation_name(FusedActivationKind::PRelu))
        continue;
      const Tensor* w = constant_f32(mm.inputs[1]);
      if (!w || w->rank() != 2 || !all_finite(*w)) continue;
      const int c = producer(mm.inputs[0]);
      if (c < 0 || sole_consumer(mm.inputs[0]) != static_cast<int>(i)) continue;
      const GraphNode& cast = g.nodes[c];
      if (!cast.domain.empty() || cast.op_type != "Cast" || cast.inputs.size() != 1 ||
          cast.attrs.get_int("to", 0) != kCastToFloat)
        continue;
      const int e = producer(cast.inputs[0]);
      if (e < 0 || sole_consumer(cast.inputs[0]) != c) continue;
      const GraphNode& eq = g.nodes[e];
      if (!eq.domain.empty() || eq.op_type != "Equal" || eq.inputs.size() != 2 || eq.inputs[0] < 0 || eq.inputs[1] < 0)
        continue;
      // V on either side; the other operand is X (not a constant: that Equal would fold).
      int x = eq.inputs[0], v = eq.inputs[1];
      if (!one_hot_values(v)) std::swap(x, v);
      const Tensor* vt = one_hot_values(v);
      if (!vt || constant(x) || vt->numel() != w->dim(0)) continue;

      // X = Expand(X0, S) read by this Equal only (jax2tf's BroadcastTo of the values to the
      // one-hot shape): the fused node broadcasts X0 itself and keeps X0's last dimension 1.
      int expand = producer(x), shape = -1;
      if (expand >= 0) {
        const GraphNode& ex = g.nodes[expand];
        if (ex.domain.empty() && ex.op_type == "Expand" && ex.inputs.size() == 2 && ex.inputs[0] >= 0 &&
            ex.inputs[1] >= 0 && sole_consumer(x) == e && !constant(ex.inputs[0])) {
          x = ex.inputs[0], shape = ex.inputs[1];
        } else {
          expand = -1;
        }
      }

      GraphNode fused = onnxmini_node(mm, "OneHotMatMul");
      fused.inputs = {x, v, mm.inputs[1], mm.inputs.size() == 3 ? mm.inputs[2] : -1};
      if (shape >= 0) fused.inputs.push_back(shape);
      fused.outputs = mm.outputs;
      fused.attrs = mm.attrs;  // the fused activation (gemm_activation's), if any
      const std::string first = expand >= 0 ? label(g.nodes[expand]) + " + " : std::string();
      ctx.applied("one_hot_matmul", first + label(eq) + " + " + label(cast) + " + " + label(mm) + " (one OneHotMatMul)");
      removed[e] = removed[c] = true;
      if (expand >= 0) removed[expand] = true;
      g.nodes[i] = std::move(fused);
      count_uses();
    }
  }
};

}  // namespace

void fuse_one_hot_matmul(RuleContext& ctx) { OneHotMatMulPass(ctx).run(); }

}  // namespace onnxmini
