// onnxmini info MODEL: opsets, inputs, initializers, nodes in execution order, outputs.
// onnxmini info MODEL --kernels: per node of the graph that runs, the kernel and the
// path it takes for the declared shapes (Session::explain; nothing runs).
#include <fmt/format.h>

#include <iostream>

#include "onnxmini/onnxmini.h"
#include "tools/onnxmini/commands.h"
#include "tools/onnxmini/explain_report.h"

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

struct KernelsArgs {
  bool kernels = false, json = false;
  int optimize = ORT_ENABLE_ALL, threads = 1;
  std::string gemm = "builtin";
};

// Declared shapes and constants only: nodes whose path depends on shapes that
// are known only at run time say so (`run --explain` observes them).
int kernels_command(const std::string& model, const KernelsArgs& a) {
  SessionOptions opts;
  opts.graph_optimization_level = a.optimize;
  opts.intra_op_num_threads = a.threads;
  opts.gemm = gemm_backend_from_string(a.gemm);
  auto session = Session::load(model, opts);
  ExplainHeader h;
  h.model = model;
  h.optimization_level = a.optimize;
  h.rewrites = session->graph_rewrites();
  h.shapes_from = "declared input shapes and constants; nothing ran (`onnxmini run MODEL --explain` observes them)";
  h.kernels = "fast";
  h.gemm = a.gemm;
  const std::vector<KernelExplanation> rows = session->explain();
  h.threads = rows.empty() ? a.threads : rows.front().threads;
  std::cout << (a.json ? explain_json(h, rows) + "\n" : explain_text(h, rows));
  return 0;
}

CommandRegistrar reg("info", [](CLI::App& app) -> std::function<int()> {
  auto model = std::make_shared<std::string>();
  auto args = std::make_shared<KernelsArgs>();
  CLI::App* sub = app.add_subcommand("info", "Print a readable view of a model");
  sub->add_option("model", *model, "ONNX model file")->required();
  sub->add_flag("--kernels", args->kernels,
                "per node: kernel, variant, ISA, blocking and threads for the declared shapes (nothing runs)");
  sub->add_option("--optimize,--graph-optimization-level", args->optimize,
                  "with --kernels: optimizer level of the session explained (default 99, all)");
  sub->add_option("--threads", args->threads, "with --kernels: intra-op threads (default 1; 0 = all cores)");
  sub->add_option("--gemm", args->gemm, "with --kernels: GEMM backend: builtin, openblas, eigen");
  sub->add_flag("--json", args->json, "with --kernels: print one JSON object");
  return [model, args]() { return args->kernels ? kernels_command(*model, *args) : info_command(*model); };
});

}  // namespace
}  // namespace onnxmini_cli
