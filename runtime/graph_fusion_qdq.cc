// QDQ node units -> integer ops (graph_fusion_qdq.h).
//
// A node unit as onnxruntime's quantizer writes it (quantize_static, QDQ format):
//   x_q -> DequantizeLinear(xs, xz) -+
//   w_q -> DequantizeLinear(ws, wz) -+-> Conv / MatMul -> QuantizeLinear(ys, yz) -> y_q
//   b_q -> DequantizeLinear(xs*ws)  -+   (Conv bias, optional)
// becomes QLinearConv(x_q, xs, xz, w_q, ws, wz, ys, yz, b_q), QLinearMatMul(x_q, xs, xz,
// w_q, ws, wz, ys, yz) or, for a Gemm with alpha = beta = 1, onnxruntime's com.microsoft
// QGemm(x_q, xs, xz, w_q, ws, wz, b_q, ys, yz) (transA / transB kept). The float graph computes
//   Q(sum (xs (x - xz)) (ws (w - wz)) + bs b) = Q(xs ws [sum (x - xz)(w - wz) + b])
// (bs = xs * ws), which the integer op computes from the int32 sum with the multiplier
// xs * ws / ys: the same value up to float32 rounding of the float path (a requantized
// element may differ by 1 where the float result sits within rounding of a .5 boundary;
// onnxruntime's own QDQ fusion has the same property).
// Exact conditions, else the unit is left alone:
//   - xs, xz, ys, yz, ws, wz, b, bs constants (not overridable), scales float32;
//   - xs, xz, ys, yz scalars; ws / wz a scalar or per output channel (Conv: axis 0 over
//     W's dim 0; MatMul: axis 1 / -1 over a 2-D B's columns; Gemm: the N axis of B),
//     no block quantization;
//   - x, w, y of type uint8 / int8 (zero points given), b int32 with zero point 0 and
//     scale equal to xs * ws (relative 1e-6);
//   - the Conv / MatMul output feeds only the QuantizeLinear; the DequantizeLinear nodes are
//     removed when the fused node was their only reader.
#include "runtime/graph_fusion_qdq.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/graph_pass.h"

namespace onnxmini {
namespace {

struct Dq {
  int node = -1;
  int q = -1, scale = -1, zero = -1;  // value ids (zero may be -1)
  const Tensor* s = nullptr;
  const Tensor* z = nullptr;
  DType qtype = DType::Undefined;
  int64_t axis = 1;
};

struct QdqPass : FusionPass {
  explicit QdqPass(RuleContext& c) : FusionPass(c) {}


  DType dtype_of(int id) const {
    if (const Tensor* t = constant(id)) return t->dtype();
    auto it = g.known_dtypes.find(id);
    return it == g.known_dtypes.end() ? DType::Undefined : it->second;
  }

  static bool is(const GraphNode& n, const char* op) { return n.domain.empty() && n.op_type == op; }
  static bool int8_type(DType t) { return t == DType::UInt8 || t == DType::Int8; }

  // The DequantizeLinear producing `id`, with constant float scale and constant zero point.
  bool read_dq(int id, Dq& d) const {
    d.node = producer(id);
    if (d.node < 0) return false;
    const GraphNode& n = g.nodes[d.node];
    if (!is(n, "DequantizeLinear") || n.inputs.size() < 2 || n.outputs.size() != 1 || n.inputs[0] < 0) return false;
    if (n.attrs.get_int("block_size", 0) != 0) return false;
    d.q = n.inputs[0], d.scale = n.inputs[1], d.zero = n.inputs.size() > 2 ? n.inputs[2] : -1;
    d.s = constant(d.scale);
    if (!d.s || d.s->dtype() != DType::Float32) return false;
    if (d.zero >= 0) {
      d.z = constant(d.zero);
      if (!d.z || d.z->numel() != d.s->numel()) return false;
    }
    d.qtype = dtype_of(d.q);
    if (d.z && d.qtype == DType::Undefined) d.qtype = d.z->dtype();
    if (d.z && d.z->dtype() != d.qtype) return false;
    d.axis = n.attrs.get_int("axis", 1);
    return true;
  }


  // The zero point input of a unit member: its own, or a new zero of its type.
  int zero_of(const Dq& d, const std::string& base) {
    if (d.zero >= 0) return d.zero;
    Tensor z(d.qtype, d.s->shape());
    std::memset(z.raw_mut(), 0, z.nbytes());
    return add_constant(base, std::move(z));
  }

  static bool per_tensor(const Dq& d) { return d.s->numel() == 1; }

  void run() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (removed[i]) continue;
      const GraphNode& op = g.nodes[i];
      const bool conv = is(op, "Conv"), matmul = is(op, "MatMul"), gemm = is(op, "Gemm");
      if ((!conv && !matmul && !gemm) || op.opset < 10 || op.outputs.size() != 1 || op.inputs.size() < 2) continue;
      if (matmul && op.inputs.size() != 2) continue;
      if (conv && op.inputs.size() > 3) continue;  // a fused residual Z (runtime/graph_fusion_residual.h)
      // Gemm: C must be the int32 bias of the sums, so alpha = beta = 1.
      const bool trans_b = gemm && op.attrs.get_int("transB", 0) != 0;
      if (gemm && (op.attrs.get_float("alpha", 1.0f) != 1.0f || op.attrs.get_float("beta", 1.0f) != 1.0f)) continue;
      Dq x, w, b;
      if (!read_dq(op.inputs[0], x) || !read_dq(op.inputs[1], w)) continue;
      if (!per_tensor(x) || !int8_type(x.qtype) || !int8_type(w.qtype)) continue;
      const Tensor* wq = constant(w.q);
      if (!wq || wq->dtype() != w.qtype) continue;
      // Weight scales: per tensor, or per output channel along the right axis.
      if (!per_tensor(w)) {
        if (w.s->rank() != 1) continue;
        if (conv && !(wq->rank() >= 3 && (w.axis == 0 || w.axis == -static_cast<int64_t>(wq->rank())) &&
                      w.s->dim(0) == wq->dim(0)))
          continue;
        if (matmul && !(wq->rank() == 2 && (w.axis == 1 || w.axis == -1) && w.s->dim(0) == wq->dim(1))) continue;
        if (gemm && !(wq->rank() == 2 && (trans_b ? (w.axis == 0 || w.axis == -2) : (w.axis == 1 || w.axis == -1)) &&
                      w.s->dim(0) == wq->dim(trans_b ? 0 : 1)))
          continue;
      }
      const bool has_bias = (conv || gemm) && op.inputs.size() > 2 && op.inputs[2] >= 0;
      if (has_bias) {
        if (!read_dq(op.inputs[2], b) || b.qtype != DType::Int32 || !constant(b.q)) continue;
        if (!bias_scale_matches(x, w, b)) continue;
      }
      // y: the op's output goes only to a QuantizeLinear with constant scalar scale / zero point.
      const int qi = sole_consumer(op.outputs[0]);
      if (qi < 0) continue;
      const GraphNode& q = g.nodes[qi];
      if (!is(q, "QuantizeLinear") || q.inputs.size() < 3 || q.inputs[0] != op.outputs[0] || q.outputs.size() != 1)
        continue;
      const Tensor *ys = constant(q.inputs[1]), *yz = constant(q.inputs[2]);
      if (!ys || !yz || ys->dtype() != DType::Float32 || ys->numel() != 1 || yz->numel() != 1 || !int8_type(yz->dtype()))
        continue;
      if (q.attrs.has("output_dtype") && q.attrs.get_int("output_dtype", 0) != 0 &&
          static_cast<DType>(q.attrs.get_int("output_dtype", 0)) != yz->dtype())
        continue;

      GraphNode fused;
      fused.name = op.name;
      fused.op_type = conv ? "QLinearConv" : matmul ? "QLinearMatMul" : "QGemm";
      fused.opset = op.opset;
      if (gemm) {  // onnxruntime's contrib op
        fused.domain = "com.microsoft";
        fused.opset = 1;
        bool imported = false;
        for (const auto& [domain, version] : g.opsets) imported = imported || domain == "com.microsoft";
        if (!imported) g.opsets.emplace_back("com.microsoft", 1);
      }
      fused.index = op.index;
      const std::string base = op.name.empty() ? fmt::format("node{}", op.index) : op.name;
      fused.inputs = {x.q, x.scale, zero_of(x, base + "_x_zero"), w.q, w.scale, zero_of(w, base + "_w_zero")};
      if (gemm) fused.inputs.push_back(has_bias ? b.q : -1);  // QGemm: C before y_scale, y_zero_point
      fused.inputs.push_back(q.inputs[1]);
      fused.inputs.push_back(q.inputs[2]);
      if (has_bias && conv) fused.inputs.push_back(b.q);
      fused.outputs = {q.outputs[0]};
      if (conv)
        for (const char* a : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
          if (op.attrs.has(a)) fused.attrs.set(a, op.attrs.items().at(a));
      if (gemm)
        for (const char* a : {"transA", "transB"})
          if (op.attrs.has(a)) fused.attrs.set(a, op.attrs.items().at(a));
      const std::string what = fmt::format("{} '{}' + QuantizeLinear '{}' ({})", op.op_type, op.name, q.name, fused.op_type);
      g.nodes[i] = std::move(fused);
      removed[qi] = true;
      count_uses();
      // The DequantizeLinear nodes nobody else reads go too.
      for (const Dq* d : {&x, &w, has_bias ? &b : nullptr})
        if (d && !removed[d->node] && uses[g.nodes[d->node].outputs[0]] == 0) removed[d->node] = true;
      count_uses();
      ctx.applied("qdq_to_qlinear", what);
    }
    compact();
  }

  // Bias scale = x scale * w scale (per channel), within float32 rounding; zero point 0.
  static bool bias_scale_matches(const Dq& x, const Dq& w, const Dq& b) {
    const int64_t count = std::max(b.s->numel(), w.s->numel());  // either may be per tensor
    if ((b.s->numel() != count && b.s->numel() != 1) || (w.s->numel() != count && w.s->numel() != 1)) return false;
    if (b.z)
      for (int64_t k = 0; k < b.z->numel(); ++k)
        if (b.z->data<int32_t>()[k] != 0) return false;
    const float xs = x.s->data<float>()[0];
    for (int64_t k = 0; k < count; ++k) {
      const double want = static_cast<double>(xs) * w.s->data<float>()[w.s->numel() == 1 ? 0 : k];
      const double got = b.s->data<float>()[b.s->numel() == 1 ? 0 : k];
      if (!(std::fabs(got - want) <= 1e-6 * std::fabs(want))) return false;
    }
    return true;
  }

};

}  // namespace

void fuse_qdq_to_qlinear(RuleContext& ctx) { QdqPass(ctx).run(); }

}  // namespace onnxmini
