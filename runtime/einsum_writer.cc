// Writing einsum plans as ONNX models (the public einsum_decompose and einsum_model):
// a plan exported as an ONNX graph of simple operators.
//
// Every plan slot becomes an ONNX value whose axes are the slot's letters in
// memory order. Steps map to:
//   inputs   Reshape to the canonical form (size-1 axes dropped, merged letters
//            fused); a repeated letter (diagonal) is Mul by an identity matrix
//            then ReduceSum over one of the two axes
//   Copy     Transpose
//   Sum      ReduceSum (keepdims=0), Transpose
//   Product  Transpose + Unsqueeze each side to the full letter set, Mul, ReduceSum
//   Gemm     Transpose each side to [batch, m, k] / [batch, k, n], Reshape to 3-D,
//            MatMul, Reshape back to letters, Transpose to the slot's order
//   output   Reshape to the equation's output shape
// Identity Transposes and no-op Reshapes are left out. ReduceSum and Unsqueeze
// take `axes` as an attribute before opset 13 and as an input from 13 on.
#include <fmt/format.h>

#include <algorithm>

#include "kernels/einsum/einsum_cache.h"
#include "runtime/onnx_proto.h"

namespace onnxmini {
namespace einsum_impl {

namespace {

// A tensor graph input/output with a fixed shape.
void set_tensor_value_info(onnx::ValueInfoProto* vi, const std::string& name, DType dtype, const Shape& shape) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(dtype));
  auto* sp = tt->mutable_shape();
  for (int64_t d : shape) sp->add_dim()->set_dim_value(d);
}

// The IR version that goes with an opset (the oldest that supports it).
int64_t ir_version_for(int opset);

// An empty ai.onnx model at `opset` with a graph named "einsum".
onnx::GraphProto* start_model(onnx::ModelProto& model, int opset) {
  model.set_ir_version(ir_version_for(opset));
  model.set_producer_name("onnxmini-einsum");
  auto* op = model.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  auto* g = model.mutable_graph();
  g->set_name("einsum");
  return g;
}

struct Exporter {
  const Plan& p;
  int opset;
  DType dtype;
  onnx::GraphProto* g;
  int counter = 0;

  std::string fresh(const std::string& base) { return fmt::format("{}_{}", base, counter++); }

  std::string int64_initializer(const std::vector<int64_t>& v) {
    auto* t = g->add_initializer();
    t->set_name(fresh("const"));
    t->set_data_type(static_cast<int>(DType::Int64));
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return t->name();
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins, const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(fresh(op));
    for (const auto& i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  }
  static void ints_attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void int_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  // ReduceSum / Unsqueeze: axes as attribute (< 13) or input (>= 13).
  std::string with_axes(const std::string& op, const std::string& x, const std::vector<int64_t>& axes) {
    const std::string out = fresh(op == "ReduceSum" ? "sum" : "unsq");
    onnx::NodeProto* n;
    if (opset >= 13) {
      n = node(op, {x, int64_initializer(axes)}, out);
    } else {
      n = node(op, {x}, out);
      ints_attr(n, "axes", axes);
    }
    if (op == "ReduceSum") int_attr(n, "keepdims", 0);
    return out;
  }
  std::string transpose(const std::string& x, const std::vector<int>& from, const std::vector<int>& to) {
    if (from == to) return x;
    std::vector<int64_t> perm;
    for (int l : to) perm.push_back(std::find(from.begin(), from.end(), l) - from.begin());
    const std::string out = fresh("tr");
    ints_attr(node("Transpose", {x}, out), "perm", perm);
    return out;
  }
  std::vector<int64_t> sizes(const std::vector<int>& letters) const {
    std::vector<int64_t> s;
    for (int l : letters) s.push_back(p.letter_size[l]);
    return s;
  }
  std::string reshape(const std::string& x, const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
    if (from == to) return x;
    const std::string out = fresh("rs");
    node("Reshape", {x, int64_initializer(to)}, out);
    return out;
  }
  int64_t volume(const std::vector<int>& letters) const {
    int64_t v = 1;
    for (int l : letters) v *= p.letter_size[l];
    return v;
  }

  // A value with repeated letters -> its diagonal: Mul by eye on the two axes, ReduceSum the second.
  std::string diagonal(std::string x, std::vector<int>& letters) {
    for (size_t i = 0; i < letters.size(); ++i)
      for (size_t j = letters.size(); j-- > i + 1;) {
        if (letters[i] != letters[j]) continue;
        const int64_t n = p.letter_size[letters[i]];
        auto* eye = g->add_initializer();
        eye->set_name(fresh("eye"));
        eye->set_data_type(static_cast<int>(dtype));
        for (size_t a = 0; a < letters.size(); ++a) eye->add_dims(a == i || a == j ? n : 1);
        std::string raw(static_cast<size_t>(n * n) * dtype_size(dtype), '\0');
        for (int64_t d = 0; d < n; ++d) {
          char* e = &raw[static_cast<size_t>(d * n + d) * dtype_size(dtype)];
          if (dtype == DType::Float32) *reinterpret_cast<float*>(e) = 1.0f;
          else if (dtype == DType::Float64) *reinterpret_cast<double*>(e) = 1.0;
          else if (dtype == DType::Int32) *reinterpret_cast<int32_t*>(e) = 1;
          else *reinterpret_cast<int64_t*>(e) = 1;
        }
        eye->set_raw_data(raw);
        const std::string masked = fresh("diag");
        node("Mul", {x, eye->name()}, masked);
        x = with_axes("ReduceSum", masked, {static_cast<int64_t>(j)});
        letters.erase(letters.begin() + j);
      }
    return x;
  }

  // a (letters la) * b (letters lb) summed over `reduced` -> letters `out`.
  std::string product(const std::string& a, const std::vector<int>& la, const std::string& b,
                      const std::vector<int>& lb, const std::vector<int>& out, const std::vector<int>& reduced) {
    std::vector<int> all = out;
    all.insert(all.end(), reduced.begin(), reduced.end());
    auto align = [&](const std::string& x, const std::vector<int>& lx) {
      std::vector<int> sub;  // lx in the order of `all`
      std::vector<int64_t> missing;
      for (size_t i = 0; i < all.size(); ++i) {
        if (std::find(lx.begin(), lx.end(), all[i]) != lx.end()) sub.push_back(all[i]);
        else missing.push_back(static_cast<int64_t>(i));
      }
      const std::string t = transpose(x, lx, sub);
      return missing.empty() ? t : with_axes("Unsqueeze", t, missing);
    };
    const std::string prod = fresh("mul");
    node("Mul", {align(a, la), align(b, lb)}, prod);
    if (reduced.empty()) return prod;
    std::vector<int64_t> axes;
    for (size_t i = out.size(); i < all.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    return with_axes("ReduceSum", prod, axes);
  }

  static std::vector<int> cat(std::vector<int> a, const std::vector<int>& b, const std::vector<int>& c = {}) {
    a.insert(a.end(), b.begin(), b.end());
    a.insert(a.end(), c.begin(), c.end());
    return a;
  }

  std::string gemm(const Step& s, const std::string& a, const std::vector<int>& la, const std::string& b,
                   const std::vector<int>& lb) {
    const int64_t B = volume(s.batch), M = volume(s.m), N = volume(s.n), K = volume(s.k);
    const std::vector<int> ao = cat(s.batch, s.m, s.k), bo = cat(s.batch, s.k, s.n);
    const std::string a3 = reshape(transpose(a, la, ao), sizes(ao), {B, M, K});
    const std::string b3 = reshape(transpose(b, lb, bo), sizes(bo), {B, K, N});
    const std::string c3 = fresh("mm");
    node("MatMul", {a3, b3}, c3);
    const std::vector<int> co = cat(s.batch, s.m, s.n);
    return reshape(c3, {B, M, N}, sizes(co));
  }

  void run(onnx::ModelProto& model) {
    std::vector<std::string> name(p.slots.size());
    std::vector<std::vector<int>> letters(p.slots.size());
    auto value_info = [&](onnx::ValueInfoProto* vi, const std::string& n, const Shape& shape) {
      set_tensor_value_info(vi, n, dtype, shape);
    };
    for (size_t i = 0; i < p.num_inputs(); ++i) {
      const std::string in = fmt::format("in{}", i);
      value_info(g->add_input(), in, p.input_shapes[i]);
      letters[i] = p.slots[i].letters;
      name[i] = reshape(in, p.input_shapes[i], sizes(letters[i]));
      name[i] = diagonal(name[i], letters[i]);
    }
    const int out_slot = p.output_slot();
    for (const Step& s : p.steps) {
      const std::vector<int>& lo = p.slots[s.out].letters;
      std::string r;
      switch (s.kind) {
        case StepKind::Zero: {
          auto* z = g->add_initializer();
          z->set_name(fresh("zeros"));
          z->set_data_type(static_cast<int>(dtype));
          for (int l : lo) z->add_dims(p.letter_size[l]);
          z->set_raw_data(std::string(static_cast<size_t>(volume(lo)) * dtype_size(dtype), '\0'));
          r = z->name();
          break;
        }
        case StepKind::Copy: r = transpose(name[s.in0], letters[s.in0], lo); break;
        case StepKind::Sum: {
          std::vector<int64_t> axes;
          std::vector<int> kept;
          for (size_t i = 0; i < letters[s.in0].size(); ++i) {
            const int l = letters[s.in0][i];
            if (std::find(lo.begin(), lo.end(), l) == lo.end()) axes.push_back(static_cast<int64_t>(i));
            else kept.push_back(l);
          }
          r = transpose(axes.empty() ? name[s.in0] : with_axes("ReduceSum", name[s.in0], axes), kept, lo);
          break;
        }
        case StepKind::Product:
          r = product(name[s.in0], letters[s.in0], name[s.in1], letters[s.in1], lo, s.reduced);
          break;
        case StepKind::Gemm: {
          const std::string c = gemm(s, name[s.in0], letters[s.in0], name[s.in1], letters[s.in1]);
          r = transpose(c, cat(s.batch, s.m, s.n), lo);
          break;
        }
      }
      name[s.out] = r;
      letters[s.out] = lo;
    }
    // The output: back to the equation's shape, under the name "out".
    std::string y = reshape(name[out_slot], sizes(letters[out_slot]), p.output_shape);
    bool produced = false;
    for (int i = 0; i < g->node_size(); ++i)
      for (int k = 0; k < g->node(i).output_size(); ++k) produced = produced || g->node(i).output(k) == y;
    if (!produced) {  // an input or an initializer: give the output a node of its own
      const std::string id = fresh("id");
      node("Identity", {y}, id);
      y = id;
    }
    for (int i = 0; i < g->node_size(); ++i)
      for (int k = 0; k < g->node(i).output_size(); ++k)
        if (g->node(i).output(k) == y) g->mutable_node(i)->set_output(k, "out");
    for (int i = 0; i < g->node_size(); ++i)
      for (int k = 0; k < g->node(i).input_size(); ++k)
        if (g->node(i).input(k) == y) g->mutable_node(i)->set_input(k, "out");
    value_info(g->add_output(), "out", p.output_shape);
    (void)model;
  }
};

// IR 4 at least: before it initializers had to be listed as graph inputs too, which
// onnx.checker enforces (IR 4 still reads opsets 7 and 8).
int64_t ir_version_for(int opset) {
  if (opset <= 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  return 10;
}

}  // namespace

std::string export_plan(const Plan& plan, int opset, DType dtype) {
  if (opset < 7 || opset > 21)
    throw Error(ErrorCode::InvalidArgument, fmt::format("einsum export: opset must be in [7, 21], got {}", opset));
  if (!(dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Int32 || dtype == DType::Int64))
    throw Error(ErrorCode::InvalidArgument, fmt::format("einsum export: dtype {} is not supported", dtype_name(dtype)));
  onnx::ModelProto model;
  auto* g = start_model(model, opset);
  g->set_doc_string(plan.equation + "  plan: " + plan.summary);
  Exporter e{plan, opset, dtype, g};
  e.run(model);
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

}  // namespace einsum_impl

std::string einsum_decompose(const std::string& equation, const std::vector<Shape>& shapes, EinsumOptimize optimize,
                             int opset, DType dtype) {
  EinsumOptions o;
  o.optimize = optimize;
  return einsum_impl::export_plan(einsum_impl::get_plan(equation, shapes, o)->plan, opset, dtype);
}


std::string einsum_model(const std::string& equation, const std::vector<Shape>& shapes, int opset, DType dtype) {
  if (opset < 12) throw Error(ErrorCode::InvalidArgument, fmt::format("Einsum needs opset >= 12, got {}", opset));
  const Shape out_shape = einsum_output_shape(equation, shapes);
  onnx::ModelProto model;
  auto* g = einsum_impl::start_model(model, opset);
  auto add_vi = [&](onnx::ValueInfoProto* vi, const std::string& n, const Shape& s) {
    einsum_impl::set_tensor_value_info(vi, n, dtype, s);
  };
  auto* n = g->add_node();
  n->set_op_type("Einsum");
  n->set_name("einsum");
  for (size_t i = 0; i < shapes.size(); ++i) {
    add_vi(g->add_input(), fmt::format("in{}", i), shapes[i]);
    n->add_input(fmt::format("in{}", i));
  }
  n->add_output("out");
  auto* a = n->add_attribute();
  a->set_name("equation");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(equation);
  add_vi(g->add_output(), "out", out_shape);
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

}  // namespace onnxmini
