#include "runtime/explain.h"

#include <exception>
#include <optional>

#include <nlohmann/json.hpp>

#include "onnxmini/error.h"
#include "onnxmini/explain.h"
#include "onnxmini/profile.h"

namespace onnxmini {

namespace {

struct Explainer {
  const SessionOptions& options;
  int threads;
  const std::map<std::string, std::vector<ExplainInput>>& observed;
  std::vector<KernelExplanation> out;

  // Input slot i of node k as known before a run: a constant, or a main-graph
  // input declared with a static shape.
  std::optional<ExplainInput> static_input(const ExecutionPlan& plan, size_t k, size_t i, bool main_graph) const {
    const KernelInfo& info = plan.infos[k];
    if (const Tensor* c = info.constant_input(i)) return ExplainInput{c->dtype(), true, c->shape()};
    if (!main_graph) return std::nullopt;
    const Graph& g = *plan.graph;
    const int id = i < g.nodes[k].inputs.size() ? g.nodes[k].inputs[i] : -1;
    for (size_t j = 0; j < g.inputs.size() && id >= 0; ++j) {
      if (g.input_ids[j] != id || !g.inputs[j].has_shape) continue;
      ExplainInput in;
      in.dtype = i < info.input_dtypes.size() ? info.input_dtypes[i] : DType::Undefined;
      for (const Dim& d : g.inputs[j].shape) {
        if (d.value < 0) return std::nullopt;  // a symbolic dimension: known only at run time
        in.shape.push_back(d.value);
      }
      in.has_shape = true;
      return in;
    }
    return std::nullopt;
  }

  // The inputs of node k by slot. Observed ones list the present tensor inputs in
  // order (absent optional slots skipped, as a profile's input_type_shape does);
  // when their count does not match the node's present slots (a sequence input),
  // the node falls back to what is known statically.
  std::vector<std::optional<ExplainInput>> known_inputs(const ExecutionPlan& plan, size_t k, bool main_graph) const {
    const KernelInfo& info = plan.infos[k];
    std::vector<std::optional<ExplainInput>> by_slot(info.num_inputs);
    auto seen = observed.find(plan.profiled[k].event_name);
    size_t present = 0;
    for (size_t i = 0; i < info.num_inputs; ++i) present += info.has_input(i);
    if (seen != observed.end() && seen->second.size() == present) {
      size_t next = 0;
      for (size_t i = 0; i < info.num_inputs; ++i)
        if (info.has_input(i)) {
          const ExplainInput& in = seen->second[next++];
          if (in.has_shape) by_slot[i] = in;
        }
      return by_slot;
    }
    for (size_t i = 0; i < info.num_inputs; ++i)
      if (info.has_input(i)) by_slot[i] = static_input(plan, k, i, main_graph);
    return by_slot;
  }

  void node(const ExecutionPlan& plan, size_t k, int depth, const std::string& body) {
    const GraphNode& gn = plan.graph->nodes[k];
    KernelExplanation e;
    e.node = plan.profiled[k].event_name;
    e.op_type = gn.op_type;
    e.kernel = plan.registrations[k] ? plan.registrations[k]->kernel : "(none)";
    e.depth = depth;
    e.body = body;
    e.threads = threads;
    // The kernel sees the dtypes observed or known here, as it would at run time.
    KernelInfo info = plan.infos[k];
    std::vector<ExplainInput> inputs(info.num_inputs);
    std::vector<const Shape*> shapes(info.num_inputs, nullptr);
    e.shapes_known = true;
    const std::vector<std::optional<ExplainInput>> known = known_inputs(plan, k, depth == 0);
    for (size_t i = 0; i < info.num_inputs; ++i) {
      if (!info.has_input(i)) continue;
      if (const std::optional<ExplainInput>& in = known[i]) {
        inputs[i] = *in;
        shapes[i] = &inputs[i].shape;
        if (i < info.input_dtypes.size() && in->dtype != DType::Undefined) info.input_dtypes[i] = in->dtype;
      } else {
        e.shapes_known = false;
      }
    }
    if (options.kernels == KernelMode::Reference) {
      e.variant = "reference";
      e.isa = "portable";
    } else if (const Kernel* kernel = plan.kernels[k].get()) {
      try {
        const KernelPlan p = kernel->describe(info, shapes);
        if (p.variant) {
          e.variant = *p.variant ? p.variant : e.kernel;  // kOnlyPath: the kernel's one path
          e.isa = p.isa ? p.isa : "portable";
          e.blocking = p.blocking;
        }
      } catch (const std::exception& err) {  // bad shapes: the run would fail the same way
        e.note = err.what();
      }
    }
    if (e.variant.empty()) {
      e.variant = "chosen at run time";
      if (e.note.empty() && !e.shapes_known) e.note = "input shapes unknown before a run";
    }
    out.push_back(std::move(e));
    for (const auto& [attr, sub] : plan.infos[k].subgraphs) {
      const auto* body_plan = dynamic_cast<const SubgraphPlan*>(sub);
      if (body_plan) graph(body_plan->plan(), depth + 1, plan.profiled[k].event_name + "." + attr);
    }
  }

  void graph(const ExecutionPlan& plan, int depth, const std::string& body) {
    for (size_t k = 0; k < plan.graph->nodes.size(); ++k) node(plan, k, depth, body);
  }
};

}  // namespace

std::vector<KernelExplanation> explain_plan(const ExecutionPlan& plan, const SessionOptions& options, int threads,
                                            const std::map<std::string, std::vector<ExplainInput>>& observed) {
  Explainer x{options, threads, observed, {}};
  x.graph(plan, 0, "");
  return std::move(x.out);
}

std::map<std::string, std::vector<ExplainInput>> observed_inputs(const std::string& trace_path) {
  const profile::Trace trace = profile::read_trace(trace_path);
  std::map<std::string, std::vector<ExplainInput>> out;
  for (const profile::KernelEvent& k : trace.kernels) {
    if (k.input_shapes.empty() || out.count(k.node)) continue;  // the first execution of a body node
    const nlohmann::json list = nlohmann::json::parse(k.input_shapes, nullptr, false);
    if (!list.is_array()) continue;
    std::vector<ExplainInput> inputs;
    for (const nlohmann::json& entry : list) {  // {"float": [1, 3, 224, 224]}
      ExplainInput in;
      if (entry.is_object() && entry.size() == 1 && entry.begin().value().is_array()) {
        in.dtype = dtype_from_name(entry.begin().key());
        for (const nlohmann::json& d : entry.begin().value())
          if (d.is_number_integer()) in.shape.push_back(d.get<int64_t>());
        in.has_shape = in.shape.size() == entry.begin().value().size();
      }
      inputs.push_back(std::move(in));
    }
    out.emplace(k.node, std::move(inputs));
  }
  return out;
}

}  // namespace onnxmini
