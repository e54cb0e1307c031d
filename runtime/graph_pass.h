// The bookkeeping every fusion pass of the optimizer shares (graph_fusion.cc,
// graph_fusion_qdq.cc, graph_fusion_norm.cc): which nodes a rule has fused away, how
// many uses each value has, the constants a rule may fold, and the final compaction
// that drops the fused-away nodes while the rest keep their order.
#pragma once
#include <string>
#include <vector>

#include "runtime/graph_optimizer.h"

namespace onnxmini {

struct FusionPass {
  RuleContext& ctx;
  Graph& g;
  std::vector<bool> removed;  // per node: fused away (dropped by compact())
  std::vector<int> uses;      // per value id: node-input and implicit-input (subgraph) uses + 1 per graph output

  explicit FusionPass(RuleContext& c);

  // Recomputes `uses` over the live nodes (after a rule rewired some).
  void count_uses();
  // The constant behind value id, or nullptr (overridable initializers are not constant).
  const Tensor* constant(int id) const;
  // The same, when it is float32.
  const Tensor* constant_f32(int id) const;
  // The live node producing `id`, or -1.
  int producer(int id) const;
  // The one live node reading `id` as an input, when `id` has exactly that use (-1 otherwise,
  // also when the one use is a graph output).
  int sole_consumer(int id) const;
  // `id` as one value per channel of a rank-`rank` tensor with `channels` channels on axis 1:
  // a float32 constant broadcasting along that axis only (one element, [C, 1, 1], [1, C, 1, 1],
  // ...: right-aligned, every dimension 1 but the one facing axis 1) and not widening the rank.
  bool per_channel_values(int id, size_t rank, int64_t channels, std::vector<float>& out) const;
  // A node of onnxmini's own domain (ai.onnxmini, opset 1) replacing `at`: its name, and its
  // index in the model (onnxruntime's node_index in a trace).
  static GraphNode onnxmini_node(const GraphNode& at, const char* op_type);
  // A new constant value named `base` (or base_1, base_2, ... when taken), with no use yet.
  int add_constant(const std::string& base, Tensor t);
  // Drops the nodes marked in `removed`.
  void compact();
};

}  // namespace onnxmini
