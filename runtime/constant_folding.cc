#include "runtime/constant_folding.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_set>

#include "core/logging.h"
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

// A DequantizeLinear of constant quantized data stays a node, as in onnxruntime's constant
// folding: folded, it would turn int8 weights into float ones and hide the QDQ node unit from
// the qdq_to_qlinear rule (runtime/graph_fusion_qdq.h), which runs it on integer kernels.
bool keeps_qdq_unit(const GraphNode& n) { return n.domain.empty() && n.op_type == "DequantizeLinear"; }

std::string label(const GraphNode& n) { return fmt::format("{} '{}'", n.op_type, n.name); }

}  // namespace

std::vector<std::string> fold_constants(Graph& g, const SessionOptions& options, const Logger& log) {
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
    bool foldable = !nondeterministic(node) && !keeps_qdq_unit(node) && node.subgraphs.empty();
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
    } catch (const Error& e) {
      ONNXMINI_VLOG(log, 1, "constant folding: {} not folded, its kernel failed: {}", label(node), e.what());
      continue;
    }
    size_t bytes = 0;
    bool tensors = true;
    for (int id : node.outputs) {
      if (id < 0) continue;
      tensors = tensors && frame.value(id).is_tensor();
      if (tensors) bytes += frame.value(id).tensor().nbytes();
    }
    if (!tensors) continue;
    if (bytes > kMaxFoldedBytes) {
      ONNXMINI_VLOG(log, 1, "constant folding: {} not folded, its outputs take {} bytes (limit {})", label(node),
                    bytes, kMaxFoldedBytes);
      continue;
    }
    for (int id : node.outputs) {
      if (id < 0) continue;
      g.constants[id] = frame.value(id).tensor();
      g.known_dtypes[id] = frame.value(id).tensor().dtype();
      folded_value[id] = true;
    }
    folded_nodes.insert(node.index);
    folded.push_back(label(node));
    if (log.verbose_enabled(0)) {
      std::string values;
      for (int id : node.outputs)
        if (id >= 0)
          values += fmt::format("{}'{}' {} {}", values.empty() ? "" : ", ", g.value_names[id],
                                dtype_name(g.constants[id].dtype()), shape_to_string(g.constants[id].shape()));
      log.log(LogSeverity::Verbose, "constant folding: folded {} into {}", folded.back(), values);
    }
  }
  std::vector<GraphNode> kept;
  for (GraphNode& node : g.nodes)
    if (!folded_nodes.count(node.index)) kept.push_back(std::move(node));
  g.nodes = std::move(kept);
  if (!folded.empty()) ONNXMINI_LOG(log, Info, "constant folding: {} node(s) folded", folded.size());
  return folded;
}

size_t drop_unused_constants(Graph& g, const Logger& log) {
  std::vector<bool> used(g.value_names.size(), false);
  for (const GraphNode& n : g.nodes) {
    for (int id : n.inputs)
      if (id >= 0) used[id] = true;
    for (int id : n.implicit_inputs) used[id] = true;  // read by a subgraph
  }
  for (int id : g.output_ids) used[id] = true;
  size_t dropped = 0, bytes = 0;
  for (auto it = g.constants.begin(); it != g.constants.end();) {
    if (used[it->first] || g.overridable.count(it->first)) {
      ++it;
    } else {
      ONNXMINI_VLOG(log, 1, "dropped unused constant '{}' ({} bytes)", g.value_names[it->first], it->second.nbytes());
      bytes += it->second.nbytes();
      it = g.constants.erase(it);
      ++dropped;
    }
  }
  if (dropped) ONNXMINI_LOG(log, Info, "dropped {} constant(s) no node reads ({} bytes)", dropped, bytes);
  return dropped;
}

// Bodies (fold_subgraph_constants). A body sees the enclosing graph's constants by
// name (outer-scope values). For the fold they are lent to a copy of the body as
// constants of its own, the body is folded like a main graph (same kernels, so the
// same bits), its own bodies are folded in turn, and the lent constants are taken
// back: the body keeps only what it still reads from outside, and the node's
// implicit inputs shrink to match, so the enclosing graph can drop weights that
// only fed folded nodes.
namespace {

// The values `g` reads: node inputs, nodes' implicit inputs, graph outputs.
std::vector<bool> read_values(const Graph& g) {
  std::vector<bool> read(g.value_names.size(), false);
  for (const GraphNode& n : g.nodes) {
    for (int id : n.inputs)
      if (id >= 0) read[id] = true;
    for (int id : n.implicit_inputs) read[id] = true;
  }
  for (int id : g.output_ids) read[id] = true;
  return read;
}

void fold_bodies_of(Graph& g, const SessionOptions& options, const Logger& log, std::vector<std::string>& folded);

// A folded copy of `body`, which reads outer values from `parent`.
std::shared_ptr<const Graph> fold_body(const Graph& parent, const Graph& body, const SessionOptions& options,
                                       const Logger& log, std::vector<std::string>& folded) {
  auto copy = std::make_shared<Graph>(body);  // tensors share their buffers
  // Lend the parent's constants (never the overridable ones: feeds may replace them).
  std::vector<int> lent;
  std::unordered_set<int> had_dtype;
  for (int id : copy->outer_ids) {
    const int pid = parent.value_id(copy->value_names[id]);
    if (pid < 0 || parent.overridable.count(pid)) continue;
    auto c = parent.constants.find(pid);
    if (c == parent.constants.end() || copy->constants.count(id)) continue;
    copy->constants.emplace(id, c->second);
    if (copy->known_dtypes.count(id)) had_dtype.insert(id);
    else copy->known_dtypes[id] = c->second.dtype();
    lent.push_back(id);
  }
  const size_t before = folded.size();
  for (std::string& node : fold_constants(*copy, options, log))
    folded.push_back(fmt::format("{} (in body '{}')", node, copy->graph_name));
  fold_bodies_of(*copy, options, log, folded);  // nested bodies see the lent and the folded constants
  for (int id : lent) {
    copy->constants.erase(id);
    if (!had_dtype.count(id)) copy->known_dtypes.erase(id);
  }
  if (folded.size() == before) return nullptr;  // nothing changed: keep the original body
  drop_unused_constants(*copy, log);            // initializers that only fed folded nodes
  // Outer values nothing reads any more are no longer outer values.
  const std::vector<bool> read = read_values(*copy);
  copy->outer_ids.erase(std::remove_if(copy->outer_ids.begin(), copy->outer_ids.end(), [&](int id) { return !read[id]; }),
                        copy->outer_ids.end());
  return copy;
}

void fold_bodies_of(Graph& g, const SessionOptions& options, const Logger& log, std::vector<std::string>& folded) {
  for (GraphNode& node : g.nodes) {
    if (node.subgraphs.empty()) continue;
    bool changed = false;
    for (auto& [attr, body] : node.subgraphs)
      if (auto copy = fold_body(g, *body, options, log, folded)) {
        body = std::move(copy);
        changed = true;
      }
    if (!changed) continue;
    // The node's implicit inputs: what its bodies still read from outside, by name.
    std::unordered_set<std::string> still_read;
    for (const auto& [attr, body] : node.subgraphs)
      for (int id : body->outer_ids) still_read.insert(body->value_names[id]);
    auto& implicit = node.implicit_inputs;
    implicit.erase(std::remove_if(implicit.begin(), implicit.end(),
                                  [&](int id) { return !still_read.count(g.value_names[id]); }),
                   implicit.end());
  }
}

}  // namespace

std::vector<std::string> fold_subgraph_constants(Graph& g, const SessionOptions& options, const Logger& log) {
  std::vector<std::string> folded;
  fold_bodies_of(g, options, log, folded);
  return folded;
}

}  // namespace onnxmini
