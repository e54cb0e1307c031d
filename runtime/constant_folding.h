// Constant folding, at graph_optimization_level >= 1 (as onnxruntime's basic
// level): a node whose every input is a constant (an initializer that feeds
// cannot replace, or an earlier folded value) is run once at session creation
// with its own kernel, by the executor (the candidates are planned as one graph
// and run node by node), and its outputs become constants. Concat(W1, W2) feeding
// a Gemm thus becomes one constant weight that the Gemm can prepack.
//
// Not folded: nodes without inputs, random ops, control-flow nodes (If/Loop/Scan:
// their bodies may read values that are not constant), nodes whose outputs are not
// tensors or exceed kMaxFoldedBytes in total, and nodes whose kernel fails
// (they stay in the graph and report their error when the model runs).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "onnxmini/session.h"
#include "runtime/graph.h"

namespace onnxmini {

class Logger;

constexpr size_t kMaxFoldedBytes = size_t(64) << 20;

// Folds in place; returns "Op 'name'" for each folded node, in order. Logs each
// fold (verbose), why a candidate was not folded (verbosity 1) and the count (info).
std::vector<std::string> fold_constants(Graph& g, const SessionOptions& options, const Logger& log);

// The same inside the bodies of g's If/Loop/Scan nodes, nested to any depth
//: a body node is foldable when its inputs are the
// body's constants, folded values, or non-overridable constants of an enclosing
// graph (as onnxruntime folds subgraphs). Otherwise a body would redo the work on
// every execution (silero_vad's If branches reorder LSTM weights with Slice and
// Concat). Bodies are replaced by folded copies; the node's implicit inputs and the
// body's outer values shrink to what is still read. Returns "Op 'name' (in body
// 'b')" for each folded node.
std::vector<std::string> fold_subgraph_constants(Graph& g, const SessionOptions& options, const Logger& log);

// Removes constants that no node reads and that are not graph outputs or
// overridable initializers (after folding and fusions: Concat's W1 and W2 once
// the folded W exists, a Conv's filter once BatchNormalization was folded into
// a new one), so their memory is released and weight_bytes counts what runs.
// Returns the number removed; logs each (verbosity 1) and the total (info).
size_t drop_unused_constants(Graph& g, const Logger& log);

}  // namespace onnxmini
