#include "runtime/node_kernel.h"

#include <fmt/format.h>

#include "core/system_memory.h"

namespace onnxmini {

const KernelRegistration& find_kernel(const GraphNode& node) {
  const auto& registry = KernelRegistry::instance();
  if (const KernelRegistration* reg = registry.find(node.domain, node.op_type, node.opset)) return *reg;
  const std::string dom = node.domain.empty() ? "ai.onnx" : node.domain;
  if (registry.knows(node.domain, node.op_type))
    throw Error(ErrorCode::NotImplemented,
                fmt::format("unsupported op: node '{}' op '{}' domain '{}' is not implemented for opset {}", node.name,
                            node.op_type, dom, node.opset));
  throw Error(ErrorCode::NotImplemented,
              fmt::format("unsupported op: node '{}' op '{}' domain '{}' opset {}", node.name, node.op_type, dom, node.opset));
}

KernelInfo make_kernel_info(const Graph& g, const GraphNode& node, const SessionOptions& options) {
  KernelInfo info;
  info.name = node.name;
  info.op_type = node.op_type;
  info.domain = node.domain;
  info.opset = node.opset;
  info.attrs = node.attrs;
  info.num_inputs = node.inputs.size();
  info.num_outputs = node.outputs.size();
  info.gemm = options.gemm;
  info.mode = options.kernels;
  info.max_tensor_bytes = options.max_tensor_bytes > 0 ? options.max_tensor_bytes : memory_limit_bytes();
  info.max_intermediate_bytes = options.max_intermediate_bytes > 0 ? options.max_intermediate_bytes : memory_limit_bytes();
  for (int id : node.inputs) {
    info.input_present.push_back(id >= 0);
    const Tensor* c = nullptr;
    if (id >= 0 && !g.overridable.count(id)) {
      auto it = g.constants.find(id);
      if (it != g.constants.end()) c = &it->second;
    }
    info.constant_inputs.push_back(c);
    auto kd = id >= 0 ? g.known_dtypes.find(id) : g.known_dtypes.end();
    info.input_dtypes.push_back(kd != g.known_dtypes.end() ? kd->second : DType::Undefined);
  }
  for (int id : node.outputs) info.output_present.push_back(id >= 0);
  return info;
}

std::unique_ptr<Kernel> create_kernel(const KernelRegistration& reg, const KernelInfo& info) {
  try {
    return reg.factory(info);
  } catch (const Error& e) {
    std::string msg = e.what();
    const std::string label = info.label();
    if (msg.rfind(label, 0) != 0) msg = label + ": " + msg;
    throw Error(e.code(), msg);
  }
}

}  // namespace onnxmini
