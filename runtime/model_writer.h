// Graph -> plain ONNX ModelProto: what SessionOptions::optimized_model_filepath and
// `onnxmini optimize` save. Nodes are written in execution order with their
// attributes and subgraphs; constants (initializers, folded Constant nodes, weights
// made by fusions) become initializers; overridable initializers stay graph inputs;
// opset imports, declared types (inputs, outputs, value_info of values still in the
// graph) and the model's metadata are kept.
//
// Only ONNX is written: a node carrying one of onnxmini's private fused attributes
// (kernels/fused_attributes.h) has no ONNX form, and writing it is an error naming
// the node. The optimizer therefore saves the graph as it was before the first rule
// that makes such nodes (runtime/graph_optimizer.h). One exception, as onnxruntime's
// own saved models: a Conv with a fused Relu / Sigmoid / Clip is written as
// onnxruntime's contrib op com.microsoft FusedConv (attributes activation and
// activation_params; a fused residual Z as its 4th input), which the model loader reads
// back into the same fused Conv.
#pragma once
#include <string>

#include "runtime/graph.h"

namespace onnxmini {

// The serialized ModelProto of `g`.
std::string write_model(const Graph& g);

// write_model(g) into `path`; errors (a folder that does not exist, a full disk) name the path.
void save_model(const Graph& g, const std::string& path);

}  // namespace onnxmini
