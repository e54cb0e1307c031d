// Transpose / Reshape sinking through elementwise ops (graph_sinking.h).
#include "runtime/graph_sinking.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "runtime/graph_pass.h"

namespace onnxmini {
namespace {

std::string label(const GraphNode& n) { return fmt::format("{} '{}'", n.op_type, n.name); }

bool onnx_op(const GraphNode& n, const char* op) { return n.domain.empty() && n.op_type == op; }

// Ops computing each output element from the input element at the same index alone
// (extra inputs, when any, must be scalar constants: Clip's bounds).
bool unary_elementwise(const GraphNode& n) {
  static const std::set<std::string> ops = {
      "Abs",      "Acos",      "Acosh",       "Asin",  "Asinh",    "Atan",   "Atanh",     "BitwiseNot",
      "Cast",     "Ceil",      "Celu",        "Clip",  "Cos",      "Cosh",   "Elu",       "Erf",
      "Exp",      "Floor",     "Gelu",        "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN",
      "LeakyRelu", "Log",      "Mish",        "Neg",   "Not",      "Reciprocal", "Relu", "Round",
      "Selu",     "Sigmoid",   "Sign",        "Sin",   "Sinh",     "Softplus", "Softsign", "Sqrt",
      "Tan",      "Tanh",      "ThresholdedRelu"};
  return n.domain.empty() && ops.count(n.op_type) != 0;
}

// Two-input ops broadcasting both inputs elementwise (PRelu broadcasts its slope only,
// which permuting keeps valid: the slope still broadcasts to X).
bool binary_elementwise(const GraphNode& n) {
  static const std::set<std::string> ops = {
      "Add",   "And",  "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Div",  "Equal", "Greater",
      "GreaterOrEqual", "Less", "LessOrEqual", "Max", "Mean", "Min", "Mod", "Mul", "Or", "Pow", "PRelu",
      "Sub",   "Sum",  "Xor"};
  return n.domain.empty() && ops.count(n.op_type) != 0 && n.inputs.size() == 2;
}

bool is_permutation(const std::vector<int64_t>& p) {
  std::vector<bool> seen(p.size(), false);
  for (int64_t a : p) {
    if (a < 0 || a >= static_cast<int64_t>(p.size()) || seen[a]) return false;
    seen[a] = true;
  }
  return true;
}

// The Transpose's perm when it is explicit and valid (an absent perm reverses the axes
// of a rank the graph may not know: left alone).
bool transpose_perm(const GraphNode& n, std::vector<int64_t>& perm) {
  if (!onnx_op(n, "Transpose") || n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 ||
      n.outputs[0] < 0 || !n.attrs.has("perm"))
    return false;
  perm = n.attrs.get_ints("perm");
  return !perm.empty() && is_permutation(perm);
}

// y = x transposed by `perm` (y's axis k is x's axis perm[k]), any fixed-size element type.
// Walks y in order with a running index into x (x's strides gathered per y axis).
Tensor permuted(const Tensor& x, const std::vector<int64_t>& perm) {
  const size_t rank = perm.size(), esize = dtype_size(x.dtype());
  std::vector<int64_t> x_strides(rank, 1), y_dims(rank), step(rank);
  for (size_t d = rank; d-- > 1;) x_strides[d - 1] = x_strides[d] * x.dim(d);
  Shape y_shape(rank);
  for (size_t k = 0; k < rank; ++k) y_shape[k] = y_dims[k] = x.dim(perm[k]), step[k] = x_strides[perm[k]];
  Tensor y(x.dtype(), y_shape);
  const char* src = static_cast<const char*>(x.raw());
  char* dst = static_cast<char*>(y.raw_mut());
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (int64_t n = 0; n < y.numel(); ++n) {
    std::memcpy(dst + n * esize, src + offset * esize, esize);
    for (size_t k = rank; k-- > 0;) {  // odometer over y's index
      offset += step[k];
      if (++idx[k] < y_dims[k]) break;
      offset -= step[k] * y_dims[k];
      idx[k] = 0;
    }
  }
  return y;
}

struct Sinker : FusionPass {
  using FusionPass::FusionPass;


  // A value whose shape the rewrite changes: its declarations no longer hold.
  void forget_declared_shape(int id) {
    g.value_infos.erase(id);
    g.declared_types.erase(id);
    g.value_info_ids.erase(std::remove(g.value_info_ids.begin(), g.value_info_ids.end(), id), g.value_info_ids.end());
  }

  void set_dtype_like(int id, int like) {
    auto it = g.known_dtypes.find(like);
    if (it == g.known_dtypes.end()) g.known_dtypes.erase(id);
    else g.known_dtypes[id] = it->second;
  }

  // The declared shape of `id` (graph input or value_info; symbolic dims allowed).
  const std::vector<Dim>* declared_shape(int id) const {
    for (size_t k = 0; k < g.input_ids.size(); ++k)
      if (g.input_ids[k] == id) return g.inputs[k].has_shape ? &g.inputs[k].shape : nullptr;
    auto it = g.value_infos.find(id);
    return it != g.value_infos.end() && it->second.has_shape ? &it->second.shape : nullptr;
  }

  // A constant the rewrite may read at load time (not a string tensor).
  const Tensor* plain_constant(int id) const {
    const Tensor* t = constant(id);
    return t && t->dtype() != DType::String && dtype_size(t->dtype()) > 0 ? t : nullptr;
  }

  bool scalar_constant(int id) const {
    const Tensor* t = plain_constant(id);
    return t && t->rank() == 0;
  }

  // Moves node `i` to just below node `last` (i < last): the nodes in between, none of
  // which reads node i's output any more, move up by one and keep their order.
  void move_below(size_t i, size_t last) {
    std::rotate(g.nodes.begin() + i, g.nodes.begin() + i + 1, g.nodes.begin() + last + 1);
    std::rotate(removed.begin() + i, removed.begin() + i + 1, removed.begin() + last + 1);
  }

  // From node `first` (a reader of v), follows single-reader links through nodes `step`
  // accepts until a node `is_end` accepts. Fills `chain` (node indices, in order; empty
  // when `first` is the end) and `end`; false when the walk stops anywhere else.
  template <typename Step, typename End>
  bool walk(int v, int first, std::vector<size_t>& chain, size_t& end, Step step, End is_end) {
    chain.clear();
    for (int j = first; j >= 0 && chain.size() < g.nodes.size(); j = sole_consumer(v)) {
      const GraphNode& n = g.nodes[j];
      if (is_end(n, v)) {
        end = static_cast<size_t>(j);
        return true;
      }
      if (!step(n, v) || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
      chain.push_back(static_cast<size_t>(j));
      v = n.outputs[0];
    }
    return false;
  }

  // The chain now reads x where it read t (node i's output, x -> t); its values are in
  // x's layout.
  void reroute(int x, int t, const std::vector<size_t>& chain) {
    for (int& in : g.nodes[chain.front()].inputs)
      if (in == t) in = x;
    for (size_t c : chain) forget_declared_shape(g.nodes[c].outputs[0]);
  }

  // Can `n` (reading the transposed value v, of rank `rank`) run before the Transpose?
  // Records, in `swaps`, the constant operands to replace by their permuted copies.
  bool commutes_with_transpose(const GraphNode& n, int v, const std::vector<int64_t>& perm,
                               std::vector<std::pair<int, Tensor>>& swaps) const {
    if (unary_elementwise(n)) {
      if (n.inputs.empty() || n.inputs[0] != v) return false;
      for (size_t k = 1; k < n.inputs.size(); ++k)
        if (n.inputs[k] >= 0 && !scalar_constant(n.inputs[k])) return false;
      return true;
    }
    if (!binary_elementwise(n)) return false;
    const int other = n.inputs[0] == v ? n.inputs[1] : n.inputs[0];
    if (n.inputs[1] == v && n.op_type == "PRelu" && n.inputs[0] != v) return false;  // X must be the transposed one
    if (other == v) return true;
    const Tensor* c = plain_constant(other);
    if (!c || c->rank() > perm.size()) return false;  // a higher rank would broadcast v up
    if (c->numel() == 1) return true;                 // broadcasts the same way in any layout
    // c broadcast to v's rank is c unsqueezed in front; the op before the Transpose
    // needs it in x's layout: permuted by the inverse of perm.
    Shape full(perm.size() - c->rank(), 1);
    for (size_t d = 0; d < c->rank(); ++d) full.push_back(c->dim(d));
    std::vector<int64_t> inverse(perm.size());
    for (size_t k = 0; k < perm.size(); ++k) inverse[perm[k]] = static_cast<int64_t>(k);
    Tensor unsqueezed(c->dtype(), full, c->buffer(), c->offset());
    swaps.emplace_back(other, permuted(unsqueezed, inverse));
    return true;
  }

  // One way from a reader of the moved Transpose's output to the Transpose it meets.
  struct Branch {
    std::vector<size_t> chain;
    size_t end = 0;
    std::vector<std::pair<size_t, std::pair<int, Tensor>>> swaps;  // node, (constant input, permuted copy)
  };

  // Transpose(x, p) whose every reader starts a chain of commuting ops ending in a
  // Transpose(q) (or is one): each chain reads x, each end becomes Transpose(p then q), the
  // first Transpose goes. One reader: p -> ops -> q; several: the fan-out a converter
  // leaves when one NHWC value feeds several NCHW consumers.
  bool sink_chain(size_t i) {
    std::vector<int64_t> perm, end_perm;
    if (!transpose_perm(g.nodes[i], perm)) return false;
    const int x = g.nodes[i].inputs[0], t = g.nodes[i].outputs[0];
    std::vector<size_t> readers;
    int slots = 0;
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      if (removed[k]) continue;
      const int n = static_cast<int>(std::count(g.nodes[k].inputs.begin(), g.nodes[k].inputs.end(), t));
      if (n > 0) readers.push_back(k), slots += n;
    }
    if (readers.empty() || slots != uses[t]) return false;  // also a graph output, or read by a subgraph
    std::vector<Branch> branches(readers.size());
    std::vector<bool> taken(g.nodes.size(), false);  // branches must not meet (Add(Relu(t), Neg(t)))
    bool moves_something = false;
    for (size_t r = 0; r < readers.size(); ++r) {
      Branch& b = branches[r];
      auto step = [&](const GraphNode& n, int v) {
        std::vector<std::pair<int, Tensor>> swaps;
        if (!commutes_with_transpose(n, v, perm, swaps)) return false;
        for (auto& sw : swaps) b.swaps.push_back({static_cast<size_t>(&n - g.nodes.data()), std::move(sw)});
        return true;
      };
      auto is_end = [&](const GraphNode& n, int) { return transpose_perm(n, end_perm) && end_perm.size() == perm.size(); };
      if (!walk(t, static_cast<int>(readers[r]), b.chain, b.end, step, is_end)) return false;
      for (size_t c : b.chain) {
        if (taken[c]) return false;
        taken[c] = true;
      }
      moves_something = moves_something || !b.chain.empty();
    }
    if (!moves_something) return false;  // Transpose(Transpose): cancel_transposes' case
    std::string what = label(g.nodes[i]);
    for (const Branch& b : branches) {
      for (size_t c : b.chain) what += " -> " + label(g.nodes[c]);
      what += " -> " + label(g.nodes[b.end]) + (&b == &branches.back() ? "" : ";");
    }
    for (Branch& b : branches) {
      for (auto& [node, swap] : b.swaps) {
        const int id = add_constant(g.value_names[swap.first] + "_sunk", std::move(swap.second));
        for (int& in : g.nodes[node].inputs)
          if (in == swap.first) in = id;
      }
      // end(moved(v)): the end's axis k is the moved output's axis q[k], which is x's axis
      // p[q[k]]. An identity result is left to cancel_transposes.
      GraphNode& end = g.nodes[b.end];
      transpose_perm(end, end_perm);
      std::vector<int64_t> composed(perm.size());
      for (size_t k = 0; k < perm.size(); ++k) composed[k] = perm[end_perm[k]];
      end.attrs.set("perm", composed);
      if (b.chain.empty()) {
        end.inputs[0] = x;
      } else {
        reroute(x, t, b.chain);
      }
    }
    removed[i] = true;
    count_uses();
    ctx.applied("sink_transpose", what);
    return true;
  }

  bool same_declared_shape(int a, int b) const {
    const std::vector<Dim>* da = declared_shape(a);
    const std::vector<Dim>* db = declared_shape(b);
    if (!da || !db || da->size() != db->size()) return false;
    for (size_t k = 0; k < da->size(); ++k) {
      const Dim &x = (*da)[k], &y = (*db)[k];
      const bool same = x.value >= 0 ? x.value == y.value : !x.param.empty() && x.param == y.param;
      if (!same) return false;
    }
    return true;
  }

  // Op(Transpose(a, p), Transpose(b, p)) -> Transpose(Op(a, b), p), a and b of one shape
  // (were they to broadcast, the single Transpose would move the larger result).
  bool merge_operand_transposes(size_t b) {
    GraphNode& op = g.nodes[b];
    if (!binary_elementwise(op) || op.outputs.size() != 1 || op.outputs[0] < 0) return false;
    const int t1 = op.inputs[0], t2 = op.inputs[1];
    if (t1 < 0 || t2 < 0 || t1 == t2 || sole_consumer(t1) != static_cast<int>(b) ||
        sole_consumer(t2) != static_cast<int>(b))
      return false;
    const int i1 = producer(t1), i2 = producer(t2);
    std::vector<int64_t> p1, p2;
    if (i1 < 0 || i2 < 0 || !transpose_perm(g.nodes[i1], p1) || !transpose_perm(g.nodes[i2], p2) || p1 != p2)
      return false;
    const int a_in = g.nodes[i1].inputs[0], b_in = g.nodes[i2].inputs[0];
    if (!same_declared_shape(a_in, b_in)) return false;
    const std::string what = label(g.nodes[i1]) + " + " + label(g.nodes[i2]) + " -> " + label(op);
    const int y = op.outputs[0];
    op.inputs = {a_in, b_in};
    op.outputs[0] = t1;  // t1 now holds Op(a, b); the Transpose writes y
    g.nodes[i1].inputs[0] = t1;
    g.nodes[i1].outputs[0] = y;
    forget_declared_shape(t1);
    set_dtype_like(t1, y);  // comparisons give bool
    removed[i2] = true;     // its output has no reader left
    move_below(static_cast<size_t>(i1), b);
    count_uses();
    ctx.applied("sink_transpose", what + " (one Transpose)");
    return true;
  }

  // Reshape(x, s1) -> unary elementwise chain -> Reshape(s2): the chain reads x, the first goes.
  bool sink_reshape_chain(size_t i) {
    const GraphNode& r = g.nodes[i];
    if (!onnx_op(r, "Reshape") || r.inputs.size() != 2 || r.inputs[0] < 0 || r.outputs.size() != 1 ||
        r.outputs[0] < 0)
      return false;
    std::vector<size_t> chain;
    size_t end = 0;
    auto step = [&](const GraphNode& n, int v) {
      if (unary_elementwise(n)) {
        if (n.inputs.empty() || n.inputs[0] != v) return false;
        for (size_t k = 1; k < n.inputs.size(); ++k)
          if (n.inputs[k] >= 0 && !scalar_constant(n.inputs[k])) return false;
        return true;
      }
      if (!binary_elementwise(n)) return false;  // a scalar constant operand: broadcasts in any shape
      const int other = n.inputs[0] == v ? n.inputs[1] : n.inputs[0];
      return other == v || (scalar_constant(other) && !(n.op_type == "PRelu" && n.inputs[1] == v));
    };
    auto is_end = [&](const GraphNode& n, int v) {
      if (!onnx_op(n, "Reshape") || n.inputs.size() != 2 || n.inputs[0] != v) return false;
      const Tensor* s = constant(n.inputs[1]);
      if (!s || s->dtype() != DType::Int64 || s->rank() != 1) return false;
      // A 0 copies a dimension of its input, whose shape the rewrite keeps: collapse_reshapes
      // skips such an outer Reshape, so moving the first one would gain nothing.
      const auto* d = s->data<int64_t>();
      return n.attrs.get_int("allowzero", 0) != 0 || std::find(d, d + s->numel(), 0) == d + s->numel();
    };
    if (!walk(r.outputs[0], sole_consumer(r.outputs[0]), chain, end, step, is_end) || chain.empty()) return false;
    std::string what = label(g.nodes[i]);
    for (size_t c : chain) what += " -> " + label(g.nodes[c]);
    what += " -> " + label(g.nodes[end]);
    // The end's shape has no 0: it does not depend on its input's shape. The first Reshape,
    // read by the chain only, goes.
    reroute(g.nodes[i].inputs[0], g.nodes[i].outputs[0], chain);
    removed[i] = true;
    count_uses();
    ctx.applied("sink_reshape", what);
    return true;
  }

  // An integer constant's elements as int64 (int32 / int64 only), else false.
  bool int_values(int id, std::vector<int64_t>& out) const {
    const Tensor* t = plain_constant(id);
    if (!t || t->rank() > 1 || (t->dtype() != DType::Int64 && t->dtype() != DType::Int32)) return false;
    out.resize(t->numel());
    for (int64_t k = 0; k < t->numel(); ++k)
      out[k] = t->dtype() == DType::Int64 ? t->data<int64_t>()[k] : t->data<int32_t>()[k];
    return true;
  }

  // The node making `id` when it is a Cast to int32 / int64 (shape arithmetic tf2onnx wraps
  // in Casts), else -1.
  int int_cast_producer(int id) const {
    const int p = producer(id);
    if (p < 0 || !onnx_op(g.nodes[p], "Cast") || g.nodes[p].inputs.empty()) return -1;
    const int64_t to = g.nodes[p].attrs.get_int("to", 0);
    return to == 6 || to == 7 ? p : -1;  // TensorProto INT32, INT64
  }

  // The 1-D shape tensor `id`'s last entry, when provable: a constant, or a Concat along axis
  // 0 (through integer Casts) whose last part is (Keras' Tensordot writes
  // Cast(Concat(Gather(Shape(x), [0, 1]), [N]))). Values this small survive the Casts.
  bool shape_last_entry(int id, int64_t& last) const {
    for (int depth = 0; depth < 8 && id >= 0; ++depth) {
      std::vector<int64_t> v;
      if (int_values(id, v)) {
        if (v.empty()) return false;
        last = v.back();
        return true;
      }
      if (const int c = int_cast_producer(id); c >= 0) {
        id = g.nodes[c].inputs[0];
        continue;
      }
      const int p = producer(id);
      if (p < 0 || !onnx_op(g.nodes[p], "Concat") || g.nodes[p].inputs.empty() ||
          (g.nodes[p].attrs.get_int("axis", 0) != 0 && g.nodes[p].attrs.get_int("axis", 0) != -1))
        return false;
      id = g.nodes[p].inputs.back();
    }
    return false;
  }

  // The number of entries of the 1-D shape tensor `id` (the Reshape output's rank), when
  // provable: a constant, Gather(_, constant 1-D indices), Cast, Concat of such; else -1.
  int64_t shape_length(int id, int depth = 0) const {
    if (id < 0 || depth > 8) return -1;
    std::vector<int64_t> v;
    if (int_values(id, v)) return static_cast<int64_t>(v.size());
    if (const int c = int_cast_producer(id); c >= 0) return shape_length(g.nodes[c].inputs[0], depth + 1);
    const int p = producer(id);
    if (p < 0) return -1;
    const GraphNode& n = g.nodes[p];
    if (onnx_op(n, "Gather") && n.inputs.size() == 2) {
      const Tensor* idx = plain_constant(n.inputs[1]);
      return idx && idx->rank() == 1 ? idx->numel() : -1;
    }
    if (!onnx_op(n, "Concat")) return -1;
    int64_t total = 0;
    for (int in : n.inputs) {
      const int64_t k = shape_length(in, depth + 1);
      if (k < 0) return -1;
      total += k;
    }
    return total;
  }

  // x's last dimension when provable: declared, or x = MatMul(_, B constant [K, N]) / Gemm
  // with B constant (the size of the axis transB leaves last); else -1.
  int64_t last_dim(int x) const {
    if (const std::vector<Dim>* d = declared_shape(x); d && !d->empty() && d->back().value > 0)
      return d->back().value;
    const int p = producer(x);
    if (p < 0 || g.nodes[p].inputs.size() < 2) return -1;
    const GraphNode& n = g.nodes[p];
    const Tensor* b = plain_constant(n.inputs[1]);
    if (!b || b->rank() != 2) return -1;
    if (onnx_op(n, "MatMul")) return b->dim(1);
    if (onnx_op(n, "Gemm")) return n.attrs.get_int("transB", 0) != 0 ? b->dim(0) : b->dim(1);
    return -1;
  }

  // Add(Reshape(x, s), bias) [-> unary elementwise ops], bias constant varying along the
  // last axis only ([1, .., 1, N]) and the Reshape keeping the last axis' size N (s's last
  // entry N = x's last dim): -> Add(x, bias as [N]) [-> ops] -> Reshape(s). Bit for bit: with
  // the last axis kept, the element at flat index f gets bias[f mod N] in either layout.
  // Brings MatMul and its bias Add together for matmul_add_gemm / gemm_activation.
  bool sink_reshape_below_bias_add(size_t i) {
    const GraphNode& r = g.nodes[i];
    if (!onnx_op(r, "Reshape") || r.opset < 5 || r.inputs.size() != 2 || r.inputs[0] < 0 || r.inputs[1] < 0 ||
        r.outputs.size() != 1 || r.outputs[0] < 0)
      return false;
    const int x = r.inputs[0], t = r.outputs[0];
    const int a = sole_consumer(t);
    if (a < 0) return false;  // several readers, a graph output, read by a subgraph
    const GraphNode& add = g.nodes[a];
    if (!onnx_op(add, "Add") || add.opset < 7 || add.inputs.size() != 2 || add.outputs.size() != 1 ||
        add.outputs[0] < 0)
      return false;
    const int bias_id = add.inputs[0] == t ? add.inputs[1] : add.inputs[0];
    const Tensor* bias = plain_constant(bias_id);
    int64_t n = 0;
    if (!bias || bias->rank() == 0 || !shape_last_entry(r.inputs[1], n) || n <= 0 || last_dim(x) != n ||
        bias->numel() != n || bias->shape().back() != n)
      return false;
    // A bias of higher rank than the Reshape's output would give the sum leading 1s.
    if (bias->rank() > 1 && shape_length(r.inputs[1]) < static_cast<int64_t>(bias->rank())) return false;
    // The unary elementwise ops after the Add (an activation) move above the Reshape too.
    std::vector<size_t> chain = {static_cast<size_t>(a)};
    for (int v = add.outputs[0], j = sole_consumer(v); j >= 0 && chain.size() < g.nodes.size(); j = sole_consumer(v)) {
      const GraphNode& u = g.nodes[j];
      if (!unary_elementwise(u) || u.inputs.empty() || u.inputs[0] != v || u.outputs.size() != 1 || u.outputs[0] < 0)
        break;
      bool scalar_extras = true;
      for (size_t k = 1; k < u.inputs.size(); ++k)
        scalar_extras = scalar_extras && (u.inputs[k] < 0 || scalar_constant(u.inputs[k]));
      if (!scalar_extras) break;
      chain.push_back(static_cast<size_t>(j));
      v = u.outputs[0];
    }
    if (*std::min_element(chain.begin(), chain.end()) < i) return false;  // not in execution order
    std::string what = label(g.nodes[i]);
    for (size_t c : chain) what += " -> " + label(g.nodes[c]);
    int row = bias_id;
    if (bias->rank() != 1) {
      Tensor flat(bias->dtype(), Shape{n}, bias->buffer(), bias->offset());
      row = add_constant(g.value_names[bias_id] + "_row", std::move(flat));
    }
    GraphNode& sum = g.nodes[a];
    for (int& in : sum.inputs) in = in == t ? x : in == bias_id ? row : in;
    // The chain's values now have x's shape; t (x's shape too) carries the chain's result
    // into the Reshape, which writes the chain's old output under its name.
    const size_t last = chain.back();
    const int end = g.nodes[last].outputs[0];
    for (size_t c : chain) forget_declared_shape(g.nodes[c].outputs[0]);
    forget_declared_shape(t);
    set_dtype_like(t, end);  // a Cast in the chain
    g.nodes[last].outputs[0] = t;
    g.nodes[i].inputs[0] = t;
    g.nodes[i].outputs[0] = end;
    move_below(i, last);
    count_uses();
    ctx.applied("sink_reshape_bias", what + " (Reshape after)");
    return true;
  }

  // Transpose(x, p) moving only axes of size 1 -> Reshape(x, shape): same bytes, no copy.
  bool transpose_as_reshape(size_t i) {
    GraphNode& t = g.nodes[i];
    std::vector<int64_t> perm;
    if (!transpose_perm(t, perm) || t.opset < 5) return false;
    const std::vector<Dim>* x = declared_shape(t.inputs[0]);
    if (!x || x->size() != perm.size()) return false;
    auto is_one = [&](int64_t axis) { return (*x)[axis].value == 1; };
    int64_t last_moved = -1;
    bool identity = true;
    std::vector<int64_t> spec(perm.size());
    for (size_t k = 0; k < perm.size(); ++k) {
      identity = identity && perm[k] == static_cast<int64_t>(k);
      const Dim& d = (*x)[perm[k]];
      if (d.value > 0) spec[k] = d.value;
      else if (d.value < 0 && perm[k] == static_cast<int64_t>(k)) spec[k] = 0;  // copies x's (same) dimension
      else return false;  // a symbolic dimension that moves, or a zero one (0 would copy)
      if (is_one(perm[k])) continue;
      if (perm[k] < last_moved) return false;  // two axes of other sizes swap: data moves
      last_moved = perm[k];
    }
    if (identity) return false;  // cancel_transposes' case
    const std::string what = label(t);
    const int shape = add_constant(g.value_names[t.outputs[0]] + "_shape",
                                   Tensor::from_vector<int64_t>({static_cast<int64_t>(spec.size())}, spec));
    t.op_type = "Reshape";
    t.attrs = Attributes();
    t.inputs.push_back(shape);
    count_uses();
    ctx.applied("transpose_to_reshape", what);
    return true;
  }
};

}  // namespace

void sink_transpose(RuleContext& ctx) {
  Sinker s(ctx);
  // merge_operand_transposes moves a Transpose down to i, where it may sink further:
  // after that rewrite the node at i is looked at again.
  for (size_t i = 0; i < ctx.g.nodes.size();) {
    if (s.removed[i] || !(s.sink_chain(i) || s.merge_operand_transposes(i))) ++i;
  }
  s.compact();
}

void sink_reshape(RuleContext& ctx) {
  Sinker s(ctx);
  for (size_t i = 0; i < ctx.g.nodes.size(); ++i)
    if (!s.removed[i]) s.sink_reshape_chain(i);
  s.compact();
}

void sink_reshape_bias(RuleContext& ctx) {
  Sinker s(ctx);
  // A moved Reshape lands at i's old chain end; the node now at i is a new one: looked at too.
  for (size_t i = 0; i < ctx.g.nodes.size();)
    if (!s.sink_reshape_below_bias_add(i)) ++i;
}

void transpose_to_reshape(RuleContext& ctx) {
  Sinker s(ctx);
  for (size_t i = 0; i < ctx.g.nodes.size(); ++i) s.transpose_as_reshape(i);
}

}  // namespace onnxmini
