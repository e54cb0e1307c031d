#include "runtime/explain.h"

#include <optional>

#include "onnxmini/error.h"

namespace onnxmini {

namespace {

struct Explainer {
  const SessionOptions& options;
  int threads;
  const std::map<std::string, std::vector<ExplainInput>>& observed;
  std::vector<KernelExplanation> out;

  // Input slot i of node k as known now: observed in a run, a constant, or a
  // main-graph input declared with a static shape.
  std::optional<ExplainInput> known_input(const ExecutionPlan& plan, size_t k, size_t i, bool main_graph) const {
    const KernelInfo& info = plan.infos[k];
    auto seen = observed.find(plan.profiled[k].event_name);
    if (seen != observed.end()) {
      if (i < seen->second.size() && seen->second[i].has_shape) return seen->second[i];
      return std::nullopt;
    }
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
    for (size_t i = 0; i < info.num_inputs; ++i) {
      if (!info.has_input(i)) continue;
      if (std::optional<ExplainInput> in = known_input(plan, k, i, depth == 0)) {
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
      } catch (const Error& err) {
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

}  // namespace onnxmini
