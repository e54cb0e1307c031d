#include "runtime/graph_pass.h"

#include <string>
#include <utility>

namespace onnxmini {

FusionPass::FusionPass(RuleContext& c) : ctx(c), g(c.g), removed(c.g.nodes.size(), false) { count_uses(); }

void FusionPass::count_uses() {
  uses.assign(g.value_names.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!removed[i]) {
      for (int id : g.nodes[i].inputs)
        if (id >= 0) ++uses[id];
      for (int id : g.nodes[i].implicit_inputs) ++uses[id];
    }
  for (int id : g.output_ids) ++uses[id];
}

const Tensor* FusionPass::constant(int id) const {
  if (id < 0 || g.overridable.count(id)) return nullptr;
  auto it = g.constants.find(id);
  return it == g.constants.end() ? nullptr : &it->second;
}

bool FusionPass::per_channel_values(int id, size_t rank, int64_t channels, std::vector<float>& out) const {
  const Tensor* t = constant_f32(id);
  if (!t || t->rank() > rank || channels < 1) return false;
  const int64_t ch_axis = 1 - static_cast<int64_t>(rank - t->rank());
  for (size_t d = 0; d < t->rank(); ++d)
    if (static_cast<int64_t>(d) != ch_axis && t->dim(d) != 1) return false;
  const int64_t n = t->numel();
  if (n != 1 && n != channels) return false;
  out.resize(static_cast<size_t>(channels));
  for (int64_t m = 0; m < channels; ++m) out[m] = t->data<float>()[n == 1 ? 0 : m];
  return true;
}

GraphNode FusionPass::onnxmini_node(const GraphNode& at, const char* op_type) {
  GraphNode n;
  n.name = at.name;
  n.op_type = op_type;
  n.domain = "ai.onnxmini";
  n.opset = 1;
  n.index = at.index;
  return n;
}

int FusionPass::add_constant(const std::string& base, Tensor t) {
  std::string name = base;
  for (int k = 1; g.value_ids.count(name); ++k) name = base + "_" + std::to_string(k);
  const int id = static_cast<int>(g.value_names.size());
  g.value_names.push_back(name);
  g.value_ids[name] = id;
  g.known_dtypes[id] = t.dtype();
  g.constants[id] = std::move(t);
  uses.push_back(0);
  return id;
}

const Tensor* FusionPass::constant_f32(int id) const {
  const Tensor* t = constant(id);
  return t && t->dtype() == DType::Float32 ? t : nullptr;
}

int FusionPass::producer(int id) const {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!removed[i])
      for (int o : g.nodes[i].outputs)
        if (o == id) return static_cast<int>(i);
  return -1;
}

int FusionPass::sole_consumer(int id) const {
  if (id < 0 || uses[id] != 1) return -1;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!removed[i])
      for (int in : g.nodes[i].inputs)
        if (in == id) return static_cast<int>(i);
  return -1;
}

void FusionPass::compact() {
  std::vector<GraphNode> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

}  // namespace onnxmini
