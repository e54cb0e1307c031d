// The execution plan of one graph: what the executor needs to run it, built once
// at session creation (and once for each If/Loop/Scan body, recursively):
//   - the kernel of every node, in execution order, with its KernelInfo;
//   - a slot per value (the graph's value ids), the constants by slot;
//   - the release point of each value: the node after which nothing reads it;
//   - for a subgraph, where each outer-scope value comes from in the enclosing graph;
//   - the plans of the bodies of its control-flow nodes (owned, handed to the
//     kernels as `Subgraph` handles).
// A plan is immutable once built and shared by concurrent runs.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/registry.h"
#include "onnxmini/session.h"
#include "profiler/profiler.h"
#include "runtime/graph.h"

namespace onnxmini {

class SubgraphPlan;

struct ExecutionPlan {
  const Graph* graph = nullptr;
  std::vector<const KernelRegistration*> registrations;  // per node
  std::vector<KernelInfo> infos;                         // per node
  std::vector<std::unique_ptr<Kernel>> kernels;          // per node; null when creation failed (folding only)
  std::vector<ProfiledNode> profiled;                    // per node
  // Per value id: the constant (initializers that feeds cannot replace, folded
  // values) or None; constants are read from here and never copied into frames.
  std::vector<Value> constants;
  std::vector<bool> is_constant;
  // Per node: the values whose last reader it is (or that it produces and no one
  // reads); graph outputs are never released.
  std::vector<std::vector<int>> release_after;
  std::vector<bool> is_graph_output;  // per value id
  // Subgraphs: per graph->outer_ids[i], the id of the same name in the enclosing graph.
  std::vector<int> outer_source_ids;
  // The outer values a frame copies in when it starts, as (id here, id in the enclosing
  // frame): those that are not constants of the enclosing plan. Outer constants are
  // constants of this plan too (shared tensors), so their kernels see them at creation
  // (a Gemm in an If branch prepacks its outer-scope weight) and no frame copies them.
  std::vector<std::pair<int, int>> outer_bindings;
  // The bodies of this graph's control-flow nodes.
  std::vector<std::unique_ptr<SubgraphPlan>> bodies;

  size_t num_values() const { return graph->value_names.size(); }
};

struct PlanOptions {
  // Constant folding plans nodes one by one and keeps going past nodes whose
  // kernel cannot be created (they stay unfolded); sessions fail on them.
  bool tolerate_kernel_errors = false;
  bool keep_all_values = false;  // no release points (folding reads every output)
};

// Plans `graph` (which must outlive the plan); for subgraphs, `parent` is the enclosing
// graph and `parent_plan` its plan (whose constants the body's outer values may be).
std::unique_ptr<ExecutionPlan> build_plan(const Graph& graph, const SessionOptions& options,
                                          const PlanOptions& plan_options = {}, const Graph* parent = nullptr,
                                          const ExecutionPlan* parent_plan = nullptr);

// A planned If/Loop/Scan body, as a control-flow kernel sees it.
class SubgraphPlan : public Subgraph {
 public:
  SubgraphPlan(std::shared_ptr<const Graph> graph, const Graph& parent, const ExecutionPlan& parent_plan,
               const SessionOptions& options);
  size_t num_inputs() const override { return graph_->input_ids.size(); }
  size_t num_outputs() const override { return graph_->output_ids.size(); }
  const std::string& input_name(size_t i) const override { return graph_->inputs.at(i).name; }
  const std::string& output_name(size_t i) const override { return graph_->outputs.at(i).name; }
  DType input_dtype(size_t i) const override { return graph_->inputs.at(i).dtype; }
  const ValueInfo& output_info(size_t i) const override { return graph_->outputs.at(i); }
  void run(KernelContext& ctx, const std::vector<Value>& inputs, std::vector<Value>& outputs) const override;
  const ExecutionPlan& plan() const { return *plan_; }

 private:
  std::shared_ptr<const Graph> graph_;
  std::unique_ptr<ExecutionPlan> plan_;
};

}  // namespace onnxmini
