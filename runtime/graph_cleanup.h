// The basic rules of the optimizer (level 1, onnxruntime's ORT_ENABLE_BASIC; the
// table is in graph_optimizer.cc). Each keeps the graph plain ONNX and every value
// bit for bit: a rule removes a node only when its output equals one of its inputs
// (or a composition it writes as one node), so results do not change at all.
//
//   eliminate_identity     Identity(x)                         -> x
//   eliminate_dropout      Dropout(x) in inference, mask unused -> x
//   eliminate_noop_cast    Cast(x, to = x's known type)        -> x
//   eliminate_noop_reshape Reshape(x, s) with s = x's declared fixed shape -> x
//   collapse_reshapes      Reshape(Reshape(x, s1), s2), s2 without 0 -> Reshape(x, s2)
//   cancel_transposes      Transpose(Transpose(x, p1), p2): p1 then p2 the identity -> x,
//                          otherwise one Transpose(x, p1 o p2); identity perm -> x
//   fold_known_shapes      Shape(x) / Size(x) of a declared fixed shape -> constant (constant
//                          folding then folds the shape arithmetic that reads it)
//   eliminate_dead_nodes   nodes whose outputs nothing reads (not graph outputs)
//
// A node is bypassed only when its output is not read by a subgraph (subgraphs refer
// to outer values by name) and, if it is a graph output, when the input's producer can
// take the output's name instead. Subgraphs (If/Loop/Scan bodies) are not rewritten.
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void eliminate_identity(RuleContext& ctx);
void eliminate_dropout(RuleContext& ctx);
void eliminate_noop_cast(RuleContext& ctx);
void eliminate_noop_reshape(RuleContext& ctx);
void collapse_reshapes(RuleContext& ctx);
void cancel_transposes(RuleContext& ctx);
void fold_known_shapes(RuleContext& ctx);
void eliminate_dead_nodes(RuleContext& ctx);

}  // namespace onnxmini
