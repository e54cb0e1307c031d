#include "runtime/constant_folding.h"

#include <fmt/format.h>

#include <set>

#include "kernels/gemm_engine/gemm.h"
#include "runtime/executor.h"

namespace onnxmini {
namespace {

// Ops whose output is not a function of their inputs.
bool nondeterministic(const GraphNode& n) {
  static const std::set<std::string> ops = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                            "RandomUniformLike", "Multinomial", "Bernoulli"};
  return ops.count(n.op_type) != 0;
}

}  // namespace

std::vector<std::string> fold_constants(Graph& g, const SessionOptions& options) {
  // Candidates, in execution order: every input a constant or a candidate's output.
  std::vector<bool> available(g.value_names.size(), false);
  for (const auto& [id, t] : g.constants)
    if (!g.overridable.count(id)) available[id] = true;
  Graph candidates;
  candidates.value_names = g.value_names;
  candidates.value_ids = g.value_ids;
  candidates.constants = g.constants;
  candidates.overridable = g.overridable;
  candidates.known_dtypes = g.known_dtypes;
  for (const GraphNode& node : g.nodes) {
    bool foldable = !nondeterministic(node) && node.subgraphs.empty();
    bool any_input = false;
    for (int id : node.inputs) {
      if (id < 0) continue;
      any_input = true;
      foldable = foldable && available[id];
    }
    if (!foldable || !any_input) continue;
    for (int id : node.outputs)
      if (id >= 0) available[id] = true;
    candidates.nodes.push_back(node);
  }
  if (candidates.nodes.empty()) return {};

  // One plan, run node by node: a node whose kernel cannot be created or fails
  // stays unfolded, and so do the nodes reading its outputs.
  PlanOptions po;
  po.tolerate_kernel_errors = true;
  po.keep_all_values = true;
  const auto plan = build_plan(candidates, options, po);
  const KernelContext::Allocator allocate = [](DType dt, const Shape& shape) { return Tensor(dt, shape); };
  RunState state;
  state.allocator = &allocate;
  state.gemm = &gemm::engine(options.gemm, options.kernels);
  ExecutionScope frame(*plan, state);
  std::vector<bool> folded_value(g.value_names.size(), false);
  for (const auto& [id, t] : g.constants)
    if (!g.overridable.count(id)) folded_value[id] = true;
  std::set<int> folded_nodes;  // node indices
  std::vector<std::string> folded;
  for (size_t k = 0; k < candidates.nodes.size(); ++k) {
    const GraphNode& node = candidates.nodes[k];
    bool ready = plan->kernels[k] != nullptr;
    for (int id : node.inputs) ready = ready && (id < 0 || folded_value[id]);
    if (!ready) continue;
    try {
      frame.run_node(k);
    } catch (const Error&) {
      continue;
    }
    size_t bytes = 0;
    bool tensors = true;
    for (int id : node.outputs) {
      if (id < 0) continue;
      tensors = tensors && frame.value(id).is_tensor();
      if (tensors) bytes += frame.value(id).tensor().nbytes();
    }
    if (!tensors || bytes > kMaxFoldedBytes) continue;
    for (int id : node.outputs) {
      if (id < 0) continue;
      g.constants[id] = frame.value(id).tensor();
      g.known_dtypes[id] = frame.value(id).tensor().dtype();
      folded_value[id] = true;
    }
    folded_nodes.insert(node.index);
    folded.push_back(fmt::format("{} '{}'", node.op_type, node.name));
  }
  std::vector<GraphNode> kept;
  for (GraphNode& node : g.nodes)
    if (!folded_nodes.count(node.index)) kept.push_back(std::move(node));
  g.nodes = std::move(kept);
  return folded;
}

size_t drop_unused_constants(Graph& g) {
  std::vector<bool> used(g.value_names.size(), false);
  for (const GraphNode& n : g.nodes) {
    for (int id : n.inputs)
      if (id >= 0) used[id] = true;
    for (int id : n.implicit_inputs) used[id] = true;  // read by a subgraph
  }
  for (int id : g.output_ids) used[id] = true;
  size_t dropped = 0;
  for (auto it = g.constants.begin(); it != g.constants.end();) {
    if (used[it->first] || g.overridable.count(it->first)) {
      ++it;
    } else {
      it = g.constants.erase(it);
      ++dropped;
    }
  }
  return dropped;
}

}  // namespace onnxmini
