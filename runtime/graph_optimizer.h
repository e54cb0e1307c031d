// The graph optimizer: a table of rules (name, level, function) applied in table
// order to the loaded graph, before kernels are created, for every rule whose level
// is at most SessionOptions::graph_optimization_level (onnxruntime's levels:
// include/onnxmini/session.h). docs/optimizer.md describes each rule.
//
// Rules whose result is plain ONNX (eliminations, folding, Conv+BN weight folding,
// MatMul+Add -> Gemm, ...) come first in the table; the rules that hand work to a
// kernel through onnxmini's private attributes (kernels/fused_attributes.h) come last.
// So the graph just before the first of those is the best model that can be saved as
// ONNX: optimize_graph copies it out for SessionOptions::optimized_model_filepath.
#pragma once
#include <string>
#include <vector>

#include "onnxmini/session.h"
#include "runtime/graph.h"

namespace onnxmini {

class Logger;

// What one rule sees: the graph, the session's options, and where to record its rewrites.
struct RuleContext {
  Graph& g;
  const SessionOptions& options;
  const Logger& log;
  std::vector<GraphRewrite>& rewrites;

  // Records one rewrite (and logs it at verbose level): `nodes` names the nodes touched.
  void applied(const char* rule, std::string nodes);
};

using RuleFunction = void (*)(RuleContext&);

struct GraphRule {
  const char* name;
  int level;           // lowest GraphOptimizationLevel applying it
  bool saved_as_onnx;  // its result is plain ONNX (see above)
  RuleFunction run;
  const char* pattern;  // for the docs and --report
};

// The table, in application order (graph_optimizer.cc).
const std::vector<GraphRule>& graph_rules();

// Applies the rules of `options.graph_optimization_level` to `g`, then drops the
// constants no node reads. When `onnx_snapshot` is given, it receives the graph as it
// was before the first rule that is not saved as ONNX (with its unused constants
// dropped too): the model optimized_model_filepath saves. `only` (tests): apply just
// the rules named there, whatever the level.
std::vector<GraphRewrite> optimize_graph(Graph& g, const SessionOptions& options, const Logger& log,
                                         Graph* onnx_snapshot = nullptr, const std::vector<std::string>* only = nullptr);

}  // namespace onnxmini
