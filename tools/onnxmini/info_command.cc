// onnxmini info MODEL: opsets, inputs, initializers, nodes in execution order, outputs.
#include <fmt/format.h>

#include <iostream>

#include "onnxmini/onnxmini.h"
#include "tools/onnxmini/commands.h"

using namespace onnxmini;

namespace onnxmini_cli {
namespace {

std::string shape_text(const ValueInfo& v) {
  if (!v.has_shape) return "shape unknown";
  std::vector<std::string> dims;
  for (const Dim& d : v.shape) dims.push_back(d.value >= 0 ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param));
  return "[" + fmt::format("{}", fmt::join(dims, ", ")) + "]";
}

int info_command(const std::string& model) {
  ModelDescription d = describe_model(model);
  std::cout << fmt::format("model: {}\n", model);
  std::cout << fmt::format("ir_version: {}  producer: {} {}  graph: {}\n", d.ir_version, d.producer_name,
                           d.producer_version, d.graph_name);
  std::cout << "opsets:";
  for (const auto& [dom, ver] : d.opsets) std::cout << fmt::format(" {}={}", dom.empty() ? "ai.onnx" : dom, ver);
  std::cout << "\n\ninputs:\n";
  for (const auto& v : d.inputs) std::cout << fmt::format("  {}: {} {}\n", v.name, v.type, shape_text(v));
  std::cout << fmt::format("\ninitializers ({}, {} bytes):\n", d.initializers.size(), d.weight_bytes);
  for (const auto& i : d.initializers)
    std::cout << fmt::format("  {}: {} [{}]\n", i.name, dtype_name(i.dtype), fmt::join(i.shape, ", "));
  std::cout << fmt::format("\nnodes ({}, execution order):\n", d.nodes.size());
  for (size_t k = 0; k < d.nodes.size(); ++k) {
    const auto& n = d.nodes[k];
    std::cout << fmt::format("  [{}] {} '{}'{} opset {}: ({}) -> ({})  kernel: {}\n", k, n.op_type, n.name,
                             n.domain.empty() ? "" : " domain=" + n.domain, n.opset, fmt::join(n.inputs, ", "),
                             fmt::join(n.outputs, ", "), n.kernel);
    for (const auto& [name, value] : n.attributes) std::cout << fmt::format("      {} = {}\n", name, value);
  }
  std::cout << "\noutputs:\n";
  for (const auto& v : d.outputs) std::cout << fmt::format("  {}: {} {}\n", v.name, v.type, shape_text(v));
  return 0;
}

CommandRegistrar reg("info", [](CLI::App& app) -> std::function<int()> {
  auto model = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("info", "Print a readable view of a model");
  sub->add_option("model", *model, "ONNX model file")->required();
  return [model]() { return info_command(*model); };
});

}  // namespace
}  // namespace onnxmini_cli
