// Test helper: build a small ONNX model in C++, load it into an onnxmini::Session,
// run it, and compare tensors with a tolerance. Header-only, for gtest files.
//
//   using namespace onnxmini::test;
//   ModelBuilder mb(/*opset=*/13);
//   mb.input("X", DType::Float32, {1, 3, 8, 8});
//   mb.initializer("W", Tensor::from_vector<float>({4, 3, 3, 3}, w));
//   mb.node("Conv", {"X", "W"}, {"Y"}).attr("pads", std::vector<int64_t>{1, 1, 1, 1}).name("n9");
//   mb.output("Y");
//   auto session = mb.session();                    // or mb.session(options)
//   Tensor y = run_single(*session, {{"X", x}});     // first output
//   EXPECT_TRUE(tensors_near(y, expected, 1e-5, 1e-4));
//
// Node attributes take int64_t, float, std::string, std::vector<int64_t>,
// std::vector<float>, std::vector<std::string> and Tensor.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "onnxmini/onnxmini.h"
#include "runtime/onnx_proto.h"

namespace onnxmini {
namespace test {

// Fills an onnx.TensorProto from a Tensor (numeric and bool dtypes, via raw_data).
inline void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
  p->set_name(name);
  p->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) p->add_dims(d);
  if (t.dtype() == DType::String) {
    const std::string* s = static_cast<const std::string*>(t.raw());
    for (int64_t i = 0; i < t.numel(); ++i) p->add_string_data(s[i]);
  } else {
    p->set_raw_data(std::string(static_cast<const char*>(t.raw()), t.nbytes()));
  }
}

// One node under construction; setters return *this so calls chain.
class NodeBuilder {
 public:
  explicit NodeBuilder(onnx::NodeProto* n) : n_(n) {}
  NodeBuilder& name(const std::string& s) { n_->set_name(s); return *this; }
  NodeBuilder& domain(const std::string& d) { n_->set_domain(d); return *this; }
  NodeBuilder& attr(const std::string& k, int64_t v) { add(k, onnx::AttributeProto::INT)->set_i(v); return *this; }
  NodeBuilder& attr(const std::string& k, int v) { return attr(k, static_cast<int64_t>(v)); }
  NodeBuilder& attr(const std::string& k, float v) { add(k, onnx::AttributeProto::FLOAT)->set_f(v); return *this; }
  NodeBuilder& attr(const std::string& k, double v) { return attr(k, static_cast<float>(v)); }
  NodeBuilder& attr(const std::string& k, const std::string& v) { add(k, onnx::AttributeProto::STRING)->set_s(v); return *this; }
  NodeBuilder& attr(const std::string& k, const char* v) { return attr(k, std::string(v)); }
  NodeBuilder& attr(const std::string& k, const std::vector<int64_t>& v) {
    auto* a = add(k, onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  NodeBuilder& attr(const std::string& k, const std::vector<float>& v) {
    auto* a = add(k, onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
    return *this;
  }
  NodeBuilder& attr(const std::string& k, const std::vector<std::string>& v) {
    auto* a = add(k, onnx::AttributeProto::STRINGS);
    for (const auto& x : v) a->add_strings(x);
    return *this;
  }
  // A graph-valued attribute (If/Loop/Scan body).
  NodeBuilder& attr(const std::string& k, const onnx::GraphProto& body) {
    *add(k, onnx::AttributeProto::GRAPH)->mutable_g() = body;
    return *this;
  }
  NodeBuilder& attr(const std::string& k, const Tensor& v) {
    tensor_to_proto(v, "", add(k, onnx::AttributeProto::TENSOR)->mutable_t());
    return *this;
  }

 private:
  onnx::AttributeProto* add(const std::string& k, onnx::AttributeProto::AttributeType type) {
    auto* a = n_->add_attribute();
    a->set_name(k);
    a->set_type(type);
    return a;
  }
  onnx::NodeProto* n_;
};

class ModelBuilder {
 public:
  // `opset` is the ai.onnx version; add more domains with import_domain().
  explicit ModelBuilder(int64_t opset = 17, int64_t ir_version = 8) {
    model_.set_ir_version(ir_version);
    model_.set_producer_name("onnxmini-tests");
    import_domain("", opset);
    model_.mutable_graph()->set_name("test_graph");
  }
  ModelBuilder& import_domain(const std::string& domain, int64_t version) {
    auto* o = model_.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
    return *this;
  }
  // A graph input. A dim < 0 becomes a symbolic dim ("d0", "d1", ...); an empty shape
  // with `rank_known` false leaves the shape undeclared.
  ModelBuilder& input(const std::string& name, DType dtype, const Shape& shape, bool rank_known = true) {
    set_value_info(model_.mutable_graph()->add_input(), name, dtype, shape, rank_known);
    return *this;
  }
  // A graph output; its type is optional for onnxmini (dtype Undefined leaves it out).
  ModelBuilder& output(const std::string& name, DType dtype = DType::Undefined, const Shape& shape = {},
                       bool rank_known = false) {
    auto* vi = model_.mutable_graph()->add_output();
    if (dtype == DType::Undefined) {
      vi->set_name(name);  // no type: the runtime infers it
    } else {
      set_value_info(vi, name, dtype, shape, rank_known);
    }
    return *this;
  }
  ModelBuilder& initializer(const std::string& name, const Tensor& t) {
    tensor_to_proto(t, name, model_.mutable_graph()->add_initializer());
    return *this;
  }
  // Adds a node; use "" for an absent optional input or output.
  NodeBuilder node(const std::string& op_type, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& outputs) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op_type);
    for (const auto& s : inputs) n->add_input(s);
    for (const auto& s : outputs) n->add_output(s);
    return NodeBuilder(n);
  }

  onnx::ModelProto& proto() { return model_; }
  // This builder's graph, to use as a subgraph attribute of a node of another builder
  // (its inputs, outputs, initializers and nodes; the opset imports are the outer model's).
  const onnx::GraphProto& graph() const { return model_.graph(); }
  std::string serialize() const {
    std::string bytes;
    model_.SerializeToString(&bytes);
    return bytes;
  }
  std::unique_ptr<Session> session(const SessionOptions& options = {}) const {
    const std::string bytes = serialize();
    return Session::load_from_bytes(bytes.data(), bytes.size(), options);
  }

 private:
  static void set_value_info(onnx::ValueInfoProto* vi, const std::string& name, DType dtype, const Shape& shape,
                             bool rank_known) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int32_t>(dtype));
    if (!rank_known && shape.empty()) return;
    auto* sp = tt->mutable_shape();
    for (size_t i = 0; i < shape.size(); ++i) {
      auto* d = sp->add_dim();
      if (shape[i] >= 0) d->set_dim_value(shape[i]);
      else d->set_dim_param("d" + std::to_string(i));
    }
  }
  onnx::ModelProto model_;
};

// Session options for the fast or the reference kernels.
inline SessionOptions options_for(KernelMode mode, int threads = 1) {
  SessionOptions o;
  o.kernels = mode;
  o.intra_op_num_threads = threads;
  return o;
}

// Runs and returns every graph output as a tensor.
inline std::vector<Tensor> run_all(Session& s, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  std::vector<std::pair<std::string, Value>> f;
  for (const auto& kv : feeds) f.emplace_back(kv.first, Value(kv.second));
  std::vector<Tensor> out;
  for (const Value& v : s.run(f)) out.push_back(v.is_tensor() ? v.tensor() : Tensor());
  return out;
}
inline Tensor run_single(Session& s, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  return run_all(s, feeds).at(0);
}

// Uniform random tensor in [lo, hi) (float32 / float64 / int32 / int64), reproducible by seed.
inline Tensor random_tensor(DType dtype, const Shape& shape, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  Tensor t(dtype, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = dist(rng);
    switch (dtype) {
      case DType::Float32: t.mutable_data<float>()[i] = static_cast<float>(v); break;
      case DType::Float64: t.mutable_data<double>()[i] = v; break;
      case DType::Int32: t.mutable_data<int32_t>()[i] = static_cast<int32_t>(std::floor(v)); break;
      case DType::Int64: t.mutable_data<int64_t>()[i] = static_cast<int64_t>(std::floor(v)); break;
      default: throw Error(ErrorCode::InvalidArgument, "random_tensor: unsupported dtype");
    }
  }
  return t;
}

// gtest assertion: same dtype and shape, and |a - b| <= atol + rtol * |b| everywhere
// (NaN matches NaN, inf matches an equal inf). Reports the first few mismatches.
inline ::testing::AssertionResult tensors_near(const Tensor& actual, const Tensor& expected, double atol = 1e-5,
                                               double rtol = 1e-4) {
  if (actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure() << "dtype " << dtype_name(actual.dtype()) << " vs expected "
                                         << dtype_name(expected.dtype());
  if (actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << "shape " << shape_to_string(actual.shape()) << " vs expected "
                                         << shape_to_string(expected.shape());
  std::ostringstream msg;
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.get_as_double(i), e = expected.get_as_double(i);
    if (std::isnan(a) && std::isnan(e)) continue;
    if (a == e) continue;  // also equal infinities
    const double err = std::fabs(a - e);
    if (!(err <= atol + rtol * std::fabs(e))) {
      if (bad < 5) msg << "\n  [" << i << "] actual " << a << " expected " << e << " (diff " << err << ")";
      ++bad;
    }
    if (err > worst || std::isnan(err)) worst = err;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << actual.numel() << " elements differ (atol " << atol
                                       << ", rtol " << rtol << ", worst " << worst << ")" << msg.str();
}

// Runs `fn` and returns the onnxmini::Error message it threw ("" when it did not throw).
template <typename Fn>
std::string error_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Y = Relu(Gemm(X [3x4], Concat(W1, W2))): at graph_optimization_level >= 1 the Concat
// folds, the Relu fuses into the Gemm, and W1, W2 are dropped (the optimizer and logging tests).
inline ModelBuilder foldable_gemm_model() {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {3, 4});
  mb.initializer("W1", random_tensor(DType::Float32, {4, 2}, 1));
  mb.initializer("W2", random_tensor(DType::Float32, {4, 3}, 2));
  mb.node("Concat", {"W1", "W2"}, {"W"}).name("cat").attr("axis", int64_t{1});
  mb.node("Gemm", {"X", "W"}, {"G"}).name("gemm");
  mb.node("Relu", {"G"}, {"Y"}).name("relu");
  mb.output("Y");
  return mb;
}

}  // namespace test
}  // namespace onnxmini
