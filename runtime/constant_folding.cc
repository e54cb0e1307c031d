#include "runtime/constant_folding.h"

#include <fmt/format.h>

#include <set>

#include "core/logging.h"
#include "kernels/gemm_engine/gemm.h"
#include "runtime/node_kernel.h"

namespace onnxmini {
namespace {

// Ops whose output is not a function of their inputs.
bool nondeterministic(const GraphNode& n) {
  static const std::set<std::string> ops = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                            "RandomUniformLike", "Multinomial", "Bernoulli"};
  return ops.count(n.op_type) != 0;
}

bool all_inputs_constant(const Graph& g, const GraphNode& n) {
  bool any = false;
  for (int id : n.inputs) {
    if (id < 0) continue;
    if (!g.constants.count(id) || g.overridable.count(id)) return false;
    any = true;
  }
  return any;
}

std::string label(const GraphNode& n) { return fmt::format("{} '{}'", n.op_type, n.name); }

// Runs `node` on its constant inputs; true with `out` filled when it produced
// tensors within the size limit. Says why not at verbosity 1.
bool evaluate(const Graph& g, const GraphNode& node, const SessionOptions& options, const Logger& log,
              std::vector<Value>& out) {
  const KernelRegistration* reg = KernelRegistry::instance().find(node.domain, node.op_type, node.opset);
  if (!reg) return false;  // the session reports the unsupported op
  const KernelInfo info = make_kernel_info(g, node, options);
  std::vector<Value> in_values;
  in_values.reserve(node.inputs.size());
  for (int id : node.inputs) in_values.push_back(id >= 0 ? Value(g.constants.at(id)) : Value());
  std::vector<const Value*> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) inputs.push_back(node.inputs[i] >= 0 ? &in_values[i] : nullptr);
  out.assign(node.outputs.size(), Value());
  const KernelContext::Allocator allocate = [](DType dt, const Shape& shape) { return Tensor(dt, shape); };
  const KernelContext::BoundOutput unbound;
  try {
    auto kernel = create_kernel(*reg, info);
    KernelContext ctx(info, inputs, out, allocate, nullptr, &gemm::engine(options.gemm, options.kernels), unbound);
    kernel->prepare(ctx);
    kernel->compute(ctx);
  } catch (const Error& e) {
    ONNXMINI_VLOG(log, 1, "constant folding: {} not folded, its kernel failed: {}", label(node), e.what());
    return false;
  }
  size_t bytes = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (node.outputs[i] < 0) continue;
    if (!out[i].is_tensor()) return false;
    bytes += out[i].tensor().nbytes();
  }
  if (bytes <= kMaxFoldedBytes) return true;
  ONNXMINI_VLOG(log, 1, "constant folding: {} not folded, its outputs take {} bytes (limit {})", label(node), bytes,
                kMaxFoldedBytes);
  return false;
}

}  // namespace

std::vector<std::string> fold_constants(Graph& g, const SessionOptions& options, const Logger& log) {
  std::vector<std::string> folded;
  std::vector<GraphNode> kept;
  std::vector<Value> out;
  for (GraphNode& node : g.nodes) {
    if (nondeterministic(node) || !all_inputs_constant(g, node) || !evaluate(g, node, options, log, out)) {
      kept.push_back(std::move(node));
      continue;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const int id = node.outputs[i];
      if (id < 0) continue;
      g.constants[id] = out[i].tensor();
      g.known_dtypes[id] = out[i].tensor().dtype();
    }
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
  g.nodes = std::move(kept);
  if (!folded.empty()) ONNXMINI_LOG(log, Info, "constant folding: {} node(s) folded", folded.size());
  return folded;
}

size_t drop_unused_constants(Graph& g, const Logger& log) {
  std::vector<bool> used(g.value_names.size(), false);
  for (const GraphNode& n : g.nodes)
    for (int id : n.inputs)
      if (id >= 0) used[id] = true;
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

}  // namespace onnxmini
