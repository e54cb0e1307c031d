// onnxmini optimize MODEL -o OUT.onnx [--level N] [--report]: applies the optimizer's
// rules of level N (default 99, all) and saves the result as plain ONNX (rewrites with no
// ONNX op are saved as the original nodes; docs/optimizer.md). --report lists every
// rewrite with the nodes it touched, then the count per rule.
#include <fmt/format.h>

#include <iostream>
#include <map>

#include "onnxmini/onnxmini.h"
#include "tools/onnxmini/commands.h"

using namespace onnxmini;

namespace onnxmini_cli {
namespace {

struct OptimizeArgs {
  std::string model, output;
  int level = ORT_ENABLE_ALL;
  bool report = false;
};

int optimize_command(const OptimizeArgs& a) {
  if (a.level < 0)
    throw Error(ErrorCode::InvalidArgument, fmt::format("--level must be 0, 1, 2, 3 or 99, got {}", a.level));
  SessionOptions opts;
  opts.graph_optimization_level = a.level;
  opts.optimized_model_filepath = a.output;
  const size_t before = describe_model(a.model).nodes.size();
  auto session = Session::load(a.model, opts);
  const size_t saved = describe_model(a.output).nodes.size();
  const size_t running = session->describe().nodes.size();
  std::cout << fmt::format("{}: {} nodes -> {} nodes saved to {} (level {}; {} nodes run in onnxmini)\n", a.model,
                           before, saved, a.output, a.level, running);
  if (!a.report) return 0;
  std::map<std::string, int> per_rule;
  std::map<std::string, bool> onnx_form;
  for (const GraphRuleInfo& r : graph_optimization_rules()) onnx_form[r.name] = r.saved_as_onnx;
  std::cout << fmt::format("\nrewrites ({}):\n", session->graph_rewrites().size());
  for (const GraphRewrite& r : session->graph_rewrites()) {
    ++per_rule[r.rule];
    std::cout << fmt::format("  {:<24} {}{}\n", r.rule, r.nodes, onnx_form[r.rule] ? "" : "  [onnxmini only: not saved]");
  }
  std::cout << "\nper rule:\n";
  for (const auto& [rule, count] : per_rule) std::cout << fmt::format("  {:<24} {}\n", rule, count);
  return 0;
}

CommandRegistrar reg("optimize", [](CLI::App& app) -> std::function<int()> {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* sub = app.add_subcommand("optimize", "Optimize a model and save it as plain ONNX (docs/optimizer.md)");
  sub->add_option("model", args->model, "ONNX model file")->required();
  sub->add_option("-o,--output", args->output, "where to write the optimized model")->required();
  sub->add_option("--level", args->level, "0 none, 1 basic, 2 extended, 3 layout, 99 all (default)");
  sub->add_flag("--report", args->report, "list every rewrite with the nodes it touched, and the count per rule");
  return [args]() { return optimize_command(*args); };
});

}  // namespace
}  // namespace onnxmini_cli
