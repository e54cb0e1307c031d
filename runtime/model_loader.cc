// ModelProto -> Graph: parse, fold Constant nodes, validate, fix the execution order.
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "kernels/fused_attributes.h"
#include "runtime/graph.h"
#include "runtime/onnx_proto.h"
#include "runtime/tensor_proto.h"

namespace onnxmini {

namespace {

[[noreturn]] void invalid(const std::string& msg) { throw Error(ErrorCode::InvalidModel, msg); }

std::string domain_label(const std::string& d) { return d.empty() ? "ai.onnx" : d; }
std::string canonical_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

std::string node_label(const onnx::NodeProto& n, int index) {
  return fmt::format("node '{}' ({} #{})", n.name(), n.op_type(), index);
}

std::string type_to_string(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      return std::string("tensor(") + dtype_name(static_cast<DType>(t.tensor_type().elem_type())) + ")";
    case onnx::TypeProto::kSequenceType: return "seq(" + type_to_string(t.sequence_type().elem_type()) + ")";
    case onnx::TypeProto::kMapType:
      return std::string("map(") + dtype_name(static_cast<DType>(t.map_type().key_type())) + "," +
             type_to_string(t.map_type().value_type()) + ")";
    case onnx::TypeProto::kOptionalType: return "optional(" + type_to_string(t.optional_type().elem_type()) + ")";
    default: return "unknown";
  }
}

ValueInfo value_info_from_proto(const onnx::ValueInfoProto& v) {
  ValueInfo info;
  info.name = v.name();
  info.type = type_to_string(v.type());
  if (v.type().has_tensor_type()) {
    const auto& tt = v.type().tensor_type();
    info.dtype = static_cast<DType>(tt.elem_type());
    if (tt.has_shape()) {
      info.has_shape = true;
      for (const auto& d : tt.shape().dim()) {
        Dim dim;
        if (d.has_dim_value()) dim.value = d.dim_value();
        else if (d.has_dim_param()) dim.param = d.dim_param();
        info.shape.push_back(dim);
      }
    }
  }
  return info;
}

Attributes parse_attributes(const onnx::NodeProto& n, int index, const std::string& base_dir) {
  Attributes attrs;
  for (const auto& a : n.attribute()) {
    auto type = a.type();
    if (type == onnx::AttributeProto::UNDEFINED) {  // very old models: infer from the filled field
      if (a.has_f()) type = onnx::AttributeProto::FLOAT;
      else if (a.has_i()) type = onnx::AttributeProto::INT;
      else if (a.has_s()) type = onnx::AttributeProto::STRING;
      else if (a.has_t()) type = onnx::AttributeProto::TENSOR;
      else if (a.floats_size()) type = onnx::AttributeProto::FLOATS;
      else if (a.ints_size()) type = onnx::AttributeProto::INTS;
      else if (a.strings_size()) type = onnx::AttributeProto::STRINGS;
    }
    switch (type) {
      case onnx::AttributeProto::FLOAT: attrs.set(a.name(), a.f()); break;
      case onnx::AttributeProto::INT: attrs.set(a.name(), static_cast<int64_t>(a.i())); break;
      case onnx::AttributeProto::STRING: attrs.set(a.name(), a.s()); break;
      case onnx::AttributeProto::TENSOR:
        attrs.set(a.name(), tensor_from_proto(a.t(), base_dir,
                                              fmt::format("{} attribute '{}'", node_label(n, index), a.name())));
        break;
      case onnx::AttributeProto::FLOATS: attrs.set(a.name(), std::vector<float>(a.floats().begin(), a.floats().end())); break;
      case onnx::AttributeProto::INTS: attrs.set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end())); break;
      case onnx::AttributeProto::STRINGS:
        attrs.set(a.name(), std::vector<std::string>(a.strings().begin(), a.strings().end()));
        break;
      default:
        // Graph-valued and sparse attributes are kept out; a kernel that needs one reports it.
        break;
    }
  }
  return attrs;
}

// The value of a Constant node, from whichever attribute it uses.
Tensor constant_value(const onnx::NodeProto& n, int index, const Attributes& attrs) {
  std::string label = node_label(n, index);
  for (const auto& a : n.attribute())
    if (a.name() == "sparse_value") throw Error(ErrorCode::NotImplemented, label + ": sparse_value is not supported");
  if (attrs.has("value")) return attrs.get_tensor("value");
  if (attrs.has("value_float")) return Tensor::scalar<float>(attrs.get_float("value_float"));
  if (attrs.has("value_int")) return Tensor::scalar<int64_t>(attrs.get_int("value_int"));
  if (attrs.has("value_floats")) {
    auto v = attrs.get_floats("value_floats");
    return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
  }
  if (attrs.has("value_ints")) {
    auto v = attrs.get_ints("value_ints");
    return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
  }
  if (attrs.has("value_string")) return Tensor::scalar<std::string>(attrs.get_string("value_string"));
  if (attrs.has("value_strings")) {
    auto v = attrs.get_strings("value_strings");
    return Tensor::from_vector<std::string>({static_cast<int64_t>(v.size())}, v);
  }
  invalid(label + ": Constant has no value attribute");
}

// onnxruntime's default execution order, so that traces line up node for node:
// a depth-first walk from the leaf nodes (nodes nobody consumes) towards the
// inputs, emitting a node after all its producers. Among several producers the
// one with the highest node index is walked first; leaves likewise.
std::vector<int> execution_order(const std::vector<std::vector<int>>& producers_of_node,
                                 const std::vector<bool>& is_leaf) {
  const int n = static_cast<int>(producers_of_node.size());
  std::vector<int> order;
  std::vector<bool> visited(n, false);
  std::vector<std::pair<int, bool>> stack;  // (node, emit-on-pop)
  for (int i = 0; i < n; ++i)
    if (is_leaf[i]) stack.emplace_back(i, false);
  while (!stack.empty()) {
    auto [node, emit] = stack.back();
    stack.pop_back();
    if (emit) {
      order.push_back(node);
      continue;
    }
    if (visited[node]) continue;
    visited[node] = true;
    stack.emplace_back(node, true);
    std::vector<int> prods = producers_of_node[node];
    std::sort(prods.begin(), prods.end());
    prods.erase(std::unique(prods.begin(), prods.end()), prods.end());
    for (int p : prods)
      if (!visited[p]) stack.emplace_back(p, false);
  }
  return order;
}

}  // namespace

std::string read_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::IoError, "cannot open model file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  if (bytes.empty()) throw Error(ErrorCode::InvalidModel, "model file '" + path + "' is empty");
  return bytes;
}

namespace {

// Names visible from a graph's enclosing scopes (empty for the main graph).
using OuterScope = std::set<std::string>;

struct GraphLoader {
  const std::map<std::string, int64_t>& opsets;
  const std::string& base_dir;

  // Parses `gp` into `g`. `outer` holds the names the enclosing graphs define (null for the main graph).
  void load(const onnx::GraphProto& gp, const OuterScope* outer, Graph& g, const std::string& where) const;
};

void GraphLoader::load(const onnx::GraphProto& gp, const OuterScope* outer, Graph& g, const std::string& where) const {
  g.graph_name = gp.name();
  auto intern = [&](const std::string& name) {
    auto it = g.value_ids.find(name);
    if (it != g.value_ids.end()) return it->second;
    int id = static_cast<int>(g.value_names.size());
    g.value_names.push_back(name);
    g.value_ids.emplace(name, id);
    return id;
  };
  // A name this graph does not define: a value of an enclosing graph, or an error.
  auto outer_value = [&](const std::string& name) -> int {
    if (!outer || !outer->count(name)) return -1;
    const bool known = g.value_ids.count(name) != 0;
    const int id = intern(name);
    if (!known) g.outer_ids.push_back(id);
    return id;
  };

  // Producers: initializers, graph inputs, node outputs. Each name has one producer.
  std::unordered_map<std::string, std::string> producer;  // value -> description
  for (const auto& init : gp.initializer()) {
    if (init.name().empty()) invalid(where + "an initializer has no name");
    if (producer.count(init.name())) invalid(where + "initializer '" + init.name() + "' is defined twice");
    int id = intern(init.name());
    g.constants[id] = tensor_from_proto(init, base_dir, where + "initializer '" + init.name() + "'");
    producer[init.name()] = "initializer";
  }
  for (const auto& vi : gp.input()) {
    ValueInfo info = value_info_from_proto(vi);
    int id = intern(vi.name());
    if (producer.count(vi.name())) {
      if (producer[vi.name()] != "initializer") invalid(where + "graph input '" + vi.name() + "' is declared twice");
      g.overridable[id] = info;  // initializer that is also an input
      producer[vi.name()] = "initializer";
      continue;
    }
    producer[vi.name()] = "graph input";
    g.inputs.push_back(info);
    g.input_ids.push_back(id);
  }
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& n = gp.node(i);
    for (const auto& out : n.output()) {
      if (out.empty()) continue;
      if (producer.count(out))
        invalid(fmt::format("{}{}: output '{}' is already produced by {}", where, node_label(n, i), out, producer[out]));
      producer[out] = fmt::format("node '{}'", n.name());
    }
  }
  // What a subgraph of this graph may read: everything defined here, and what we may read.
  OuterScope scope_for_subgraphs;
  bool has_subgraphs = false;
  for (const auto& n : gp.node())
    for (const auto& a : n.attribute())
      has_subgraphs = has_subgraphs || a.type() == onnx::AttributeProto::GRAPH || a.has_g();
  if (has_subgraphs) {
    if (outer) scope_for_subgraphs = *outer;
    for (const auto& [name, what] : producer) scope_for_subgraphs.insert(name);
  }

  // Nodes: Constant nodes become constants; others are kept with their original index.
  std::vector<GraphNode> nodes;
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& n = gp.node(i);
    std::string domain = canonical_domain(n.domain());
    auto op = opsets.find(domain);
    if (op == opsets.end())
      invalid(fmt::format("{}{}: domain '{}' is not imported by the model (opset_import)", where, node_label(n, i),
                          domain_label(domain)));
    Attributes attrs = parse_attributes(n, i, base_dir);
    if (domain == "com.microsoft" && n.op_type() == "FusedConv") {
      // onnxruntime's Conv + activation, as the model writer saves a fused Conv.
      const auto onnx = opsets.find("");
      const std::string act = attrs.get_string("activation", "");
      const auto kind = fused_activation_from_name(act);
      // Input 3 (Z, optional) is a residual added before the activation; the activation
      // is optional when Z is there (onnxruntime's schema: both optional).
      const bool has_z = n.input_size() > 3 && !n.input(3).empty();
      const bool act_ok = kind == FusedActivationKind::Relu || kind == FusedActivationKind::Sigmoid ||
                          kind == FusedActivationKind::Clip || (act.empty() && has_z);
      if (onnx == opsets.end() || n.input_size() > 4 || !act_ok)
        throw Error(ErrorCode::NotImplemented,
                    fmt::format("{}{}: com.microsoft FusedConv is supported with activation Relu, Sigmoid or Clip "
                                "(or none with a residual Z), at most 4 inputs and an ai.onnx opset import "
                                "(got activation '{}', {} inputs)",
                                where, node_label(n, i), act, n.input_size()));
      Attributes conv;
      for (const auto& [name, item] : attrs.items())
        if (name != "activation" && name != "activation_params") conv.set(name, item);
      if (!act.empty()) conv.set(fused_attr::kActivation, act);
      if (has_z) conv.set(fused_attr::kResidual, int64_t{1});
      if (kind == FusedActivationKind::Clip)
        conv.set(fused_attr::kActivationParams, attrs.get_floats("activation_params"));
      attrs = std::move(conv);
      domain.clear();
      op = onnx;
    }
    if (n.op_type() == "Constant" && domain.empty()) {
      if (n.output_size() != 1) invalid(where + node_label(n, i) + ": Constant must have one output");
      g.constants[intern(n.output(0))] = constant_value(n, i, attrs);
      continue;
    }
    GraphNode node;
    node.name = n.name();
    node.op_type = domain.empty() && n.op_type() == "FusedConv" ? "Conv" : n.op_type();
    node.domain = domain;
    node.opset = static_cast<int>(op->second);
    node.index = i;
    node.attrs = std::move(attrs);
    for (const auto& in : n.input()) {
      if (in.empty()) {
        node.inputs.push_back(-1);
        continue;
      }
      const int id = producer.count(in) ? intern(in) : outer_value(in);
      if (id < 0)
        invalid(fmt::format("{}node '{}' ({}): input '{}' is produced by no node, graph input or initializer", where,
                            node.name, node.op_type, in));
      node.inputs.push_back(id);
    }
    for (const auto& out : n.output()) node.outputs.push_back(out.empty() ? -1 : intern(out));
    for (const auto& a : n.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPHS)
        throw Error(ErrorCode::NotImplemented,
                    fmt::format("{}{}: attribute '{}' holds a list of graphs, which is not supported", where,
                                node_label(n, i), a.name()));
      if (a.type() != onnx::AttributeProto::GRAPH && !(a.type() == onnx::AttributeProto::UNDEFINED && a.has_g()))
        continue;
      auto body = std::make_shared<Graph>();
      body->ir_version = g.ir_version;
      body->opsets = g.opsets;
      load(a.g(), &scope_for_subgraphs, *body,
           fmt::format("{}{} attribute '{}': ", where, node_label(n, i), a.name()));
      // The body's outer names become this node's implicit inputs: values of this
      // graph, or of our own enclosing scope (then read from there in turn).
      for (int oid : body->outer_ids) {
        const std::string& name = body->value_names[oid];
        const int id = producer.count(name) ? intern(name) : outer_value(name);
        if (std::find(node.implicit_inputs.begin(), node.implicit_inputs.end(), id) == node.implicit_inputs.end())
          node.implicit_inputs.push_back(id);
      }
      node.subgraphs.emplace_back(a.name(), std::move(body));
    }
    nodes.push_back(std::move(node));
  }

  for (const auto& vi : gp.output()) {
    const int id = producer.count(vi.name()) ? intern(vi.name()) : outer_value(vi.name());
    if (id < 0) invalid(where + "graph output '" + vi.name() + "' is produced by nothing");
    g.outputs.push_back(value_info_from_proto(vi));
    g.output_ids.push_back(id);
  }

  // Edges between nodes (implicit inputs included), a cycle check (Kahn), then onnxruntime's order.
  std::unordered_map<int, int> producing_node;  // value id -> position in `nodes`
  for (size_t k = 0; k < nodes.size(); ++k)
    for (int id : nodes[k].outputs)
      if (id >= 0) producing_node[id] = static_cast<int>(k);
  const size_t nn = nodes.size();
  std::vector<std::vector<int>> producers_of(nn), consumers_of(nn);
  for (size_t k = 0; k < nn; ++k) {
    auto edge_from = [&](int id) {
      auto it = producing_node.find(id);
      if (id >= 0 && it != producing_node.end()) {
        producers_of[k].push_back(it->second);
        consumers_of[it->second].push_back(static_cast<int>(k));
      }
    };
    for (int id : nodes[k].inputs) edge_from(id);
    for (int id : nodes[k].implicit_inputs) edge_from(id);
  }
  {
    std::vector<int> indeg(nn);
    std::vector<int> ready;
    for (size_t k = 0; k < nn; ++k) {
      indeg[k] = static_cast<int>(producers_of[k].size());
      if (!indeg[k]) ready.push_back(static_cast<int>(k));
    }
    size_t seen = 0;
    while (!ready.empty()) {
      int k = ready.back();
      ready.pop_back();
      ++seen;
      for (int c : consumers_of[k])
        if (--indeg[c] == 0) ready.push_back(c);
    }
    if (seen != nn) {
      for (size_t k = 0; k < nn; ++k)
        if (indeg[k] > 0)
          invalid(fmt::format("{}graph has a cycle: node '{}' ({}) depends on its own output", where, nodes[k].name,
                              nodes[k].op_type));
    }
  }
  // Statically known element types (for creation-time dtype checks).
  auto note_dtype = [&](const onnx::ValueInfoProto& vi) {
    auto it = g.value_ids.find(vi.name());
    if (it != g.value_ids.end() && vi.type().has_tensor_type() && vi.type().tensor_type().elem_type() != 0)
      g.known_dtypes[it->second] = static_cast<DType>(vi.type().tensor_type().elem_type());
  };
  for (const auto& vi : gp.value_info()) note_dtype(vi);
  // Declarations, for the optimizer (fixed shapes) and the model writer (types as declared).
  auto keep_declared = [&](const onnx::ValueInfoProto& vi) {
    auto it = g.value_ids.find(vi.name());
    if (it != g.value_ids.end() && vi.has_type()) g.declared_types[it->second] = vi.type().SerializeAsString();
  };
  for (const auto& vi : gp.value_info()) {
    auto it = g.value_ids.find(vi.name());
    if (it == g.value_ids.end() || g.value_infos.count(it->second)) continue;
    keep_declared(vi);
    g.value_info_ids.push_back(it->second);
    g.value_infos[it->second] = value_info_from_proto(vi);
  }
  for (const auto& vi : gp.input()) keep_declared(vi);
  for (const auto& vi : gp.output()) keep_declared(vi);
  for (const auto& vi : gp.output()) note_dtype(vi);
  for (const auto& vi : gp.input()) note_dtype(vi);
  for (const auto& [id, t] : g.constants)
    if (!g.overridable.count(id)) g.known_dtypes[id] = t.dtype();

  std::vector<bool> is_leaf(nn);
  for (size_t k = 0; k < nn; ++k) is_leaf[k] = consumers_of[k].empty();
  for (int k : execution_order(producers_of, is_leaf)) g.nodes.push_back(std::move(nodes[k]));
}

}  // namespace

Graph load_graph(const void* data, size_t size, const std::string& base_dir) {
  if (size == 0) invalid("model is empty (0 bytes)");
  onnx::ModelProto model;
  {
    google::protobuf::io::CodedInputStream stream(static_cast<const uint8_t*>(data), static_cast<int>(size));
    stream.SetTotalBytesLimit(INT32_MAX);
    if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
      invalid(fmt::format("not a valid ONNX model: protobuf parsing failed ({} bytes; truncated or not ONNX)", size));
  }
  if (!model.has_graph()) invalid("not a valid ONNX model: it has no graph");
  if (model.ir_version() <= 0) invalid("not a valid ONNX model: ir_version is missing");

  Graph g;
  g.ir_version = model.ir_version();
  g.producer_name = model.producer_name();
  g.producer_version = model.producer_version();
  g.doc_string = model.doc_string();
  g.domain = model.domain();
  g.model_version = model.model_version();
  g.graph_doc_string = model.graph().doc_string();
  for (const auto& p : model.metadata_props()) g.metadata_props.emplace_back(p.key(), p.value());

  std::map<std::string, int64_t> opsets;
  for (const auto& o : model.opset_import()) {
    opsets[canonical_domain(o.domain())] = o.version();
    g.opsets.emplace_back(canonical_domain(o.domain()), o.version());
  }
  if (model.opset_import_size() == 0) invalid("not a valid ONNX model: no opset_import");
  GraphLoader{opsets, base_dir}.load(model.graph(), nullptr, g, "");
  return g;
}

}  // namespace onnxmini
