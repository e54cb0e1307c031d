#include "runtime/execution_plan.h"

#include <fmt/format.h>

#include "runtime/executor.h"
#include "runtime/node_kernel.h"
#include "runtime/profiler_feed.h"

namespace onnxmini {

std::unique_ptr<ExecutionPlan> build_plan(const Graph& g, const SessionOptions& options, const PlanOptions& po,
                                          const Graph* parent, const ExecutionPlan* parent_plan) {
  auto plan = std::make_unique<ExecutionPlan>();
  plan->graph = &g;
  const size_t nvalues = g.value_names.size();
  const size_t nnodes = g.nodes.size();

  plan->constants.resize(nvalues);
  plan->is_constant.assign(nvalues, false);
  for (const auto& [id, t] : g.constants)
    if (!g.overridable.count(id)) {
      plan->constants[id] = Value(t);
      plan->is_constant[id] = true;
    }

  if (parent) {
    for (int id : g.outer_ids) {
      const int pid = parent->value_id(g.value_names[id]);
      if (pid < 0)  // the loader guarantees it; a rewrite that broke it is a bug worth naming
        throw Error(ErrorCode::RuntimeError, fmt::format("subgraph '{}' reads '{}', which its enclosing graph lacks",
                                                         g.graph_name, g.value_names[id]));
      plan->outer_source_ids.push_back(pid);
      if (parent_plan && parent_plan->is_constant[pid] && !plan->is_constant[id]) {
        plan->constants[id] = parent_plan->constants[pid];
        plan->is_constant[id] = true;
      } else {
        plan->outer_bindings.emplace_back(id, pid);
      }
    }
  }

  // Unsupported ops fail here, before any kernel is created, naming node, op, domain and opset.
  plan->registrations.resize(nnodes, nullptr);
  plan->infos.reserve(nnodes);
  for (size_t k = 0; k < nnodes; ++k) {
    const GraphNode& node = g.nodes[k];
    if (po.tolerate_kernel_errors) {
      plan->registrations[k] = KernelRegistry::instance().find(node.domain, node.op_type, node.opset);
    } else {
      plan->registrations[k] = &find_kernel(node);
    }
    plan->infos.push_back(make_kernel_info(g, node, options));
    // Outer-scope constants (subgraphs): constant inputs as well, as in the enclosing graph.
    KernelInfo& info = plan->infos.back();
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int id = node.inputs[i];
      if (id < 0 || info.constant_inputs[i] || !plan->is_constant[id] || !plan->constants[id].is_tensor()) continue;
      info.constant_inputs[i] = &plan->constants[id].tensor();
      info.input_dtypes[i] = plan->constants[id].tensor().dtype();
    }
  }
  // Bodies first: their kernels are created with the plan, and the node's
  // KernelInfo hands them to its kernel.
  for (size_t k = 0; k < nnodes; ++k)
    for (const auto& [attr, body] : g.nodes[k].subgraphs) {
      plan->bodies.push_back(std::make_unique<SubgraphPlan>(body, g, *plan, options));
      plan->infos[k].subgraphs.emplace_back(attr, plan->bodies.back().get());
    }
  // Kernels are created once `infos` stops growing: they may keep references to their KernelInfo.
  plan->kernels.resize(nnodes);
  plan->profiled.resize(nnodes);
  for (size_t k = 0; k < nnodes; ++k) {
    const GraphNode& node = g.nodes[k];
    const KernelRegistration* reg = plan->registrations[k];
    if (reg) {
      try {
        plan->kernels[k] = create_kernel(*reg, plan->infos[k]);
      } catch (const Error&) {
        if (!po.tolerate_kernel_errors) throw;
      }
    }
    ProfiledNode& pn = plan->profiled[k];
    pn.event_name = node.name.empty() ? fmt::format("{}_{}", node.op_type, node.index) : node.name;
    pn.op_type = node.op_type;
    pn.node_index = node.index;
    for (int id : node.inputs) pn.input_is_parameter.push_back(id >= 0 && plan->is_constant[id]);
    pn.kernel_name = reg ? reg->kernel : "";
  }

  // Release points: the last node (in execution order) reading each value.
  plan->is_graph_output.assign(nvalues, false);
  for (int id : g.output_ids) plan->is_graph_output[id] = true;
  plan->release_after.resize(nnodes);
  if (!po.keep_all_values) {
    std::vector<int> last_reader(nvalues, -1);
    for (size_t k = 0; k < nnodes; ++k) {
      for (int id : g.nodes[k].inputs)
        if (id >= 0) last_reader[id] = static_cast<int>(k);
      for (int id : g.nodes[k].implicit_inputs) last_reader[id] = static_cast<int>(k);
    }
    for (size_t k = 0; k < nnodes; ++k)
      for (int id : g.nodes[k].outputs)  // produced and never read: released at once
        if (id >= 0 && last_reader[id] < 0) last_reader[id] = static_cast<int>(k);
    for (size_t id = 0; id < nvalues; ++id)
      if (last_reader[id] >= 0 && !plan->is_graph_output[id] && !plan->is_constant[id])
        plan->release_after[last_reader[id]].push_back(static_cast<int>(id));
  }
  return plan;
}

SubgraphPlan::SubgraphPlan(std::shared_ptr<const Graph> graph, const Graph& parent, const ExecutionPlan& parent_plan,
                           const SessionOptions& options)
    : graph_(std::move(graph)) {
  plan_ = build_plan(*graph_, options, PlanOptions{}, &parent, &parent_plan);
}

void SubgraphPlan::run(KernelContext& ctx, const std::vector<Value>& inputs, std::vector<Value>& outputs) const {
  ExecutionScope* outer = ctx.scope();
  if (!outer) ctx.fail("a subgraph can only run inside an executor");
  const Graph& g = *graph_;
  if (inputs.size() != g.input_ids.size())
    ctx.fail("body '{}' takes {} inputs, got {}", g.graph_name, g.input_ids.size(), inputs.size());
  ProfiledRun* trace = outer->run_state().trace;
  const int64_t begin_ns = trace ? Profiler::now_ns() : 0;
  ExecutionScope frame(*plan_, outer->run_state(), outer);
  frame.bind_outer_values();
  for (size_t i = 0; i < inputs.size(); ++i) frame.set(g.input_ids[i], inputs[i]);
  frame.run_all();
  outputs.resize(g.output_ids.size());
  for (size_t i = 0; i < g.output_ids.size(); ++i) {
    outputs[i] = frame.value(g.output_ids[i]);
    if (outputs[i].is_none())
      ctx.fail("body '{}' did not produce its output {} '{}'", g.graph_name, i, g.outputs[i].name);
  }
  // onnxruntime writes one SequentialExecutor::Execute per body execution (docs/profiler.md, Control flow).
  if (trace) trace->subgraph_done(begin_ns, Profiler::now_ns());
}

}  // namespace onnxmini
