#include "runtime/constant_folding.h"

#include <fmt/format.h>

#include <set>

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

// Runs `node` on its constant inputs; true with `out` filled when it produced
// tensors within the size limit.
bool evaluate(const Graph& g, const GraphNode& node, const SessionOptions& options, std::vector<Value>& out) {
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
  } catch (const Error&) {
    return false;
  }
  size_t bytes = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (node.outputs[i] < 0) continue;
    if (!out[i].is_tensor()) return false;
    bytes += out[i].tensor().nbytes();
  }
  return bytes <= kMaxFoldedBytes;
}

}  // namespace

std::vector<std::string> fold_constants(Graph& g, const SessionOptions& options) {
  std::vector<std::string> folded;
  std::vector<GraphNode> kept;
  std::vector<Value> out;
  for (GraphNode& node : g.nodes) {
    if (nondeterministic(node) || !all_inputs_constant(g, node) || !evaluate(g, node, options, out)) {
      kept.push_back(std::move(node));
      continue;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const int id = node.outputs[i];
      if (id < 0) continue;
      g.constants[id] = out[i].tensor();
      g.known_dtypes[id] = out[i].tensor().dtype();
    }
    folded.push_back(fmt::format("{} '{}'", node.op_type, node.name));
  }
  g.nodes = std::move(kept);
  return folded;
}

size_t drop_unused_constants(Graph& g) {
  std::vector<bool> used(g.value_names.size(), false);
  for (const GraphNode& n : g.nodes)
    for (int id : n.inputs)
      if (id >= 0) used[id] = true;
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
