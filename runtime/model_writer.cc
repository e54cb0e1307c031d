// Graph -> onnx.ModelProto (see model_writer.h).
#include "runtime/model_writer.h"

#include <fmt/format.h>

#include <fstream>
#include <set>

#include "kernels/fused_attributes.h"
#include "runtime/onnx_proto.h"
#include "runtime/tensor_proto.h"

namespace onnxmini {
namespace {

// onnxmini's private attributes all start with '_' (kernels/fused_attributes.h); ONNX's never do.
bool private_attribute(const std::string& name) { return !name.empty() && name[0] == '_'; }

std::string node_label(const GraphNode& n) { return fmt::format("node '{}' ({})", n.name, n.op_type); }

void write_attribute(const GraphNode& n, const std::string& name, const Attributes::Item& item,
                     onnx::AttributeProto* a) {
  if (private_attribute(name))
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("{}: attribute '{}' is an onnxmini fusion with no ONNX form; it cannot be saved",
                            node_label(n), name));
  a->set_name(name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          a->set_type(onnx::AttributeProto::INT), a->set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          a->set_type(onnx::AttributeProto::FLOAT), a->set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          a->set_type(onnx::AttributeProto::STRING), a->set_s(v);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          a->set_type(onnx::AttributeProto::TENSOR), tensor_to_proto(v, a->mutable_t());
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          a->set_type(onnx::AttributeProto::INTS);
          for (int64_t x : v) a->add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          a->set_type(onnx::AttributeProto::FLOATS);
          for (float x : v) a->add_floats(x);
        } else {
          a->set_type(onnx::AttributeProto::STRINGS);
          for (const auto& x : v) a->add_strings(x);
        }
      },
      item);
}

// The declared type of value `id` when the model had one, else a tensor type from `info`.
void write_value_info(const Graph& g, int id, const ValueInfo* info, onnx::ValueInfoProto* vi) {
  vi->set_name(g.value_names[id]);
  auto declared = g.declared_types.find(id);
  if (declared != g.declared_types.end() && vi->mutable_type()->ParseFromString(declared->second)) return;
  vi->clear_type();
  if (!info || info->type.rfind("tensor(", 0) != 0) return;  // type unknown: left out, as ONNX allows
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(info->dtype));
  if (!info->has_shape) return;
  auto* shape = tt->mutable_shape();
  for (const Dim& d : info->shape) {
    auto* dim = shape->add_dim();
    if (d.value >= 0) dim->set_dim_value(d.value);
    else if (!d.param.empty()) dim->set_dim_param(d.param);
  }
}

// onnxruntime's contrib op for a Conv with an activation in its epilogue (the model loader
// reads it back into the same fused Conv).
constexpr char kContribDomain[] = "com.microsoft";

// A Conv whose only private attributes are what onnxruntime's FusedConv has: an activation
// (Relu, Sigmoid, Clip) and / or a residual Z (input 3).
bool fused_conv_form(const GraphNode& n) {
  if (!n.domain.empty() || n.op_type != "Conv") return false;
  const bool residual = n.attrs.get_int(fused_attr::kResidual, 0) != 0;
  if (!n.attrs.has(fused_attr::kActivation) && !residual) return false;
  if (n.attrs.has(fused_attr::kActivation)) {
    const auto kind = fused_activation_from_name(n.attrs.get_string(fused_attr::kActivation));
    if (kind != FusedActivationKind::Relu && kind != FusedActivationKind::Sigmoid && kind != FusedActivationKind::Clip)
      return false;
  }
  for (const auto& [name, item] : n.attrs.items())
    if (private_attribute(name) && name != fused_attr::kActivation && name != fused_attr::kActivationParams &&
        name != fused_attr::kResidual)
      return false;
  return true;
}

bool uses_fused_conv(const Graph& g) {
  for (const GraphNode& n : g.nodes) {
    if (fused_conv_form(n)) return true;
    for (const auto& [name, body] : n.subgraphs)
      if (uses_fused_conv(*body)) return true;
  }
  return false;
}

void write_node(const GraphNode& n, onnx::NodeProto* np) {
  if (fused_conv_form(n)) {
    np->set_op_type("FusedConv");
    np->set_domain(kContribDomain);
    for (const auto& [name, item] : n.attrs.items()) {
      if (name == fused_attr::kActivation) {
        auto* a = np->add_attribute();
        a->set_name("activation"), a->set_type(onnx::AttributeProto::STRING), a->set_s(std::get<std::string>(item));
      } else if (name == fused_attr::kActivationParams) {
        auto* a = np->add_attribute();
        a->set_name("activation_params"), a->set_type(onnx::AttributeProto::FLOATS);
        for (float x : std::get<std::vector<float>>(item)) a->add_floats(x);
      } else if (name == fused_attr::kResidual) {
        continue;  // Z is input 3, as FusedConv has it
      } else {
        write_attribute(n, name, item, np->add_attribute());
      }
    }
    return;
  }
  np->set_op_type(n.op_type);
  if (!n.domain.empty()) np->set_domain(n.domain);
  for (const auto& [name, item] : n.attrs.items()) write_attribute(n, name, item, np->add_attribute());
}

void write_graph(const Graph& g, onnx::GraphProto* gp) {
  gp->set_name(g.graph_name);
  if (!g.graph_doc_string.empty()) gp->set_doc_string(g.graph_doc_string);
  auto name_of = [&](int id) { return id >= 0 ? g.value_names[id] : std::string(); };

  for (size_t i = 0; i < g.inputs.size(); ++i) write_value_info(g, g.input_ids[i], &g.inputs[i], gp->add_input());
  for (const auto& [id, info] : g.overridable) write_value_info(g, id, &info, gp->add_input());
  for (const auto& [id, t] : g.constants) {
    onnx::TensorProto* p = gp->add_initializer();
    tensor_to_proto(t, p);
    p->set_name(g.value_names[id]);
  }

  std::set<int> referenced(g.output_ids.begin(), g.output_ids.end());
  for (const GraphNode& n : g.nodes) {
    onnx::NodeProto* np = gp->add_node();
    np->set_name(n.name);
    write_node(n, np);
    for (int id : n.inputs) np->add_input(name_of(id)), referenced.insert(id);
    for (int id : n.outputs) np->add_output(name_of(id)), referenced.insert(id);
    for (const auto& [name, body] : n.subgraphs) {
      onnx::AttributeProto* a = np->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::GRAPH);
      write_graph(*body, a->mutable_g());
    }
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) write_value_info(g, g.output_ids[i], &g.outputs[i], gp->add_output());
  // value_info of the values still in the graph (fused-away intermediates are gone).
  for (int id : g.value_info_ids)
    if (referenced.count(id) && !g.constants.count(id)) write_value_info(g, id, &g.value_infos.at(id), gp->add_value_info());
}

}  // namespace

std::string write_model(const Graph& g) {
  onnx::ModelProto model;
  // IR 3 wanted every initializer listed as a graph input; the fused weights are not, so
  // an older model is written as IR 4 (same meaning otherwise).
  model.set_ir_version(std::max<int64_t>(g.ir_version, 4));
  if (!g.producer_name.empty()) model.set_producer_name(g.producer_name);
  if (!g.producer_version.empty()) model.set_producer_version(g.producer_version);
  if (!g.domain.empty()) model.set_domain(g.domain);
  if (g.model_version) model.set_model_version(g.model_version);
  if (!g.doc_string.empty()) model.set_doc_string(g.doc_string);
  for (const auto& [domain, version] : g.opsets) {
    auto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  bool contrib_imported = false;
  for (const auto& [domain, version] : g.opsets) contrib_imported = contrib_imported || domain == kContribDomain;
  if (!contrib_imported && uses_fused_conv(g)) {
    auto* op = model.add_opset_import();
    op->set_domain(kContribDomain);
    op->set_version(1);
  }
  for (const auto& [key, value] : g.metadata_props) {
    auto* p = model.add_metadata_props();
    p->set_key(key);
    p->set_value(value);
  }
  write_graph(g, model.mutable_graph());
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    throw Error(ErrorCode::RuntimeError,
                fmt::format("the model could not be serialized ({} bytes of protobuf: over protobuf's 2 GiB limit?)",
                            model.ByteSizeLong()));
  return bytes;
}

void save_model(const Graph& g, const std::string& path) {
  const std::string bytes = write_model(g);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorCode::IoError, fmt::format("cannot write the optimized model to '{}'", path));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error(ErrorCode::IoError, fmt::format("writing the optimized model to '{}' failed", path));
}

}  // namespace onnxmini
